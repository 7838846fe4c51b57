#!/usr/bin/python3
"""Unit tests of the module's garbage-collection spans (profopt._gc) without a recording
session: the stage's number is profopt.h's, each recorded collection is one gc span on the
calling thread labelled with its generation, young collections only with PROFOPT_GC=all,
none with PROFOPT_GC=off, the callback is installed once, profopt.run installs it and
removes it at its end."""

import gc
import os
import re

from calls import ROOT, check, finish, recording
import profopt
from profopt import _gc
from profopt._api import Stage


def spans(calls):
    return [(name, arguments[0], arguments[1]) for name, arguments in
            calls.of("stage_begin", "stage_end") if arguments[0] == int(Stage.GC)]


def test_enum():
    header = open(os.path.join(ROOT, "tracepoints", "include", "profopt.h")).read()
    value = re.search(r"\bPROFOPT_STAGE_GC = (\d+)", header)
    check(value and int(value.group(1)) == int(Stage.GC),
          f"Stage.GC is PROFOPT_STAGE_GC ({int(Stage.GC)})")


def collect_each(calls):
    del calls.made[:]
    for generation in (0, 1, 2):
        gc.collect(generation)
    return spans(calls)


def test_generations():
    calls = recording()
    os.environ.pop(_gc.ENVIRONMENT, None)
    _gc.install()
    _gc.install()
    check(gc.callbacks.count(_gc._on_collection) == 1, "installed once, however often asked")
    got = collect_each(calls)
    check(got == [("stage_begin", 11, b"gen1"), ("stage_end", 11, b"gen1"),
                  ("stage_begin", 11, b"gen2"), ("stage_end", 11, b"gen2")],
          f"generations 1 and 2 recorded as gc spans, generation 0 not: {got}")
    os.environ[_gc.ENVIRONMENT] = "all"
    _gc.install()
    got = collect_each(calls)
    check([label for name, _, label in got if name == "stage_begin"] ==
          [b"gen0", b"gen1", b"gen2"], f"PROFOPT_GC=all records generation 0 too: {got}")
    os.environ[_gc.ENVIRONMENT] = "off"
    _gc.install()
    got = collect_each(calls)
    check(got == [], f"PROFOPT_GC=off records none: {got}")
    os.environ.pop(_gc.ENVIRONMENT, None)
    _gc.uninstall()
    check(_gc._on_collection not in gc.callbacks, "uninstall removes the callback")


def test_run():
    calls = recording()
    with profopt.run(sample_ms=0):
        check(_gc._on_collection in gc.callbacks, "profopt.run installs the callback")
        got = collect_each(calls)
    check(len(got) == 4, f"collections inside the run are recorded: {got}")
    check(_gc._on_collection not in gc.callbacks, "the run's end removes it")


if __name__ == "__main__":
    test_enum()
    test_generations()
    test_run()
    raise SystemExit(finish())
