#!/usr/bin/env bash
# exec_cost.sh [BIN_DIR [COUNT]]: what a fork+exec of a program that is not instrumented
# (/bin/true) costs under profopt-record, and a dlopen of an already loaded library: COUNT
# (300) of each in a loop, with no recording, recorded, recorded with --stacks, and both
# again with lttng-ust's own fork wrapper preloaded instead of libprofopt-fork
# (PROFOPT_FORK_LIBRARY), as profopt-record did before, and with --stacks from a Python
# command (which preloads no liblttng-ust-dl now). Runs next to a private session
# daemon (tests/lib/with-sessiond.sh). Prints milliseconds per exec and microseconds per
# dlopen, per mode. BIN_DIR defaults to build/bin.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/bin}
count=${2:-300}
[ -x "$bin/profopt-record" ] || { echo "exec_cost: $bin/profopt-record not found" >&2; exit 1; }
ust_fork=$(ldconfig -p | sed -n 's/.*liblttng-ust-fork.so.1 .*=> //p' | head -n 1)
work=$(mktemp -d /tmp/profopt-exec-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/loop.sh" <<SH
#!/bin/sh
# prints "EXEC_MS DLOPEN_US"
start=\$(date +%s%N)
i=0
while [ \$i -lt $count ]; do /bin/true; i=\$((i + 1)); done
end=\$(date +%s%N)
dlopen_us=\$(/usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL("libm.so.6")
start = time.monotonic()
for _ in range($count):
    ctypes.CDLL("libm.so.6")
print("%.1f" % ((time.monotonic() - start) * 1e6 / $count))')
echo "\$(( (end - start) / $count / 1000 )) \$dlopen_us"
SH
chmod +x "$work/loop.sh"

measure() { # measure LABEL [ENV=VALUE...] [-- RECORD_OPTIONS...]
	local label=$1 result
	shift
	if [ "${1:-}" = plain ]; then
		result=$("$work/loop.sh")
	else
		result=$(env "$@" "$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" \
			"${options[@]}" -o "$work/trace-$RANDOM" -- "${command[@]}" 2>/dev/null |
			head -n 1)
	fi
	set -- $result
	printf '%-44s %8.2f ms an exec %8s us a dlopen\n' "$label" "$(echo "$1 / 1000" | bc -l)" "$2"
}

options=()
command=("$work/loop.sh")
measure "no recording" plain
measure "recorded" PROFOPT_BENCH=1
measure "recorded, lttng-ust's fork wrapper (before)" PROFOPT_FORK_LIBRARY="$ust_fork"
options=(--stacks)
measure "recorded --stacks" PROFOPT_BENCH=1
measure "recorded --stacks, lttng-ust's fork wrapper" PROFOPT_FORK_LIBRARY="$ust_fork"
# The same loop started by a Python command: --stacks then names no object (no
# liblttng-ust-dl preloaded, no base-address state dump).
cat >"$work/loop.py" <<PY
import subprocess, sys
sys.exit(subprocess.run(["$work/loop.sh"]).returncode)
PY
command=(/usr/bin/python3 "$work/loop.py")
measure "recorded --stacks, command python3" PROFOPT_BENCH=1
