"""calls.py: what the Python unit tests share: the profopt module of this source tree,
their ok/FAIL lines, and a stand-in that records the libprofopt calls the module makes, to
check what a program's markers record without a recording session."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))

import profopt  # noqa: E402
from profopt import _api, _loader  # noqa: E402

RESULTS = {"passed": 0, "failed": 0}


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + text, flush=True)
    RESULTS["passed" if condition else "failed"] += 1


def finish():
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


class Calls:
    """Stands in for libprofopt in the module: each call is kept as (name, arguments),
    without the "profopt_" prefix, and passed on to the library."""

    def __init__(self, library):
        self.library = library  # the loaded libprofopt (weak)
        self.made = []

    def __getattr__(self, name):
        function = getattr(self.library, name)

        def record(*arguments):
            self.made.append((name.removeprefix("profopt_"), arguments))
            return function(*arguments)
        return record

    def of(self, *names):
        return [(name, arguments) for name, arguments in self.made if name in names]


def recording():
    """Makes the module call a fresh Calls; returns it."""
    calls = Calls(_api.LIB if not isinstance(_api.LIB, Calls) else _api.LIB.library)
    _api.LIB = calls
    _loader.LIB = calls
    return calls
