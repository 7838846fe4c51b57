#!/usr/bin/env bash
# untraced.sh BIN: runs profopt-sim without a tracing session and checks that it exits 0,
# reaps its workers, and that the mean step it prints roughly matches the configured
# per-step times (CPU work can only take longer on a busy machine, so the upper bound is loose).
# A mean step over the upper bound while other programs used a quarter of the CPUs or more
# (tests/lib/machine.py) is no failure: when nothing else failed the test is skipped (77)
# with one line saying how busy the machine was.
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-sim-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
too_busy=

# alive TAG: true when a profopt-sim process whose command line holds TAG still runs.
alive() {
	local file
	for file in $(grep -lsF -- "$1" /proc/[0-9]*/cmdline); do
		if [ "$(cat "${file%/cmdline}/comm" 2>/dev/null)" = profopt-sim ]; then
			return 0
		fi
	done
	return 1
}

# run_case NAME EXPECTED_MS ARGS...: runs the simulator and checks its mean step.
run_case() {
	local name=$1 expected=$2
	shift 2
	local tag="untraced-$name-$$"
	if ! /usr/bin/python3 "$here/../../lib/machine.py" run "$work/$name.machine" -- \
		"$bin/profopt-sim" --label "$tag" --report-json "$work/$name.json" "$@" \
		>"$work/$name.out" 2>&1; then
		echo "FAIL $name: exit status $?"; cat "$work/$name.out"; failures=$((failures + 1))
		return
	fi
	if alive "$tag"; then
		echo "FAIL $name: processes of the run are still alive"; failures=$((failures + 1))
	fi
	local line mean steps busy
	line=$(grep '^profopt-sim: ' "$work/$name.out" || true)
	mean=$(echo "$line" | sed -nE 's/.*mean step ([0-9.]+) ms$/\1/p')
	steps=$(echo "$line" | sed -nE 's/^profopt-sim: ([0-9]+) steps,.*/\1/p')
	if [ -z "$mean" ]; then
		echo "FAIL $name: no mean step line in: $line"; failures=$((failures + 1))
		return
	fi
	if awk -v m="$mean" -v e="$expected" 'BEGIN { exit !(m >= 0.9 * e && m <= 4 * e + 10) }'; then
		echo "ok   $name: mean step $mean ms, configured $expected ms, $steps steps"
	elif awk -v m="$mean" -v e="$expected" 'BEGIN { exit !(m > 4 * e + 10) }' &&
		busy=$(/usr/bin/python3 "$here/../../lib/machine.py" busy "$work/$name.machine" \
			--what "profopt-sim" --why "$name: mean step $mean ms, configured $expected ms"); then
		echo "busy $name: mean step $mean ms, configured $expected ms"
		too_busy=$busy
	else
		echo "FAIL $name: mean step $mean ms, configured $expected ms"; failures=$((failures + 1))
	fi
	/usr/bin/python3 - "$work/$name.json" "$mean" "$steps" <<'PY' || failures=$((failures + 1))
import json, sys
report = json.load(open(sys.argv[1]))
ok = (abs(report["mean_step_ms"] - float(sys.argv[2])) < 0.001
      and report["steps"] == int(sys.argv[3]) and "settings" in report)
print(("ok   " if ok else "FAIL ") + "JSON report agrees with the printed line")
sys.exit(0 if ok else 1)
PY
}

# Workers keep up: a step is h2d + forward + backward + optimizer = 1 + 2 + 2 + 1 ms.
run_case workers 6 --workers 2 --steps 40 --load-ms 1 --preprocess-ms 1 --collate-ms 0.5 \
	--h2d-ms 1 --forward-ms 2 --backward-ms 2 --optimizer-ms 1 --kernels 4 --gpu-ms 2
# Loading in the main process adds load + preprocess + collate = 1 + 1 + 1 ms, and a
# 10 ms checkpoint every 5 steps adds 2 ms on average.
run_case inline 11 --workers 0 --steps 20 --epochs 2 --load-ms 1 --preprocess-ms 1 \
	--collate-ms 1 --h2d-ms 1 --forward-ms 2 --backward-ms 2 --optimizer-ms 1 --kernels 4 \
	--gpu-ms 2 --stall-every 5 --stall-ms 10 --leak-bytes 65536
# A device slower than the host: the sync at the end of the step waits for 12 ms of kernels.
run_case gpu_bound 13 --workers 1 --steps 20 --load-ms 0.5 --preprocess-ms 0.5 \
	--collate-ms 0 --h2d-ms 1 --forward-ms 1 --backward-ms 1 --optimizer-ms 0.5 --kernels 6 \
	--gpu-ms 12 --jitter 10 --seed 3

# Usage errors exit with status 2 and say why.
for args in "--bogus" "--load-ms x" "--leak-in gpu" "--steps 0" "extra"; do
	status=0
	"$bin/profopt-sim" $args >"$work/usage.out" 2>&1 || status=$?
	if [ "$status" -eq 2 ] && grep -q "profopt-sim: error: " "$work/usage.out"; then
		echo "ok   usage error for '$args'"
	else
		echo "FAIL usage error for '$args': status $status"; failures=$((failures + 1))
	fi
done
"$bin/profopt-sim" --help | grep -q -- "--preprocess-ms MS" || {
	echo "FAIL --help lists the flags"; failures=$((failures + 1)); }
"$bin/profopt-sim" --version | grep -q "^profopt-sim [0-9]" || {
	echo "FAIL --version"; failures=$((failures + 1)); }

echo "failures: $failures"
if [ "$failures" -eq 0 ] && [ -n "$too_busy" ]; then
	echo "$too_busy"
	exit 77
fi
[ "$failures" -eq 0 ]
