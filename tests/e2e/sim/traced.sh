#!/usr/bin/env bash
# traced.sh BIN: records profopt-sim (2 workers, 30 steps) with the lttng CLI, next to a
# private session daemon (run through tests/lib/with-sessiond.sh), and checks the trace
# with check_trace.py: 3 processes, every step closed, batches followed from worker to
# step, GPU activity, label bytes intact, nothing discarded.
set -eu
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-sim-trace.XXXXXX)
trap 'lttng destroy profopt-sim-test >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
label=$'lbl "quoted" \\ <tag> & \xc3\xa9 \t end'

lttng create profopt-sim-test --output="$work/trace" >/dev/null
lttng enable-channel -u --buffers-pid --subbuf-size 4M --num-subbuf 8 chan >/dev/null
lttng enable-event -u 'profopt:*' -c chan >/dev/null
lttng add-context -u -t vpid -t vtid -t procname -c chan >/dev/null
lttng start >/dev/null
status=0
LD_PRELOAD=liblttng-ust-fork.so "$bin/profopt-sim" --workers 2 --steps 30 --batch-size 8 \
	--load-ms 1 --preprocess-ms 1 --collate-ms 0.5 --h2d-ms 0.5 --forward-ms 1 \
	--backward-ms 1 --optimizer-ms 0.5 --kernels 4 --gpu-ms 2 --gpu-leak-bytes 4096 \
	--label "$label" || status=$?
lttng stop >/dev/null
lttng destroy >/dev/null
if [ "$status" -ne 0 ]; then
	echo "FAIL profopt-sim exited with status $status"
	exit 1
fi
/usr/bin/python3 "$here/check_trace.py" "$work/trace" 2 30 4 "$label"
