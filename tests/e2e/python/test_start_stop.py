#!/usr/bin/python3
"""Unit tests of profopt.start and profopt.stop, the form of profopt.run that needs no
re-indentation: they record what the `with` block records, refuse a second start, and a run
still open when the interpreter exits is ended then, with the uncaught exception that ended
the program as its run_ending."""

import os
import subprocess
import sys

import torch
from torch.utils.data import DataLoader

from calls import HERE, check, finish, profopt, recording


def names(calls):
    return [name for name, _ in calls.of("run_begin", "run_end", "run_config")]


def configs(calls):
    return {arguments[0].decode(): arguments[1].decode()
            for _, arguments in calls.of("run_config")}


def test_same_as_with():
    loader = profopt.instrument(DataLoader(torch.arange(8), batch_size=2))
    model = torch.nn.Linear(2, 2)
    calls = recording()
    with profopt.run(loader=loader, model=model, config={"lr": 0.1}):
        pass
    with_block = names(calls), configs(calls)
    calls = recording()
    started = profopt.start(loader=loader, model=model, config={"lr": 0.1})
    check(isinstance(started, profopt.run), "start returns the run")
    profopt.stop()
    check((names(calls), configs(calls)) == with_block,
          f"start and stop record what the with block records ({names(calls)})")


def test_second_start():
    calls = recording()
    profopt.start()
    try:
        profopt.start()
        refused = False
    except RuntimeError as error:
        refused = "already started" in str(error)
    profopt.stop()
    profopt.stop()  # nothing started: nothing recorded
    check(refused, "a second start before stop raises RuntimeError")
    check(names(calls).count("run_begin") == 1 and names(calls).count("run_end") == 1,
          f"one run begins and ends ({names(calls)})")


def child(ending):
    """Run in a child interpreter: starts a run and leaves it open; ending is "exit" (a
    clean end) or "raise" (an uncaught exception). Prints the calls at exit, after
    profopt's own exit handler: exit handlers run last registered first, so profopt's is
    registered again after this one."""
    import atexit
    calls = recording()
    atexit.register(lambda: print("CALLS", names(calls), configs(calls).get("run_ending"),
                                  flush=True))
    atexit.unregister(profopt._at_exit)
    atexit.register(profopt._at_exit)
    profopt.start()
    if ending == "raise":
        raise ValueError("the program failed")


def test_open_at_exit():
    for ending, expected in (("exit", None), ("raise", "exception: ValueError")):
        done = subprocess.run([sys.executable, os.path.join(HERE, "test_start_stop.py"),
                               "--child", ending], capture_output=True, text=True, timeout=120)
        lines = [line for line in done.stdout.splitlines() if line.startswith("CALLS")]
        check(len(lines) == 1 and "'run_end'" in lines[0] and lines[0].endswith(str(expected)),
              f"a run left open by a program that ends with {ending!r} is ended at exit, "
              f"run_ending {expected} ({lines}, {done.stderr[-300:]!r})")
        if ending == "raise":
            check("ValueError: the program failed" in done.stderr,
                  "the program's own traceback is still printed")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return 0
    test_same_as_with()
    test_second_start()
    test_open_at_exit()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
