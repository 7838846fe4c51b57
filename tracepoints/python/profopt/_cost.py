"""profopt's own CPU time in this process, so that every report can state what the
measurement cost (docs/accuracy.md, "What a recording costs").

The module counts the thread CPU time of its own code on the program's threads (the
loader's per-batch and per-sample hooks, the model's, the optimizer's and the step's) and
of its garbage-collection callbacks, with time.thread_time_ns() read at the edges of each
stretch of its own code. A read is a system call (about 1.25 us on a 2-core VM, README,
"Costs of the tracepoints"), as much as a third of a per-sample hook: the per-batch and
per-step stretches are all measured, the per-sample ones (a sample's load and preprocess
spans in a worker) one in SAMPLE_EVERY, and the total of those is estimated as the mean
of the measured ones times their number. It starts no thread of its own; libprofopt counts the CPU
time of its threads (the sampler, the stacks watcher). report() hands the totals to
libprofopt, which records them as one profopt:self_cost event; maybe_report() does so at
most every REPORT_EVERY_NS (the step and batch hooks call it), and the run's end and each
worker's exit report once more. A forked child counts from zero.
"""

import os
import time

from . import _api

REPORT_EVERY_NS = 1000000000
SAMPLE_EVERY = 16

thread_ns = time.thread_time_ns
_monotonic_ns = time.monotonic_ns


class Meter:
    """This process's totals, cumulative nanoseconds of thread CPU time."""

    hooks_ns = 0
    gc_ns = 0
    next_report_ns = 0
    # Tests only (tests/e2e/python): CPU time each loader step spends busy in a hook,
    # so that a test can make the module's cost a visible share of the step.
    test_spin_ns = 0


class _PerSample:
    """The per-sample stretches: how many ran, how many were measured, and their time."""

    stretches = 0
    measured = 0
    measured_ns = 0


def sample_start():
    """The start of a per-sample stretch: thread_ns() for one in SAMPLE_EVERY, else 0."""
    _PerSample.stretches += 1
    if _PerSample.stretches % SAMPLE_EVERY:
        return 0
    return thread_ns()


def sample_since(started_ns):
    """The end of a per-sample stretch that sample_start() began."""
    if started_ns:
        _PerSample.measured += 1
        _PerSample.measured_ns += thread_ns() - started_ns


def hooks_total_ns():
    """The hooks' time: measured, and the per-sample stretches' estimate."""
    if not _PerSample.measured:
        return Meter.hooks_ns
    return Meter.hooks_ns + _PerSample.measured_ns * _PerSample.stretches // _PerSample.measured


def hooks_since(started_ns):
    """Counts the module's own time on this thread since started_ns (thread_ns())."""
    Meter.hooks_ns += thread_ns() - started_ns


def gc_since(started_ns):
    Meter.gc_ns += thread_ns() - started_ns


def spin_for_tests():
    """Burns Meter.test_spin_ns of this thread's CPU time (0 outside tests)."""
    if Meter.test_spin_ns <= 0:
        return
    until_ns = thread_ns() + Meter.test_spin_ns
    while thread_ns() < until_ns:
        pass


def report():
    """Records the totals so far (one profopt:self_cost event)."""
    Meter.next_report_ns = _monotonic_ns() + REPORT_EVERY_NS
    _api.LIB.profopt_self_cost(hooks_total_ns(), Meter.gc_ns)


def maybe_report():
    """Records the totals when the last report is REPORT_EVERY_NS old."""
    if _monotonic_ns() >= Meter.next_report_ns:
        report()


def _forget():
    Meter.hooks_ns = 0
    Meter.gc_ns = 0
    Meter.next_report_ns = 0
    _PerSample.stretches = 0
    _PerSample.measured = 0
    _PerSample.measured_ns = 0


os.register_at_fork(after_in_child=_forget)
