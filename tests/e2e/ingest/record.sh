#!/usr/bin/env bash
# record.sh EMITTER CHECKER: records EMITTER with the lttng CLI (per-process buffers, contexts
# vpid, vtid, procname, ip; profopt events and two libc wrapper events), then runs
# CHECKER TRACE_DIR FACTS. Run inside tests/lib/with-sessiond.sh.
set -eu
emitter=$1 checker=$2
work=$(mktemp -d /tmp/profopt-ingest-e2e.XXXXXX)
trap 'lttng destroy profopt-ingest-e2e >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# Sanitizer builds: the LTTng-UST wrappers are preloaded ahead of the sanitizer runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
libdir=$(pkg-config --variable=libdir lttng-ust 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)

lttng create profopt-ingest-e2e --output="$work/trace" >/dev/null
lttng enable-channel -u --buffers-pid chan >/dev/null
lttng enable-event -u -c chan 'profopt:*' >/dev/null
lttng enable-event -u -c chan lttng_ust_libc:malloc,lttng_ust_libc:free >/dev/null
lttng add-context -u -c chan -t vpid -t vtid -t procname -t ip >/dev/null
lttng start >/dev/null
# The libc wrapper and AddressSanitizer both replace malloc: no libc events under it.
preload=$libdir/liblttng-ust-fork.so:$libdir/liblttng-ust-libc-wrapper.so
if ldd "$emitter" | grep -q libasan; then
	preload=$libdir/liblttng-ust-fork.so
	export PO_EXPECT_LIBC=0
fi
PROFOPT_RECORDING=0123456789abcdef LD_PRELOAD="$preload" "$emitter" "$work/facts"
lttng stop >/dev/null
lttng destroy profopt-ingest-e2e >/dev/null
"$checker" "$work/trace" "$work/facts"
