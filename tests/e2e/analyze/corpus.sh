#!/usr/bin/env bash
# Runs profopt-analyze on every trace of babeltrace2's own test corpus (valid and malformed,
# none holding profopt events): each must end with a one-line error and exit status 3 or 4
# (or 0), within a time limit, never a signal, and must leave no output behind.
set -u
analyze=$1
corpus=$2
[ -d "$corpus" ] || { echo "FAIL corpus not found at $corpus"; exit 1; }
work=$(mktemp -d /tmp/profopt-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin=$(dirname "$analyze")
. "$(dirname "$0")/lib.sh"
export PROFOPT_DECODE_LIMITS="cpu=20,mem=1024,wall=30"

passed=0 failed=0
while IFS= read -r metadata; do
	trace=$(dirname "$metadata")
	name=${trace#"$corpus"/}
	out="$work/out-$passed-$failed"
	timeout 60 "${analyzer_command[@]}" "$trace" -o "$out" >"$work/stdout" 2>"$work/stderr"
	status=$?
	lines=$(wc -l <"$work/stderr")
	problem=""
	case $status in
	0) [ -f "$out/summary.json" ] || problem="exit 0 without a report" ;;
	3 | 4) [ -e "$out" ] && problem="left output behind"
	       [ "$lines" -eq 1 ] || problem="error is $lines lines"
	       grep -q '^profopt-analyze: ' "$work/stderr" || problem="error lacks the program name" ;;
	124) problem="hung (killed after 60 s)" ;;
	*) problem="exit status $status" ;;
	esac
	if ls -a "$(dirname "$out")" | grep -q '\.profopt-'; then
		problem="left a staging directory"
	fi
	if [ -z "$problem" ]; then
		passed=$((passed + 1))
		echo "ok   $name: $status $(head -c 160 "$work/stderr")"
	else
		failed=$((failed + 1))
		echo "FAIL $name: $problem: $(head -c 300 "$work/stderr")"
	fi
	rm -rf "$out"
done < <(find "$corpus" -name metadata -type f | sort)
valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 10 ]
