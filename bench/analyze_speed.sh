#!/usr/bin/env bash
# analyze_speed.sh [--events N] [--rounds R] [--no-scale] [--no-python]: the speed and
# memory benchmark of profopt-analyze (a script to run by hand, not a timed test).
#
# Records a profopt-sim trace of at least N events (default 5 million: many steps, many
# short spans and GPU records), then times, alternating, R rounds (default 3) of
#   babeltrace2 -c sink.utils.dummy TRACE     pure decoding, the floor for babeltrace2 tools
#   profopt-analyze TRACE -o OUT --force      with every output
# and one run of bench/bt2_pairing.py (python3-bt2 doing the same span pairing). Then it
# records a trace 10 times larger and measures profopt-analyze's peak RSS on it.
# Prints medians of wall time and peak RSS, and the ratios the README's targets are about.
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
	--no-python) python=0 ;;
	*) echo "usage: $0 [--events N] [--rounds R] [--no-scale] [--no-python]" >&2; exit 2 ;;
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

measure() { # measure NAME COMMAND...: appends "NAME wall_s max_rss_kib" to $work/times
	local name=$1
	shift
	/usr/bin/time -f "$name %e %M" -a -o "$work/times" "$@" >/dev/null 2>"$work/last.err" || {
		echo "$name failed:" >&2; tail -n 5 "$work/last.err" >&2; exit 1; }
}

if [ ! -d "$work/trace" ] || [ "$(cat "$work/trace.events" 2>/dev/null)" != "$events" ]; then
	echo "Recording about $events events..."
	record "$work/trace" "$events"
	babeltrace2 -c sink.utils.counter "$work/trace" 2>/dev/null | awk '/Total/ {print $1}' \
		>"$work/trace.count" || true
	echo "$events" >"$work/trace.events"
fi
echo "Trace: $(du -sh "$work/trace" | cut -f1), $(cat "$work/trace.count" 2>/dev/null) events"

: >"$work/times"
for _ in $(seq "$rounds"); do
	measure dummy babeltrace2 -c sink.utils.dummy "$work/trace"
	measure analyze "$bin/profopt-analyze" "$work/trace" -o "$work/report" --force --quiet
done
[ "$python" -eq 1 ] && measure python /usr/bin/python3 "$root/bench/bt2_pairing.py" "$work/trace"

if [ "$scale" -eq 1 ]; then
	[ -d "$work/trace10" ] || { echo "Recording a 10x trace..."; record "$work/trace10" $((events * 10)); }
	measure analyze10 "$bin/profopt-analyze" "$work/trace10" -o "$work/report10" --force --quiet
	measure dummy10 babeltrace2 -c sink.utils.dummy "$work/trace10"
fi

/usr/bin/python3 - "$work/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, wall, rss = line.split()
    rows.setdefault(name, []).append((float(wall), int(rss)))
med = {k: (statistics.median(w for w, _ in v), statistics.median(r for _, r in v) / 1024)
       for k, v in rows.items()}
print(f"{'run':<10} {'wall s':>9} {'peak RSS MiB':>13}  (median of {len(rows['dummy'])})")
for k, (w, r) in med.items():
    print(f"{k:<10} {w:9.2f} {r:13.1f}")
d, a = med["dummy"], med["analyze"]
print(f"analyze / dummy wall: {a[0] / d[0]:.2f}x (target <= 1.25x)")
print(f"analyze RSS - dummy RSS: {a[1] - d[1]:.1f} MiB (target <= 32 MiB)")
if "python" in med:
    print(f"python / analyze wall: {med['python'][0] / a[0]:.1f}x (target >= 50x)")
if "analyze10" in med:
    print(f"analyze RSS growth for a 10x trace: {med['analyze10'][1] / a[1]:.2f}x (target < 1.5x)")
PY
