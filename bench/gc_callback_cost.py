#!/usr/bin/python3
"""gc_callback_cost.py [--collections N]: what profopt's garbage-collection spans
(profopt._gc, gc.callbacks) add to each collection they record. Times N generation-1
collections of a small heap three ways: without the callback, with it and the library not
recording (no session), and with it under profopt-record (run this script under
`profopt-record -- /usr/bin/python3 bench/gc_callback_cost.py`). Prints the mean time per
collection of each and the difference. A benchmark, not a test (README, "Costs of the
tracepoints")."""

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tracepoints", "python"))
from profopt import _gc  # noqa: E402
from profopt._api import tracing_enabled  # noqa: E402


def per_collection_us(count):
    started = time.perf_counter()
    for _ in range(count):
        gc.collect(1)
    return (time.perf_counter() - started) / count * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collections", type=int, default=20000)
    args = parser.parse_args()
    keep = [[i] for i in range(1000)]  # a small heap: the collections themselves are short
    per_collection_us(1000)  # warm up
    without = per_collection_us(args.collections)
    os.environ.pop(_gc.ENVIRONMENT, None)
    _gc.install()
    with_callback = per_collection_us(args.collections)
    _gc.uninstall()
    again = per_collection_us(args.collections)
    print(f"tracing {'on' if tracing_enabled() else 'off'}: {args.collections} "
          f"generation-1 collections of {len(keep)} lists: {min(without, again):.2f} us each "
          f"without the callback, {with_callback:.2f} us with it: "
          f"+{with_callback - min(without, again):.2f} us per collection recorded")


if __name__ == "__main__":
    main()
