#!/usr/bin/python3
"""test_busy_skip.py: when run_workload.py skips a workload for a busy machine, and when
it must fail instead (unit.workload.busy_skip). A skip needs both: every failed check is
the workload's own truth check, a check that a failed truth check makes moot, or a
prediction against a rerun; and other programs used a quarter of the CPUs or more while
the runs involved ran. On a quiet machine a failed truth check skips too (the scenario did
not happen there), with every other failed check moot by it. A check of the trace against
the script's clock in the same run never skips."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_workload  # noqa: E402

failures = 0


def machine_truth(others_share):
    """A truth file's machine snapshots over 10 s in which other programs used
    others_share of this machine's CPUs and the workload 1 CPU."""
    others_cpus = others_share * os.cpu_count()
    begin = {"t_s": 100.0, "busy_s": 1000.0, "own_cpu_s": 50.0, "load": 1.0}
    end = {"t_s": 110.0, "busy_s": 1000.0 + 10 * (others_cpus + 1), "own_cpu_s": 60.0,
           "load": 2.0 + others_cpus * 4}
    return {"machine": {"begin": begin, "end": end}}


class FakeRun:
    def __init__(self, others_share, reruns=()):
        self.truth = machine_truth(others_share)
        self.reruns = {(str(i),): machine_truth(share) for i, share in enumerate(reruns)}
        self.background_cores = 0.0  # no busy loops of the workload's own


def expect(what, run, failed, skips):
    global failures
    line = run_workload.busy_machine_skip(run, failed)
    ok = (line is not None) == skips and (line is None or line.startswith((
        "skipped: the machine was too busy to measure this (load ",
        "skipped: the workload's scenario did not happen on this machine")))
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {line or 'no skip'}")
    failures += not ok


TRUTH = ("truth", "truth[wait_share_pct]")
VERDICT = ("verdict", "verdict[input-bound]")
MEAN_STEP = ("mean_step", "mean_step")
RERUN = ("persistent_rerun", "persistent_rerun")

expect("nothing failed", FakeRun(0.75), [], False)
expect("truth failed, busy", FakeRun(0.75), [TRUTH], True)
expect("truth failed, idle: the scenario did not happen here", FakeRun(0.05), [TRUTH], True)
expect("truth and the diagnosis failed, idle", FakeRun(0.05), [TRUTH, VERDICT], True)
expect("truth and a same-run check failed, idle", FakeRun(0.05), [TRUTH, MEAN_STEP], False)
expect("truth and the diagnosis failed, busy", FakeRun(0.75), [TRUTH, VERDICT], True)
expect("the diagnosis failed alone, busy", FakeRun(0.75), [VERDICT], False)
expect("truth and a same-run check failed, busy", FakeRun(0.75), [TRUTH, MEAN_STEP], False)
expect("a rerun check failed, the rerun busy", FakeRun(0.05, reruns=[0.6]), [RERUN], True)
expect("a rerun check failed, all idle", FakeRun(0.05, reruns=[0.1]), [RERUN], False)
expect("just under a quarter of the CPUs", FakeRun(0.05, reruns=[0.24]), [RERUN], False)
expect("a quarter of the CPUs", FakeRun(0.05, reruns=[0.251]), [RERUN], True)
sys.exit(1 if failures else 0)
