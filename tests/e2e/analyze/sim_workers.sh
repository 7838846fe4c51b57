#!/usr/bin/env bash
# Records profopt-sim with 4 workers and checks summary.json against what the simulator
# was told to do and what it measured: exact step count, mean step within 5%, a breakdown
# summing to the step, every worker present with its share of the batches. A worker's load
# (4 ms of sleep a batch) takes longer when the worker then waits for a core: when only
# that check failed while other programs used a quarter of the CPUs or more, the test is
# skipped (77, tests/lib/busy.sh).
set -eu
bin=$1
work=$(mktemp -d /tmp/profopt-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../lib/busy.sh"

measured "$work/machine.json" \
	"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 4 --steps 120 \
	--batch-size 16 --load-ms 4 --preprocess-ms 1 --collate-ms 1 --h2d-ms 1 \
	--forward-ms 3 --backward-ms 4 --optimizer-ms 1 --kernels 6 --gpu-ms 5 --seed 7 \
	--report-json "$work/sim.json" >"$work/record.log" 2>&1 || {
	cat "$work/record.log"; exit 1; }
analyzer "$work/trace" -o "$work/report" >"$work/analyze.log" 2>&1 || {
	cat "$work/analyze.log"; exit 1; }

status=0
/usr/bin/python3 - "$work/sim.json" "$work/report/summary.json" <<'PY' || status=$?
import json, sys
sim = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
failures, timed = [], []
def check(cond, text, needs_cpus=False):
    """needs_cpus: the expectation is the simulator's design, which holds only when the
    machine gives it its CPUs."""
    print(("ok   " if cond else "FAIL ") + text)
    if not cond:
        (timed if needs_cpus else failures).append(text)

steps = summary["steps"]
check(summary["schema"] == "profopt.summary/1", "schema is profopt.summary/1")
check(steps["count"] == 120 == sim["steps"], f"step count {steps['count']} == 120")
rel = abs(steps["mean_ms"] - sim["mean_step_ms"]) / sim["mean_step_ms"]
check(rel <= 0.05, f"mean step {steps['mean_ms']:.3f} ms within 5% of the simulator's "
      f"{sim['mean_step_ms']:.3f} ms ({rel * 100:.1f}%)")
parts = sum(summary["breakdown_ms"].values())
check(abs(parts - steps["mean_ms"]) < 0.01, f"breakdown sums to {parts:.3f} == {steps['mean_ms']:.3f}")
check(summary["breakdown_ms"]["forward"] > 2.0, "forward time is visible in the breakdown")
workers = summary["workers"]
check(len(workers) == 4, f"{len(workers)} workers == 4")
batches = sorted(w["batches"] for w in workers)
check(sum(batches) >= 120 and batches[0] >= 25, f"each worker produced its batches: {batches}")
for w in workers:
    check(3.0 <= w["load_ms"], f"worker {w['pid']} load {w['load_ms']:.2f} ms per batch >= 3")
    check(w["load_ms"] <= 8.0, f"worker {w['pid']} load {w['load_ms']:.2f} ms per batch ~ 4",
          needs_cpus=True)
roles = sorted(p["role"] for p in summary["trace"]["processes"])
check(roles.count("main") == 1 and roles.count("worker") == 4, f"roles {roles}")
check(summary["trace"]["discarded_events"] == 0, "no discarded events")
check(summary["run"]["config"].get("num_workers") == "4", "run configuration recorded")
sys.exit(1 if failures else 3 if timed else 0)
PY
if [ "$status" -eq 3 ]; then
	valgrind_verdict
	skip_if_busy "the recording" "the workers' loads took longer than designed" \
		"$work/machine.json"
fi
[ "$status" -eq 0 ] || exit 1
valgrind_verdict
