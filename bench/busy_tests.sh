#!/usr/bin/env bash
# busy_tests.sh [-b BUSY] [-l LABEL | -R REGEX]...: the test suite on a machine whose cores
# other jobs keep busy (a benchmark of the tests, not a test). Starts BUSY processes that
# spin on the CPU (default: 3 per core, a load average of 6 to 8 on 2 cores, with the
# tests' own), runs tests/run.sh beside them (CTEST_ARGS from the -l and -R options: one
# label or regular expression each, all of them when none), stops them, and reports the
# load average it sampled every 5 s, the tests that passed, were skipped (with the line
# each printed to say why) and failed. On a busy machine a correct product passes or is
# skipped with "skipped: the machine was too busy ...", never fails.
# Environment: PROFOPT_BUILD_DIR (default build/), as tests/run.sh. Exits 1 when a test failed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROFOPT_BUILD_DIR:-$root/build}
busy=$((3 * $(nproc)))
selection=()
while getopts "b:l:R:" option; do
	case $option in
	b) busy=$OPTARG ;;
	l) selection+=(-L "$OPTARG") ;;
	R) selection+=(-R "$OPTARG") ;;
	*)
		echo "usage: busy_tests.sh [-b BUSY] [-l LABEL | -R REGEX]..." >&2
		exit 2
		;;
	esac
done
work=$(mktemp -d /tmp/profopt-busy-tests.XXXXXX)
spinners=()
sampler=
stop_load() {
	for pid in "${spinners[@]}" $sampler; do
		kill "$pid" 2>/dev/null || true
	done
	spinners=()
	sampler=
}
trap 'stop_load; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$busy"); do
	/bin/sh -c 'while :; do :; done' &
	spinners+=($!)
done
# The 1-minute load average, every 5 s, while the tests run.
while :; do
	cut -d' ' -f1 /proc/loadavg
	sleep 5
done >"$work/load" &
sampler=$!
sleep 20 # the load average rises to the spinners' count over about a minute

started=$(date +%s)
status=0
PROFOPT_BUILD_DIR=$build CTEST_ARGS="${selection[*]} ${CTEST_ARGS:-}" "$root/tests/run.sh" \
	>"$work/run.log" 2>&1 || status=$?
ended=$(date +%s)
stop_load

log=$build/Testing/Temporary/LastTest.log
echo "busy_tests: $busy spinning processes on $(nproc) cores, $((ended - started)) s"
sort -n "$work/load" | awk '{ v[NR] = $1; s += $1 } END {
	if (NR) printf "load average (1 min, every 5 s): min %.1f, mean %.1f, max %.1f\n",
		v[1], s / NR, v[NR] }'
# ctest's lines: "  3/9 Test  #35: e2e.live.change_at ........***Skipped   41.20 sec"
sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: ([^ ]+) [ .]*(\*\*\*)?([A-Za-z ]+[a-z]).*/\1 \3/p' \
	"$work/run.log" >"$work/results"
awk '$2 == "Passed" { passed++ } $2 == "Skipped" { skipped++ }
	$2 != "Passed" && $2 != "Skipped" { failed++ }
	END { printf "tests: %d passed, %d skipped, %d failed\n", passed, skipped, failed }' \
	"$work/results"
while read -r name result; do
	[ "$result" = Passed ] && continue
	echo "  $name: $result"
	# the test's own line that says why it was skipped, from ctest's log of the run
	[ -f "$log" ] && awk -v name="$name" '
		$0 ~ "^[0-9]+/[0-9]+ Testing: " { inside = ($3 == name) }
		inside && /^skipped: / { print "    " $0; exit }' "$log"
done <"$work/results"
if [ "$status" -ne 0 ]; then
	echo "tests/run.sh exited with $status; the end of its output:"
	tail -n 40 "$work/run.log"
fi
exit "$status"
