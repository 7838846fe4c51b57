#!/usr/bin/env bash
# self_cost.sh BIN_DIR: records self_cost.py with profopt-record and checks that
# summary.json states what the measurement cost (trace.self_cost): the module's hooks and
# libprofopt's sampler thread in the main process and its worker, and the recorder, with
# plausible values; and that a loop whose hook burns 4 ms of CPU per step (a test-only
# knob) is reported as a visible share, with the profiler-cost warning.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$1
work=$(mktemp -d /tmp/profopt-e2e-self-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

record() { # NAME [SCRIPT ARGS...]
	local name=$1
	shift
	PROFOPT_SAMPLE_MS=50 "$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" \
		-o "$work/$name" -- /usr/bin/python3 "$here/self_cost.py" "$@" \
		>"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
	"$bin/profopt-analyze" "$work/$name" -o "$work/$name-report" \
		>"$work/$name-analyze.log" 2>&1 || { cat "$work/$name-analyze.log"; exit 1; }
}

record plain
record spin --spin-ms 4
/usr/bin/python3 - "$work/plain-report" "$work/spin-report" <<'PY'
import json, sys

failures = 0


def check(ok, text):
    global failures
    print(("ok   " if ok else "FAIL ") + text)
    failures += not ok


def load(report):
    summary = json.load(open(report + "/summary.json"))
    return summary, summary["trace"]["self_cost"]


plain, cost = load(sys.argv[1])
print("plain:", json.dumps(cost, sort_keys=True))
check(cost is not None, "summary.json's trace.self_cost is there")
if cost:
    sources = cost["sources_ms"]
    mean_ms = plain["steady"]["mean_ms"]
    check(cost["reporting_processes"] == 2, "the main process and its worker reported")
    check(sources["hooks"] is not None and sources["hooks"] > 0, "hooks_ms > 0")
    check(sources["library_threads"] is not None and sources["library_threads"] > 0,
          "library_threads_ms > 0 (the sampler ran)")
    check(cost["recorder_ms"] is not None and cost["recorder_ms"] > 0, "recorder_ms > 0")
    check(cost["steps"] == 60, "spread over the run's 60 steps")
    check(0 < cost["ms_per_step"] < mean_ms,
          f"0 < {cost['ms_per_step']} ms per step < the mean step, {mean_ms} ms")
    check(abs(cost["share_pct"] - 100 * cost["ms_per_step"] / mean_ms) < 0.05,
          f"share_pct {cost['share_pct']} is ms_per_step over the steady mean")
    # the hooks of one step: a few Python calls each, far from a millisecond
    check(sources["hooks"] / 60 < 1.0, f"hooks {sources['hooks'] / 60:.3f} ms per step < 1 ms")
    pids = [p for p in plain["trace"]["processes"] if p["self_cost_ms_per_step"] is not None]
    check(len(pids) == 2, "two processes carry self_cost_ms_per_step")

spin, cost = load(sys.argv[2])
print("spin:", json.dumps(cost, sort_keys=True))
warnings = [w["code"] for w in spin["trace"]["warnings"]]
check(cost is not None and cost["sources_ms"]["hooks"] / 60 >= 3.5,
      "4 ms of spinning per step are counted in the hooks")
check(cost is not None and cost["visible"] is True, "a visible share")
check("profiler-cost" in warnings, f"the profiler-cost warning: {warnings}")
sys.exit(1 if failures else 0)
PY
status=$?
if [ $status -ne 0 ]; then
	cat "$work/spin-analyze.log"
	exit 1
fi
grep -q "own CPU time" "$work/spin-report/index.html" ||
	{ echo "FAIL the HTML report's quality section states the cost"; exit 1; }
echo "ok   the HTML report's quality section states the cost"
