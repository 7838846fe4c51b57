#!/usr/bin/env bash
# whatif.sh BIN_DIR: the what-if model against a real rerun. Records a 1-worker run whose
# loading is I/O-like (sleeping), takes the num_workers that profopt-analyze recommends and
# the step time it predicts, reruns with that many workers, and checks that the measured
# median step is within 15% of the prediction. Runs inside tests/lib/with-sessiond.sh.
#
# The scenario needs the machine: the 1-worker loop must wait for data (its 10 ms of CPU
# work per step against 40 ms of loading), which the trace itself shows (trace_steps.py,
# babeltrace2's reading), and the two recordings must see the same machine. When the
# loop did not wait, or the prediction missed, while other programs used a quarter of the
# CPUs or more (tests/lib/machine.py), the test is skipped (77) and says so in one line.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
work=$(mktemp -d /tmp/profopt-whatif.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=../lib/busy.sh
. "$lib/busy.sh"

sim=(--steps 150 --load-ms 40 --preprocess-ms 1 --collate-ms 0.5 --h2d-ms 0.3
     --forward-ms 4 --backward-ms 4 --optimizer-ms 1 --kernels 8 --gpu-ms 5 --seed 5)

launcher=(/usr/bin/python3 "$lib/machine.py" run "$work/before.machine" --)
record_sim "$work/before" -- --workers 1 "${sim[@]}" || exit 1
analyze "$work/before" "$work/before-report" || exit 1
waited=$(/usr/bin/python3 - "$lib" "$work/before" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import trace_steps
print(f"{trace_steps.wait_share_pct(trace_steps.trace_steps(sys.argv[2])):.1f}")
PY
) || exit 1
if /usr/bin/python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 50)' "$waited"; then
	echo "ok   truth: the 1-worker loop waited for data $waited% of its steps (the scenario needs >= 50%)"
else
	echo "FAIL truth: the 1-worker loop waited for data $waited% of its steps (the scenario needs >= 50%)"
	skip_if_busy "the 1-worker run" "its loop waited for data $waited% of its steps, not 50%" \
		"$work/before.machine"
	exit 1
fi
plan=$(/usr/bin/python3 - "$work/before-report/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for f in summary["findings"]:
    if f["id"] == "input-bound":
        for r in f["recommendations"]:
            if r["knob"] == "num_workers":
                print(f["evidence"]["recommended_num_workers"], r["predicted_step_ms"])
                sys.exit(0)
print("no num_workers recommendation in:", json.dumps(summary["findings"]), file=sys.stderr)
sys.exit(1)
PY
) || exit 1
read -r workers predicted <<<"$plan"
echo "recommended num_workers=$workers, predicted step $predicted ms"

launcher=(/usr/bin/python3 "$lib/machine.py" run "$work/after.machine" --)
record_sim "$work/after" -- --workers "$workers" "${sim[@]}" || exit 1
analyze "$work/after" "$work/after-report" || exit 1
/usr/bin/python3 - "$work/after-report/summary.json" "$predicted" "$workers" <<'PY' ||
import json, sys
summary = json.load(open(sys.argv[1]))
predicted, workers = float(sys.argv[2]), int(sys.argv[3])
measured = summary["steps"]["p50_ms"]
error = abs(measured - predicted) / predicted
print(f"{'ok  ' if error <= 0.15 else 'FAIL'} with num_workers={workers} the median step is "
      f"{measured:.2f} ms, predicted {predicted:.2f} ms ({error * 100:.1f}% off, limit 15%)")
ok = error <= 0.15 and workers >= 2
if workers < 2:
    print("FAIL the recommendation should add workers to a 1-worker I/O-bound run")
sys.exit(0 if ok else 1)
PY
	{
		skip_if_busy "the two recordings" "the prediction missed its rerun" \
			"$work/before.machine" "$work/after.machine"
		exit 1
	}
