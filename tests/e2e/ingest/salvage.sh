#!/usr/bin/env bash
# salvage.sh EMITTER CHECKER: records EMITTER whose forked child writes thousands of events in
# small packets, overwrites 64 bytes in the middle of the child's largest stream file, and
# runs CHECKER --salvage TRACE_DIR FACTS. Run inside tests/lib/with-sessiond.sh.
set -eu
emitter=$1 checker=$2
work=$(mktemp -d /tmp/profopt-ingest-salvage.XXXXXX)
trap 'lttng destroy profopt-ingest-salvage >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# Sanitizer builds: the LTTng-UST wrappers are preloaded ahead of the sanitizer runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
libdir=$(pkg-config --variable=libdir lttng-ust 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)

lttng create profopt-ingest-salvage --output="$work/trace" >/dev/null
lttng enable-channel -u --buffers-pid --subbuf-size=4096 --num-subbuf=64 chan >/dev/null
lttng enable-event -u -c chan 'profopt:*' >/dev/null
lttng add-context -u -c chan -t vpid -t vtid -t procname >/dev/null
lttng start >/dev/null
PO_EMIT_CHILD_EXTRA=5000 LD_PRELOAD="$libdir/liblttng-ust-fork.so" "$emitter" "$work/facts"
lttng stop >/dev/null
lttng destroy profopt-ingest-salvage >/dev/null

read -r _ child_pid _ <"$work/facts"
stream=$(ls -S "$work"/trace/ust/pid/*-"$child_pid"-*/chan_* | head -n 1)
size=$(stat -c %s "$stream")
if [ "$size" -lt $((16 * 4096)) ]; then
	echo "salvage: the child's stream is too small ($size bytes)" >&2
	exit 1
fi
# In the middle of a packet in the middle of the file: the decoder meets the garbage there.
offset=$(((size / 4096 / 2) * 4096 + 2048))
head -c 64 /dev/zero | tr '\0' '\377' | dd of="$stream" bs=1 seek="$offset" conv=notrunc status=none
"$checker" --salvage "$work/trace" "$work/facts"
