#!/usr/bin/env bash
# trace.sh BIN_DIR WORKERS STEPS [TRAIN ARGS...]: records samples/pytorch/train.py next
# to a private session daemon (profopt-record when built, else the lttng command line)
# and checks the trace with check_trace.py.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$1 workers=$2 steps=$3
shift 3
work=$(mktemp -d /tmp/profopt-e2e-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
train=("$root/samples/pytorch/train.py" --workers "$workers" --steps "$steps" "$@")
if [ -x "$bin/profopt-record" ]; then
	# Next to a private daemon: tests run in parallel, and a daemon profopt-record
	# started in the shared namespace would be stopped under another test's feet.
	"$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" -o "$work/trace" -- \
		/usr/bin/python3 "${train[@]}" >"$work/record.log" 2>&1 ||
		{ cat "$work/record.log"; exit 1; }
else
	"$root/tests/lib/with-sessiond.sh" "$here/record.sh" "$work/trace" \
		/usr/bin/python3 "${train[@]}" || exit 1
fi
/usr/bin/python3 "$here/check_trace.py" "$work/trace" --workers "$workers" --steps "$steps"
