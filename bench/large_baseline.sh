#!/usr/bin/env bash
# large_baseline.sh [BUILD_DIR]: what a comparison with a large --baseline summary.json
# costs (a benchmark, not a test). Makes baselines of 10,000, 100,000 and 400,000 steps from
# a golden trace's summary (tests/data/expected/main-loading.summary.json, its steps
# repeated), and times profopt-analyze --baseline on that golden trace against each: wall
# time and peak resident set (GNU time's %e and %M, of the parent and its analysis child).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d /tmp/profopt-large-baseline.XXXXXX)
trap 'rm -rf "$work"' EXIT
printf '%-10s %12s %10s %14s\n' steps "JSON MiB" "wall s" "peak RSS MiB"
for steps in 10000 100000 400000; do
	/usr/bin/python3 - "$root/tests/data/expected/main-loading.summary.json" "$steps" \
		"$work/baseline.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
steps, base = int(sys.argv[2]), summary["step_series"][5]
series = []
for i in range(steps):
    step = dict(base)
    step["index"], step["begin_ms"] = i, i * 10.0
    series.append(step)
summary["step_series"] = series
summary["steps"]["count"] = summary["steps"]["clean_count"] = steps
json.dump(summary, open(sys.argv[3], "w"))
PY
	rm -rf "$work/report"
	/usr/bin/time -f "%e %M" -o "$work/time" "$build/bin/profopt-analyze" --json-only \
		--baseline "$work/baseline.json" -o "$work/report" "$root/tests/data/traces/main-loading" \
		>/dev/null 2>&1 || echo "profopt-analyze failed for $steps steps" >&2
	read -r wall rss <"$work/time"
	printf '%-10s %12.1f %10s %14.0f\n' "$steps" \
		"$(($(stat -c %s "$work/baseline.json") / 1048576))" "$wall" "$((rss / 1024))"
done
