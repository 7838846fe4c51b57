#!/usr/bin/env bash
# bad_input.sh BIN_DIR DATA_DIR: torch.profiler files that are not traces, cut, damaged or
# hostile. Each must end with one line naming the file and the place, exit status 4 (the
# trace could not be decoded; 3 for two files of one rank, refused by the input check) and
# no report; a 100 MB name must cost neither memory nor
# time (it is cut); a directory of them is read like one file; Python calls nested past
# what the mapping keeps are left out and said.
set -u
bin=$1 data=$2
work=$(mktemp -d /tmp/profopt-kineto-bad.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
sample=$data/mi250-train/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz

# expect_error NAME FILE PATTERN: exit 4, one line matching PATTERN and naming FILE, no report
expect_error() {
	local name=$1 file=$2 pattern=$3 rc lines
	"$bin/profopt-analyze" --json-only -o "$work/out-$name" "$file" >"$work/$name.out" 2>&1
	rc=$?
	lines=$(grep -c . "$work/$name.out")
	if [ $rc != 4 ]; then fail "$name: exit $rc, not 4"; cat "$work/$name.out"; return; fi
	if [ "$lines" != 1 ] || ! grep -Eq -- "$(basename "$file").*$pattern" "$work/$name.out"; then
		fail "$name: not one line naming the file and /$pattern/:"; cat "$work/$name.out"; return
	fi
	if [ -e "$work/out-$name" ]; then fail "$name: a report was written"; return; fi
	passed=$((passed + 1)); echo "ok   $name: $(cat "$work/$name.out")"
}

echo '{"schemaVersion": 1, "a": [1, 2]}' >"$work/other.json"
expect_error not-kineto "$work/other.json" 'no "traceEvents" array'
printf 'PK\003\004 not json' >"$work/zip.json"
expect_error not-json "$work/zip.json" 'not a Kineto JSON trace: .* at byte [0-9]+'
head -c 3000 "$sample" >"$work/cut.json.gz"
expect_error cut-gzip "$work/cut.json.gz" 'cut'
zcat "$sample" | head -c 5000 >"$work/cut.json"
expect_error cut-json "$work/cut.json" 'cut: the JSON text ends after 5000 bytes'
zcat "$sample" | sed '0,/"ph": "X"/s//"ph": "X",, /' >"$work/damaged.json"
expect_error damaged "$work/damaged.json" 'at byte [0-9]+'

# A 100 MB kernel name: cut, the rest analysed, in bounded memory and time; a record with a
# negative duration: left out, and both said in the trace quality section.
python3 - "$work/bigname.json" <<'PY'
import json, sys
events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7,
           "ts": 1000, "dur": 500},
          {"ph": "X", "cat": "kernel", "name": "k" * (100 << 20), "pid": 0, "tid": 7,
           "ts": 1100, "dur": 100, "args": {"device": 0, "stream": 7, "correlation": 5}},
          {"ph": "X", "cat": "kernel", "name": "backwards", "pid": 0, "tid": 7,
           "ts": 1300, "dur": -100, "args": {"device": 0, "stream": 7, "correlation": 6}}]
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
if /usr/bin/time -f '%M %e' -o "$work/bigname.time" "$bin/profopt-analyze" --json-only \
	-o "$work/out-bigname" "$work/bigname.json" >"$work/bigname.out" 2>&1; then
	read -r rss_kb seconds <"$work/bigname.time"
	if [ "$rss_kb" -gt 204800 ]; then fail "bigname: peak RSS ${rss_kb} KiB for a 100 MB name"
	elif ! grep -q 'Steps: 1 ' "$work/bigname.out"; then fail "bigname: the step was lost"
	elif ! grep -q 'kineto-names-cut: 1 ' "$work/bigname.out"; then fail "bigname: the cut is not said"
	elif ! grep -q 'kineto-records-left-out: 1 ' "$work/bigname.out" ||
		! grep -q '^  partial' "$work/bigname.out"; then
		fail "bigname: the record with a negative duration is not said to be left out"
	else passed=$((passed + 1)); echo "ok   bigname: ${rss_kb} KiB, ${seconds} s"; fi
else
	fail "bigname: $(tail -n 1 "$work/bigname.out")"
fi

# Two files of the same rank in one directory: refused at the input check (exit 3), naming both.
ranks=$data/ranks-sampled
mkdir "$work/twice" && cp "$ranks/sampled_rank-0.json.gz" "$work/twice/a.json.gz" &&
	cp "$ranks/sampled_rank-0.json.gz" "$work/twice/b.json.gz"
"$bin/profopt-analyze" --json-only -o "$work/out-twice" "$work/twice" >"$work/twice.out" 2>&1
rc=$?
if [ $rc = 3 ] && [ "$(grep -c . "$work/twice.out")" = 1 ] &&
	grep -q 'b.json.gz: rank 0 again (.*a.json.gz is rank 0)' "$work/twice.out" &&
	[ ! -e "$work/out-twice" ]; then
	passed=$((passed + 1)); echo "ok   duplicate-rank: $(cat "$work/twice.out")"
else
	fail "duplicate-rank: exit $rc:"; cat "$work/twice.out"
fi

# A directory of them: read as one file is.
mkdir "$work/dir" && cp "$sample" "$work/dir/"
if "$bin/profopt-analyze" --json-only -o "$work/out-dir" "$work/dir" >"$work/dir.out" 2>&1 &&
	grep -q 'Steps: 2 (2 clean)' "$work/dir.out"; then
	passed=$((passed + 1)); echo "ok   directory"
else
	fail "directory:"; cat "$work/dir.out"
fi
# A profopt report (its summary.json and timeline.json) is not read as torch.profiler traces.
"$bin/profopt-analyze" --json-only -o "$work/report" "$sample" >/dev/null 2>&1
"$bin/profopt-analyze" --json-only -o "$work/out-report" "$work/report" >"$work/report.out" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q 'not a trace' "$work/report.out"; then
	passed=$((passed + 1)); echo "ok   report-directory: $(cat "$work/report.out")"
else
	fail "report-directory: exit $rc:"; cat "$work/report.out"
fi
# A rank of a job of two whose other rank is missing, with no collective matched: the
# outputs say no straggler can be ruled out and that no collective was matched, never a
# wait of "nan ms".
sed 's/ProfilerStep#3/ProfilerStepX3/' "$(dirname "$0")/../../fuzz/corpus-kineto/steps.json" >"$work/alone.json"
"$bin/profopt-analyze" -o "$work/out-alone" "$work/alone.json" >"$work/alone.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q 'No straggler can be ruled out: rank 0 missing' "$work/alone.out" &&
	grep -q 'no collective was matched' "$work/out-alone/index.html" &&
	! grep -qi 'nan ms' "$work/alone.out" "$work/out-alone/index.html"; then
	passed=$((passed + 1)); echo "ok   rank-missing-no-collective"
else
	fail "rank-missing-no-collective: exit $rc:"; cat "$work/alone.out"
fi
# Python calls nested 4,100 deep on one thread: the 4 past 4,096 are left out, said in the
# trace quality section, the report marked partial; the rest give the hotspots.
python3 - "$work/deep.json" <<'PY'
import json, sys
events = [{"ph": "X", "cat": "python_function", "name": "deep.py(%d): f%d" % (i + 1, i),
           "pid": 1, "tid": 1, "ts": 1000 + i, "dur": 100_000 - 2 * i} for i in range(4100)]
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
"$bin/profopt-analyze" --json-only -o "$work/out-deep" "$work/deep.json" >"$work/deep.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q 'kineto-python-calls-left-out: 4 torch.profiler python_function calls' "$work/deep.out" &&
	grep -q '"partial": true' "$work/out-deep/summary.json" && grep -q '^Hotspots' "$work/deep.out"; then
	passed=$((passed + 1)); echo "ok   python-calls-too-deep"
else
	fail "python-calls-too-deep: exit $rc:"; cat "$work/deep.out"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
