#!/usr/bin/env bash
# replay.sh BIN REPLAY COLLECTOR PYTHONPATH: next to a private session daemon
# (tests/lib/with-sessiond.sh), checks that profopt-record --gpu names the collector to the
# CUDA driver (and refuses a missing one or another injection library), that the Python
# module's start of the collector says why it records nothing on a machine without a driver
# and lets the script go on, then records cupti_replay in each mode and checks what the
# analysis makes of the collector's events: every kernel recorded, the gpu-bound verdict
# when kernels keep the GPU busy, gpu-idle caused by the data wait when the loop waits for
# input, and device memory growth when allocations are never freed.
set -u
bin=$1 replay=$2 collector=$3 pythonpath=$4
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-cupti-replay.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
record() { local name=$1; shift; "$bin/profopt-record" -o "$work/$name" "$@"; }

out=$(record gpu-env --gpu -- sh -c 'echo "injection=$CUDA_INJECTION64_PATH"' 2>&1)
if [ "$(realpath "$(sed -n 's/^injection=//p' <<<"$out")")" = "$(realpath "$collector")" ]; then
	echo "ok   --gpu names the collector to the CUDA driver"
else
	echo "FAIL --gpu: the command saw: $out"
	fail=1
fi
out=$(PROFOPT_CUPTI_LIBRARY=/nonexistent/libprofopt-cupti.so record gpu-missing --gpu -- true 2>&1)
status=$?
if [ "$status" = 2 ] && grep -q 'the GPU collector /nonexistent/libprofopt-cupti.so is not there' \
	<<<"$out"; then
	echo "ok   --gpu without the collector is a usage error that names the file"
else
	echo "FAIL --gpu without the collector: status $status: $out"
	fail=1
fi
out=$(CUDA_INJECTION64_PATH=/opt/other/libinject.so record gpu-other --gpu -- true 2>&1)
status=$?
if [ "$status" = 2 ] && grep -q 'already loads /opt/other/libinject.so' <<<"$out"; then
	echo "ok   --gpu beside another injection library is refused"
else
	echo "FAIL --gpu beside another injection library: status $status: $out"
	fail=1
fi
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	PYTHONPATH=$pythonpath PROFOPT_CUPTI_LIBRARY=$collector record python -- \
		/usr/bin/python3 "$here/python_start.py" >"$work/python.out" 2>"$work/python.err"
	if grep -qx 'started False' "$work/python.out" && grep -qx 'script done' "$work/python.out" &&
		grep -qx 'tracing True' "$work/python.out" &&
		[ "$(grep -c 'profopt-cupti: no GPU activity recorded: no CUDA driver' \
			"$work/python.err")" = 1 ]; then
		echo "ok   the Python module's start says once why it records nothing; the script goes on"
	else
		echo "FAIL the Python module's start of the collector:"
		cat "$work/python.out" "$work/python.err"
		fail=1
	fi
fi

for mode in gpu-bound input-bound leak; do
	if ! "$bin/profopt-record" -o "$work/$mode.trace" -- "$replay" "$mode" \
		>"$work/$mode.out" 2>"$work/$mode.err"; then
		echo "FAIL $mode: profopt-record failed: $(tail -n 2 "$work/$mode.err")"
		fail=1
		continue
	fi
	if ! "$bin/profopt-analyze" --json-only -q -o "$work/$mode.report" "$work/$mode.trace" \
		>"$work/$mode.analyze" 2>&1; then
		echo "FAIL $mode: profopt-analyze failed: $(tail -n 2 "$work/$mode.analyze")"
		fail=1
		continue
	fi
	/usr/bin/python3 "$here/check_replay.py" "$mode" "$work/$mode.report/summary.json" \
		"$(sed -n 's/^records //p' "$work/$mode.out")" || fail=1
done
exit "$fail"
