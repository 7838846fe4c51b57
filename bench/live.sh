#!/usr/bin/env bash
# live.sh [--steps N] [--kernels K] [--every S] [--live-timer US]: what the live view
# costs and how late it is, on the simulator recorded with profopt-record --live next to a
# session daemon and relay of its own (tests/lib/with-sessiond.sh, private namespaces).
#
# Prints the event rate, the latency of each window (when its JSON line reached this
# script, on CLOCK_MONOTONIC, minus the newest event in it, on the same clock: how old the
# freshest thing shown is), the CPU time of profopt-analyze --live per second of the run
# (it includes the snapshots' forked copies), its peak resident memory, and what one window
# costs (its snapshot_ms) at 10,000, 40,000 and 160,000 steps, as far as the run goes: it
# should not grow with the run. Run it on an idle machine; the figures go in README ("Live
# analysis") and docs/live.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${PROFOPT_BIN:-$root/build/bin}
steps=20000 kernels=40 every=1 timer=100000
while [ $# -gt 0 ]; do
	case $1 in
	--steps) steps=$2 ;;
	--kernels) kernels=$2 ;;
	--every) every=$2 ;;
	--live-timer) timer=$2 ;;
	*) echo "usage: $0 [--steps N] [--kernels K] [--every S] [--live-timer US]" >&2; exit 2 ;;
	esac
	shift 2
done
if [ "${PROFOPT_LIVE_BENCH_INSIDE:-}" != 1 ]; then
	PROFOPT_LIVE_BENCH_INSIDE=1 PROFOPT_SESSIOND_NET=1 exec "$root/tests/lib/with-sessiond.sh" \
		"$0" --steps "$steps" --kernels "$kernels" --every "$every" --live-timer "$timer"
fi
work=$(mktemp -d /tmp/profopt-live-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Small steps with many kernels: about 2 x kernels + 40 events per step.
"$bin/profopt-record" --live --every "$every" --live-timer "$timer" -o trace -- \
	"$bin/profopt-sim" --workers 2 --steps "$steps" --load-ms 0.2 --preprocess-ms 0 \
	--collate-ms 0 --forward-ms 0.5 --backward-ms 0.5 --optimizer-ms 0.1 \
	--kernels "$kernels" --gpu-ms 0.8 2>record.err |
	/usr/bin/python3 -c '
import json, sys, time, os, subprocess
out = open("windows.txt", "w")
for line in sys.stdin:
    if not line.startswith("{"):
        continue
    now = time.monotonic_ns()
    w = json.loads(line)
    if w["ended"]:
        continue
    pid = subprocess.run(["pgrep", "-x", "profopt-analyze"], capture_output=True,
                         text=True).stdout.split()
    cpu = rss = -1
    if pid:
        try:
            fields = open("/proc/%s/stat" % pid[0]).read().rsplit(")", 1)[1].split()
            ticks = os.sysconf("SC_CLK_TCK")
            cpu = (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / ticks
            for l in open("/proc/%s/status" % pid[0]):
                if l.startswith("VmHWM:"):
                    rss = int(l.split()[1]) / 1024
        except OSError:
            pass
    out.write("%d %d %d %.3f %.1f %.3f %.3f %d\n" % (now - w["now_ns"], w["events"], w["steps"], cpu,
                                                  rss, w["elapsed_s"], w["snapshot_ms"],
                                                  w["window_steps"]))
'
/usr/bin/python3 - windows.txt <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
if len(rows) < 3:
    sys.exit("too few windows to measure")
lat = sorted(int(r[0]) / 1e6 for r in rows)
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
first, last = rows[0], rows[-1]
elapsed = float(last[5]) - float(first[5])
events = int(last[1]) - int(first[1])
cpu = float(last[3]) - float(first[3])
print("windows %d, events %d over %.1f s: %.0f events/s" % (len(rows), events, elapsed,
                                                          events / elapsed))
print("latency of the newest event shown (ms): p50 %.0f, p99 %.0f, max %.0f" % (q(0.5), q(0.99),
                                                                            lat[-1]))
print("profopt-analyze --live CPU: %.1f%% of one core (snapshots included)" % (100 * cpu / elapsed))
print("its peak resident memory: first window %.1f MiB, last %.1f MiB (%d steps)" % (
    float(first[4]), float(last[4]), int(last[2])))
# What a window costs as the run grows: the median snapshot_ms of the 5 windows nearest to
# each mark the run reached, with the steady steps those windows held.
for mark in (10000, 40000, 160000, 640000):
    if int(last[2]) < 0.95 * mark:  # the last windows of a run of mark steps come near it
        break
    near = sorted(rows, key=lambda r: abs(int(r[2]) - mark))[:5]
    cost = sorted(float(r[6]) for r in near)[len(near) // 2]
    held = sorted(int(r[7]) for r in near)[len(near) // 2]
    print("window at %d steps: %.1f ms (its %d steady steps)" % (mark, cost, held))
PY
