#!/usr/bin/env bash
# fork_latency.sh [BIN_DIR]: how long a forked process (a DataLoader worker) waits before
# it can run, while profopt-record records with per-user buffers (the default) and with
# per-process buffers (--buffers pid), and with no recording; once from a small Python
# process and once from one that imported torch (hundreds of loaded objects, as a PyTorch
# training process). Each run forks 8 children one after the other; a child reports the
# time from fork() to just after its first profopt event. Runs next to a private session
# daemon (tests/lib/with-sessiond.sh). Prints the median and maximum per mode.
# BIN_DIR defaults to build/bin.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/bin}
[ -x "$bin/profopt-record" ] || { echo "fork_latency: $bin/profopt-record not found" >&2; exit 1; }
export PROFOPT_LIBRARY=${PROFOPT_LIBRARY:-$(dirname "$bin")/lib/libprofopt.so}
export PYTHONPATH=$root/tracepoints/python
work=$(mktemp -d /tmp/profopt-fork.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/forks.py" <<'PY'
import os, statistics, sys, time
if sys.argv[1:] == ["torch"]:
    import torch
import profopt
profopt.run_begin("bench")
times = []
for _ in range(8):
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        profopt.worker_begin(0)
        os.write(write_end, b"%.6f" % (time.monotonic() - started))
        os._exit(0)
    times.append(float(os.read(read_end, 64)) * 1000)
    os.waitpid(pid, 0)
print(f"median {statistics.median(times):.1f} ms, max {max(times):.1f} ms, "
      f"traced {profopt.tracing_enabled()}")
PY

for process in small torch; do
	echo "== forking from a $process Python process"
	echo "no recording:          $(/usr/bin/python3 "$work/forks.py" "$process")"
	for mode in uid pid; do
		result=$("$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" --buffers "$mode" \
			-o "$work/trace-$process-$mode" -- /usr/bin/python3 "$work/forks.py" \
			"$process" 2>/dev/null | head -n 1)
		echo "recording, --buffers $mode: $result"
	done
done
