#!/usr/bin/env bash
# A --baseline summary.json with numbers that are not finite or out of the range of their
# meaning (infinite or negative step times, shares above 100%, fractional counts), or that
# is not a summary at all: exit 7 (the baseline could not be used, not 4: the trace is fine)
# with one line naming the baseline file and the member, no crash, no output left behind.
# A baseline path that is a FIFO is refused before the analysis, without blocking.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-bad-baseline.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../analyze/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 1 --steps 40 \
	--load-ms 1 --forward-ms 1 --gpu-ms 1 --kernels 2 >/dev/null 2>&1 || { echo "FAIL record"; exit 1; }
analyzer "$work/trace" -o "$work/base" -q || { echo "FAIL the baseline run"; exit 1; }
good="$work/base/summary.json"

# variant NAME PYTHON: a copy of the good summary.json edited by PYTHON over text s (a
# number is written as "1e999" literally: JSON has no infinity, a parser reads it as one).
variant() {
	/usr/bin/python3 - "$good" "$work/$1.json" "$2" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
exec(sys.argv[3])
open(sys.argv[2], "w").write(s)
EOF
}
# expect_baseline NAME MEMBER: exit 7, one line naming the file and MEMBER, nothing written.
expect_baseline() {
	local out="$work/out-$1"
	timeout 120 "${analyzer_command[@]}" "$work/trace" -o "$out" -q --baseline "$work/$1.json" \
		>"$work/stdout" 2>"$work/stderr"
	local status=$? problem=""
	[ "$status" -eq 7 ] || problem="status $status, want 7"
	[ "$(wc -l <"$work/stderr")" -eq 1 ] || problem="$problem; not one line"
	grep -qF "$work/$1.json" "$work/stderr" || problem="$problem; the file is not named"
	grep -qF -- "$2" "$work/stderr" || problem="$problem; \"$2\" is not named"
	grep -q "trace is malformed\|trace decoder" "$work/stderr" && problem="$problem; blames the trace"
	[ -e "$out" ] && problem="$problem; output written"
	[ -z "$problem" ] && ok "$1 (7): $(cat "$work/stderr")" ||
		fail "$1: $problem; stderr: $(head -c 400 "$work/stderr")"
}

variant p50-infinite 's = re.sub(r"\"p50_ms\": [0-9.]+", "\"p50_ms\": 1e999", s, count=1)'
expect_baseline p50-infinite "steps.p50_ms is 1e999"
variant wall-infinite 's = re.sub(r"\"wall_ms\":[0-9.]+", "\"wall_ms\":1e999", s, count=1)'
expect_baseline wall-infinite "step_series[0].wall_ms is 1e999"
variant wall-minus-infinite 's = re.sub(r"\"wall_ms\":[0-9.]+", "\"wall_ms\":-1e999", s, count=1)'
expect_baseline wall-minus-infinite "step_series[0].wall_ms"
variant wall-negative 's = s.replace("\"wall_ms\":", "\"wall_ms\":-")'
expect_baseline wall-negative "step_series[0].wall_ms is -"
variant category-infinite 's = re.sub(r"\"forward\":[0-9.]+", "\"forward\":1e999", s, count=1)'
expect_baseline category-infinite "step_series[0].categories_ms.forward is 1e999"
variant busy-over-100 's = re.sub(r"\"busy_pct\": [0-9.]+", "\"busy_pct\": 250", s, count=1)'
expect_baseline busy-over-100 "busy_pct is 250, not a share in percent"
variant count-fraction 's = re.sub(r"\"clean_count\": [0-9]+", "\"clean_count\": 2.5", s, count=1)'
expect_baseline count-fraction "steps.clean_count is 2.5"
variant rate-infinite 's = re.sub(r"\"steps_per_s\": [0-9.]+", "\"steps_per_s\": 1e400", s, count=1)'
expect_baseline rate-infinite "steps.steps_per_s is 1e400"
variant not-json 's = "NaN"'
expect_baseline not-json "bad number"
variant not-summary 's = "{\"schema\": \"something else\"}"'
expect_baseline not-summary "not a profopt summary.json"

# A FIFO as the baseline: refused at once, not waited on (exit 3, as a missing baseline).
mkfifo "$work/fifo.json"
timeout 20 "${analyzer_command[@]}" "$work/trace" -o "$work/out-fifo" -q --baseline "$work/fifo.json" \
	>"$work/stdout" 2>"$work/stderr"
status=$?
[ "$status" -eq 3 ] && grep -qF "$work/fifo.json is a FIFO" "$work/stderr" && ok "a FIFO baseline (3): $(cat "$work/stderr")" ||
	fail "a FIFO baseline: status $status, want 3: $(cat "$work/stderr")"

# The good baseline still compares.
"${analyzer_command[@]}" "$work/trace" -o "$work/out-good" -q --baseline "$good" 2>"$work/stderr" &&
	ok "the good baseline compares" || fail "the good baseline: $(cat "$work/stderr")"
ls -a "$work" | grep -q '\.profopt-' && fail "a staging directory was left" || ok "no staging directory left"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
