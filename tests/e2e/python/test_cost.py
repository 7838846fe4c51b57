#!/usr/bin/python3
"""Unit tests of the module's count of its own cost (profopt._cost) without a recording
session: an instrumented loop reports profopt_self_cost with growing, nonzero hook time,
once more at the run's end; the per-sample stretches measured one in SAMPLE_EVERY are
estimated from their mean; a forked child counts from zero; the test-only knob burns the
thread CPU time it is given."""

import os
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

from calls import check, finish, recording
import profopt
from profopt import _cost


def reports(calls):
    return [arguments for name, arguments in calls.of("self_cost")]


def test_loop_reports():
    calls = recording()
    loader = profopt.instrument(DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8))
    model = torch.nn.Linear(4, 1)
    with profopt.run(loader=loader, model=model):
        for (batch,) in loader:
            model(batch).sum().backward()
    made = reports(calls)
    check(len(made) >= 2, f"a report at the first step and at the run's end ({len(made)})")
    hooks = [arguments[0] for arguments in made]
    check(hooks[-1] > 0, f"the hooks' time is counted ({hooks[-1]} ns)")
    check(hooks == sorted(hooks), "each report holds the earlier ones")
    check(calls.made[-1][0] == "run_end" and calls.made[-2][0] == "self_cost",
          "the last report comes just before run_end")
    # 8 steps of a few Python calls each: far less than a second
    check(hooks[-1] < 200_000_000, f"plausible: {hooks[-1] / 1e6:.2f} ms for 8 steps")


def test_per_sample_estimate():
    saved = (_cost.Meter.hooks_ns, _cost._PerSample.stretches, _cost._PerSample.measured,
             _cost._PerSample.measured_ns)
    _cost.Meter.hooks_ns = 500
    _cost._PerSample.stretches, _cost._PerSample.measured = 32, 2
    _cost._PerSample.measured_ns = 1000
    check(_cost.hooks_total_ns() == 500 + 16000,
          f"32 stretches, 2 measured at 500 ns each: {_cost.hooks_total_ns()} ns")
    (_cost.Meter.hooks_ns, _cost._PerSample.stretches, _cost._PerSample.measured,
     _cost._PerSample.measured_ns) = saved
    starts = [_cost.sample_start() for _ in range(_cost.SAMPLE_EVERY * 2)]
    check(sum(1 for started in starts if started) == 2,
          f"one stretch in {_cost.SAMPLE_EVERY} is measured")


def test_fork_counts_from_zero():
    _cost.Meter.hooks_ns += 12345
    _cost.Meter.gc_ns += 678
    pid = os.fork()
    if pid == 0:
        os._exit(0 if _cost.Meter.hooks_ns == 0 and _cost.Meter.gc_ns == 0 and
                 _cost._PerSample.stretches == 0 else 1)
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, "a forked child counts from zero")
    check(_cost.Meter.hooks_ns >= 12345, "the parent keeps its count")


def test_spin_knob():
    _cost.Meter.test_spin_ns = 3_000_000
    before = time.thread_time_ns()
    _cost.spin_for_tests()
    spent = time.thread_time_ns() - before
    _cost.Meter.test_spin_ns = 0
    check(spent >= 3_000_000, f"the knob burns 3 ms of thread CPU ({spent / 1e6:.2f} ms)")
    check("Meter" not in profopt.__all__ and "_cost" not in profopt.__all__,
          "the knob is not in the public API")


if __name__ == "__main__":
    test_loop_reports()
    test_per_sample_estimate()
    test_fork_counts_from_zero()
    test_spin_knob()
    raise SystemExit(finish())
