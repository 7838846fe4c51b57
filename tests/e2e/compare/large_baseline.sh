#!/usr/bin/env bash
# A comparison with a baseline summary.json of 50,000 steps (24 MB) keeps a digest of the
# baseline's steps, not its text or a tree of it: profopt-analyze --baseline peaks under
# 100 MiB (it peaked at 160 MiB when the whole file and its parse tree were held, 1.2 GiB
# at 400,000 steps; bench/large_baseline.sh has the figures, docs/performance.md the
# budget). The baseline's figures must still be read: its step count and p50 appear in the
# comparison. A committed trace: no session daemon.
set -u
bin=$1
source_dir=$2
work=$(mktemp -d /tmp/profopt-large-baseline.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time"; exit 77; }
/usr/bin/python3 - "$source_dir/tests/data/expected/main-loading.summary.json" 50000 \
	"$work/baseline.json" <<'PY' || exit 1
import json, sys
summary = json.load(open(sys.argv[1]))
steps, base = int(sys.argv[2]), summary["step_series"][5]
series = []
for i in range(steps):
    step = dict(base)
    step["index"], step["begin_ms"], step["wall_ms"] = i, i * 10.0, 10.0 + i % 7
    series.append(step)
summary["step_series"] = series
summary["steps"]["count"] = summary["steps"]["clean_count"] = steps
json.dump(summary, open(sys.argv[3], "w"))
PY
/usr/bin/time -f "%M" -o "$work/peak" "$bin/profopt-analyze" --json-only -q \
	--baseline "$work/baseline.json" -o "$work/report" \
	"$source_dir/tests/data/traces/main-loading" 2>"$work/err"
status=$?
peak_kib=$(tail -1 "$work/peak")
failed=0
[ "$status" -eq 0 ] && echo "ok   compared (0)" || { echo "FAIL status $status: $(cat "$work/err")"; failed=1; }
if [ "$peak_kib" -lt $((100 * 1024)) ]; then
	echo "ok   peak resident set $((peak_kib / 1024)) MiB, under 100 MiB"
else
	echo "FAIL peak resident set $((peak_kib / 1024)) MiB, over 100 MiB"
	failed=1
fi
/usr/bin/python3 - "$work/report/summary.json" <<'PY' || failed=1
import json, sys
metrics = {m["name"]: m for m in json.load(open(sys.argv[1]))["comparison"]["metrics"]}
p50 = metrics["steps.p50_ms"]["old"]
print(("ok  " if p50 == 13.0 else "FAIL") + " the baseline's p50 step %s ms, designed 13" % p50)
sys.exit(0 if p50 == 13.0 else 1)
PY
exit $failed
