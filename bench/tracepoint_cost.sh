#!/usr/bin/env bash
# tracepoint_cost.sh [BIN_DIR]: runs profopt-bench-tracepoints next to a private session
# daemon (tests/lib/with-sessiond.sh): once with no session recording, once while a session
# records profopt:* and profopt_bench:* in per-process buffers with the contexts
# profopt-record adds (vpid, vtid, procname). Prints the table of both runs.
# BIN_DIR defaults to build/bin.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/bin}
bench=$bin/profopt-bench-tracepoints
[ -x "$bench" ] || { echo "tracepoint_cost: $bench not found; build it first" >&2; exit 1; }

if [ -z "${PROFOPT_BENCH_INSIDE:-}" ]; then
	PROFOPT_BENCH_INSIDE=1 exec "$root/tests/lib/with-sessiond.sh" "$0" "$bin"
fi

work=$(mktemp -d /tmp/profopt-bench.XXXXXX)
trap 'lttng destroy profopt-bench >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "== Idle: no session records profopt events =="
"$bench" --mode idle

# Overwrite mode: a full buffer is overwritten rather than discarded, so every event of
# the measured loops pays the full cost of being written.
lttng create profopt-bench --output="$work/trace" >/dev/null
lttng enable-channel -u --buffers-pid --overwrite --subbuf-size 4M --num-subbuf 8 chan >/dev/null
lttng enable-event -u -c chan 'profopt:*' >/dev/null
lttng enable-event -u -c chan 'profopt_bench:*' >/dev/null
lttng add-context -u -c chan -t vpid -t vtid -t procname >/dev/null
lttng start >/dev/null
echo
echo "== Recording: one session, per-process buffers, vpid/vtid/procname contexts =="
"$bench" --mode recording
lttng stop >/dev/null
lttng destroy >/dev/null
