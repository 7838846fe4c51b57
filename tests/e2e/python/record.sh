#!/usr/bin/env bash
# record.sh TRACE_DIR PROGRAM [ARGS...]: records PROGRAM's profopt events with the lttng
# command line, the way profopt-record does (per-process buffers, vpid/vtid/procname
# contexts, liblttng-ust-fork.so preloaded so forked data-loader workers are traced).
# Run it inside tests/lib/with-sessiond.sh. PROGRAM's output goes to TRACE_DIR.log.
set -u
trace=$1
shift
session=po-python-$$
lttng create "$session" --output="$trace" >/dev/null || exit 1
cleanup() { lttng destroy "$session" >/dev/null 2>&1; }
trap cleanup EXIT
lttng enable-channel -u --buffers-pid --subbuf-size 4M --num-subbuf 8 -s "$session" po >/dev/null &&
	lttng enable-event -u -s "$session" -c po 'profopt:*' >/dev/null &&
	lttng add-context -u -s "$session" -c po -t vpid -t vtid -t procname >/dev/null &&
	lttng start "$session" >/dev/null || exit 1
LD_PRELOAD=liblttng-ust-fork.so${LD_PRELOAD:+:$LD_PRELOAD} "$@" >"$trace.log" 2>&1
status=$?
lttng stop "$session" >/dev/null || exit 1
if [ $status -ne 0 ]; then
	echo "record.sh: the program failed with status $status:" >&2
	cat "$trace.log" >&2
fi
exit $status
