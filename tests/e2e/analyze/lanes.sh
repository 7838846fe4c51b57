#!/usr/bin/env bash
# Decoding lanes: profopt-analyze decodes the streams of a recording on 1, 2 and 4
# babeltrace2 graphs at once (-j) and must write the same summary.json and timeline.json
# every time, also when no thread can be started (NO_THREADS_LIB, preloaded, makes
# pthread_create fail: decoding then runs on the calling thread). With PROFOPT_VALGRIND=1
# the 3-lane analysis also runs under valgrind's helgrind, which fails the test on any data
# race, inside libbabeltrace2 included.
set -eu
bin=$1 no_threads_lib=$2
work=$(mktemp -d /tmp/profopt-e2e.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"

"$bin/profopt-record" --buffers pid -o "$work/trace" -- "$bin/profopt-sim" --workers 3 --steps 150 \
	--load-ms 2 --forward-ms 1 --backward-ms 1 --kernels 8 --gpu-ms 1 --seed 11 \
	>"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
streams=$(find "$work/trace" -type f -path '*/ust/*' ! -name metadata ! -path '*/index/*' \
	-size +0 | wc -l)
echo "recording: $streams non-empty stream files"
[ "$streams" -ge 4 ] || { echo "FAIL expected at least 4 streams to share out"; exit 1; }

failures=0
for jobs in 1 2 4; do
	analyzer "$work/trace" -o "$work/report-$jobs" --json-only -q -j "$jobs" || {
		echo "FAIL -j $jobs: exit status $?"; failures=$((failures + 1)); continue; }
done
# Sanitizer builds: their runtime must come first, so the preload list is not checked.
if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	LD_PRELOAD="$no_threads_lib" "$bin/profopt-analyze" "$work/trace" -o "$work/report-0" \
	--json-only -q -j 4 2>"$work/no-threads.log"; then
	echo "ok   -j 4 without threads: analysed on the calling thread"
else
	echo "FAIL -j 4 without threads: exit status $?: $(cat "$work/no-threads.log")"
	failures=$((failures + 1))
fi
for jobs in 0 2 4; do
	for file in summary.json timeline.json; do
		if cmp -s "$work/report-1/$file" "$work/report-$jobs/$file"; then
			echo "ok   report-$jobs has the same $file as -j 1"
		else
			echo "FAIL report-$jobs has another $file than -j 1"
			diff <(tr ',' '\n' <"$work/report-1/$file") \
				<(tr ',' '\n' <"$work/report-$jobs/$file") | head -20
			failures=$((failures + 1))
		fi
	done
done
/usr/bin/python3 - "$work/report-4/summary.json" <<'PY' || failures=$((failures + 1))
import json, sys
summary = json.load(open(sys.argv[1]))
steps = summary["steps"]["count"]
print(("ok   " if steps == 150 else "FAIL ") + f"-j 4 finds {steps} steps == 150")
sys.exit(0 if steps == 150 else 1)
PY
for jobs in 0 5 x ""; do
	if "$bin/profopt-analyze" "$work/trace" -o "$work/bad" -j "$jobs" >"$work/bad.log" 2>&1; then
		echo "FAIL -j '$jobs' was accepted"; failures=$((failures + 1))
	elif [ "$(wc -l <"$work/bad.log")" -ne 1 ] || ! grep -q -- "--jobs\|-j" "$work/bad.log"; then
		echo "FAIL -j '$jobs': not one line naming the option:"; cat "$work/bad.log"
		failures=$((failures + 1))
	else
		echo "ok   -j '$jobs' is refused: $(cat "$work/bad.log")"
	fi
done

if [ "${PROFOPT_VALGRIND:-0}" = 1 ]; then
	valgrind --tool=helgrind --vgdb=no --error-exitcode=99 --log-file="$work/helgrind.%p.log" \
		"$bin/profopt-analyze" "$work/trace" -o "$work/report-hg" --json-only -q -j 3 || true
	bad=$(grep -L "ERROR SUMMARY: 0 errors" "$work"/helgrind.*.log || true)
	if [ -n "$bad" ]; then
		echo "FAIL helgrind found races:"; for log in $bad; do head -60 "$log"; done
		failures=$((failures + 1))
	else
		echo "ok   helgrind: no data race in $(ls "$work"/helgrind.*.log | wc -l) processes"
	fi
fi
valgrind_verdict || failures=$((failures + 1))
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
