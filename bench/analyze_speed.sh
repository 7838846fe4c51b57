#!/usr/bin/env bash
# analyze_speed.sh [--events N] [--rounds R] [--no-scale | --scale-down] [--no-python]: the
# speed and memory benchmark of profopt-analyze (a script to run by hand, not a timed test).
#
# Records a profopt-sim trace of at least N events (default 5 million: many steps, many
# short spans and GPU records), then times, alternating, R rounds (default 3) of
#   babeltrace2 -c sink.utils.dummy TRACE     pure decoding, the floor for babeltrace2 tools
#   profopt-analyze TRACE -o OUT --force      with every output, decoding lanes as many
#                                             as CPUs (at most 4)
#   profopt-analyze TRACE -o OUT --force -j 1 the same on one decoding lane
# and one run of bench/bt2_pairing.py (python3-bt2 doing the same span pairing). Then it
# records a trace 10 times larger and measures profopt-analyze's peak RSS on it; with
# --scale-down it records a trace 10 times smaller instead (quicker: recording runs at about
# 20,000 events/s on 2 cores), so the growth is measured from N/10 to N events.
# Prints medians of wall time and peak RSS, and the ratios the README's targets are about.
# Traces are kept in $PROFOPT_BENCH_DIR (default /tmp/profopt-bench) and reused; programs
# come from $PROFOPT_BUILD_DIR/bin (default build/bin).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PROFOPT_BUILD_DIR:-$root/build}/bin
work=${PROFOPT_BENCH_DIR:-/tmp/profopt-bench}
events=5000000 rounds=3 scale=1 python=1
while [ $# -gt 0 ]; do
	case $1 in
	--events) events=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--no-scale) scale=0 ;;
	--scale-down) scale=-1 ;;
	--no-python) python=0 ;;
	*) echo "usage: $0 [--events N] [--rounds R] [--no-scale | --scale-down] [--no-python]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$work"

# About 108 events per step with these settings (40 kernels: launch + activity each).
record() { # record DIR EVENTS
	local steps=$(($2 / 108 + 1))
	rm -rf "$1"
	"$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" -o "$1" -- "$bin/profopt-sim" \
		--workers 2 --prefetch 4 --steps "$steps" --batch-size 8 --load-ms 0.05 \
		--preprocess-ms 0.02 --collate-ms 0.01 --h2d-ms 0.01 --forward-ms 0.02 \
		--backward-ms 0.02 --optimizer-ms 0.01 --kernels 40 --gpu-ms 0.2 --seed 3 >/dev/null
}

measure() { # measure NAME COMMAND...: appends "NAME wall_s max_rss_kib cpu_s" to $work/times
	local name=$1
	shift
	/usr/bin/time -f "$name %e %M %U %S" -a -o "$work/times" "$@" >/dev/null 2>"$work/last.err" || {
		echo "$name failed:" >&2; tail -n 5 "$work/last.err" >&2; exit 1; }
}

# Records $work/NAME with about EVENTS events unless it is there already.
ensure_trace() { # ensure_trace NAME EVENTS
	if [ ! -d "$work/$1" ] || [ "$(cat "$work/$1.events" 2>/dev/null)" != "$2" ]; then
		echo "Recording about $2 events into $work/$1..."
		record "$work/$1" "$2"
		babeltrace2 -c sink.utils.counter "$work/$1" 2>/dev/null |
			awk '/Event messages/ {count = $1} END {print count}' >"$work/$1.count"
		echo "$2" >"$work/$1.events"
	fi
	echo "Trace $1: $(du -sh "$work/$1" | cut -f1), $(cat "$work/$1.count") events"
}

ensure_trace trace "$events"
: >"$work/times"
for _ in $(seq "$rounds"); do
	measure dummy babeltrace2 -c sink.utils.dummy "$work/trace"
	measure analyze "$bin/profopt-analyze" "$work/trace" -o "$work/report" --force --quiet
	measure analyze_j1 "$bin/profopt-analyze" "$work/trace" -o "$work/report" --force --quiet -j 1
done
[ "$python" -eq 1 ] && measure python /usr/bin/python3 "$root/bench/bt2_pairing.py" "$work/trace"

if [ "$scale" -eq 1 ]; then
	ensure_trace trace10 $((events * 10))
	measure analyze10 "$bin/profopt-analyze" "$work/trace10" -o "$work/report10" --force --quiet
	measure dummy10 babeltrace2 -c sink.utils.dummy "$work/trace10"
elif [ "$scale" -eq -1 ]; then
	ensure_trace trace_tenth $((events / 10))
	measure analyze_tenth "$bin/profopt-analyze" "$work/trace_tenth" -o "$work/report_tenth" \
		--force --quiet
	measure dummy_tenth babeltrace2 -c sink.utils.dummy "$work/trace_tenth"
fi

/usr/bin/python3 - "$work/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, wall, rss, user, system = line.split()
    rows.setdefault(name, []).append((float(wall), int(rss), float(user) + float(system)))
med = {k: tuple(statistics.median(row[i] for row in v) for i in range(3))
       for k, v in rows.items()}
med = {k: (w, r / 1024, c) for k, (w, r, c) in med.items()}
print(f"{'run':<14} {'wall s':>9} {'CPU s':>9} {'peak RSS MiB':>13}"
      f"  (median of {len(rows['dummy'])})")
for k, (w, r, c) in med.items():
    print(f"{k:<14} {w:9.2f} {c:9.2f} {r:13.1f}")
d, a = med["dummy"], med["analyze"]
print(f"analyze / dummy wall: {a[0] / d[0]:.2f}x (target <= 1.25x);"
      f" CPU: {a[2] / d[2]:.2f}x")
print(f"analyze -j 1 / dummy wall: {med['analyze_j1'][0] / d[0]:.2f}x;"
      f" CPU: {med['analyze_j1'][2] / d[2]:.2f}x")
print(f"analyze RSS - dummy RSS: {a[1] - d[1]:.1f} MiB (target <= 32 MiB)")
if "python" in med:
    print(f"python / analyze wall: {med['python'][0] / a[0]:.1f}x (target >= 50x);"
          f" python / dummy: {med['python'][0] / d[0]:.1f}x (the most any babeltrace2 tool"
          " gets on one decoding thread)")
if "analyze10" in med:
    print(f"analyze RSS growth for a 10x trace: {med['analyze10'][1] / a[1]:.2f}x (target < 1.5x)")
if "analyze_tenth" in med:
    print(f"analyze RSS growth from a 10x smaller trace: {a[1] / med['analyze_tenth'][1]:.2f}x"
          " (target < 1.5x)")
PY
