#!/usr/bin/env bash
# Damaged real traces through profopt-analyze: each gives a clear one-line message and a
# documented exit status within its time limit, never a signal, a hang or partial output.
# Where only part of the trace is damaged, --salvage analyses the rest and marks the report
# partial. Also: SIGINT during an analysis leaves no output behind.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-damaged.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PROFOPT_DECODE_LIMITS="cpu=10,mem=1024,wall=30"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# Per-process buffers: one trace per process, so that damage in a worker's trace leaves the
# others for --salvage (it salvages whole traces; a per-user trace is one trace).
"$bin/profopt-record" --buffers pid -o "$work/trace" -- "$bin/profopt-sim" --workers 2 --steps 60 \
	--load-ms 1 --forward-ms 1 --kernels 4 --gpu-ms 1 >"$work/record.log" 2>&1 ||
	{ cat "$work/record.log"; exit 1; }
/usr/bin/python3 "$here/make_damaged.py" "$work/trace" "$work/damaged" || exit 1

# analyze CASE_DIR OUT [ARGS]: sets status, lines (stderr line count), err
analyze() {
	local dir=$1 out=$2
	shift 2
	timeout 120 "$bin/profopt-analyze" "$dir" -o "$out" "$@" >"$work/stdout" 2>"$work/stderr"
	status=$?
	lines=$(wc -l <"$work/stderr")
	err=$(head -c 300 "$work/stderr")
}

clean_failure() { # a documented failure status, one line, no output, no staging left
	[ "$status" -eq 3 ] || [ "$status" -eq 4 ] || return 1
	[ "$lines" -eq 1 ] && [ ! -e "$1" ] && ! ls -a "$work" | grep -q '\.profopt-'
}

# A partial report: marked so, and naming the skipped trace relative to the trace directory
# (a report says nothing of where the trace lay on the machine that analysed it).
partial_report() { # partial_report OUT TRACE_DIR
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["trace"]["partial"] else 1)' "$1/summary.json" &&
		! grep -q "$2" "$1/summary.json" "$1/index.html"
}

while read -r name expectation; do
	dir="$work/damaged/$name"
	out="$work/out-$name"
	analyze "$dir" "$out"
	case $expectation in
	error)
		clean_failure "$out" && ok "$name: exit $status: $err" ||
			fail "$name: want a one-line error (3 or 4) and no output; got $status: $err" ;;
	error-or-ok)
		if [ "$status" -eq 0 ] && [ -f "$out/summary.json" ]; then ok "$name: analysed"
		elif clean_failure "$out"; then ok "$name: exit $status: $err"
		else fail "$name: got $status: $err"; fi ;;
	salvage)
		if [ "$status" -eq 0 ]; then
			ok "$name: the decoder read it whole"
		elif clean_failure "$out"; then
			ok "$name: exit $status: $err"
			analyze "$dir" "$out" --salvage
			if [ "$status" -eq 0 ] && partial_report "$out" "$dir"; then
				ok "$name --salvage: partial report"
			else
				fail "$name --salvage: want a partial report; got $status: $err"
			fi
		else
			fail "$name: got $status: $err"
		fi ;;
	esac
	rm -rf "$out"
done <"$work/damaged/cases.txt"

# A signal in the middle of an analysis (sent as soon as the staging directory exists, so
# while the decoder runs): exit 130 (interrupted, for either signal) and nothing written;
# or, when the analysis was already done, a complete report.
interrupt() { # interrupt SIGNAL EXPECTED_STATUS
	local out="$work/interrupted-$1" tries=0
	"$bin/profopt-analyze" "$work/trace" -o "$out" >/dev/null 2>"$work/stderr" &
	local pid=$!
	while ! ls -a "$work" | grep -q "^\.interrupted-$1\.profopt-" && [ $tries -lt 1000 ]; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
		tries=$((tries + 1))
	done
	kill -"$1" "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	if { [ "$status" -eq "$2" ] && [ ! -e "$out" ]; } ||
		{ [ "$status" -eq 0 ] && [ -f "$out/summary.json" ]; }; then
		ok "$1: exit $status, no partial output"
	else
		fail "$1: exit $status, want $2; $(cat "$work/stderr")"
	fi
	rm -rf "$out"
}
interrupt INT 130
interrupt TERM 130
ls -a "$work" | grep -q '\.profopt-' && fail "a staging directory was left behind"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
