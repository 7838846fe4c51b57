#!/usr/bin/env bash
# run.sh BIN_DIR [user|pid]: damaged real traces through profopt-analyze, recorded with
# per-user buffers (the default: one trace directory holds every process's streams) or
# per-process ones (--buffers pid): each gives a clear one-line message and a documented
# exit status within its time limit, never a signal, a hang or partial output. Where only
# part of the trace is damaged, --salvage analyses the rest (in both layouts: it keeps the
# good packets of a damaged stream, not only the traces that decode whole), marks the
# report partial, leaves the trace as it was and no scratch copy behind. Also: SIGINT
# during an analysis leaves no output behind.
set -u
bin=$1
layout=${2:-user}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-damaged.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/tmp"
export PROFOPT_DECODE_LIMITS="cpu=10,mem=1024,wall=30" TMPDIR=$work/tmp
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $layout $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $layout $*"; }
# What a trace directory holds: names, sizes, modes and times of its entries.
digest() { find "$1" -printf '%P %s %m %T@\n' | sort | md5sum; }

# Small sub-buffers, so that each stream holds several packets for --salvage to keep.
buffers=(--subbuf-size 16k --num-subbuf 64)
[ "$layout" = pid ] && buffers+=(--buffers pid)
"$bin/profopt-record" "${buffers[@]}" -o "$work/trace" -- "$bin/profopt-sim" --workers 2 \
	--steps 60 --load-ms 1 --forward-ms 1 --kernels 4 --gpu-ms 1 >"$work/record.log" 2>&1 ||
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

# A partial report with steps in it: marked so, and naming the skipped trace or stream
# relative to the trace directory (a report says nothing of where the trace lay on the
# machine that analysed it).
partial_report() { # partial_report OUT TRACE_DIR
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["trace"]["partial"] and s["steps"]["count"] > 0 else 1)' "$1/summary.json" &&
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
			before=$(digest "$dir")
			analyze "$dir" "$out" --salvage
			if [ "$status" -ne 0 ] || ! partial_report "$out" "$dir"; then
				fail "$name --salvage: want a partial report with steps; got $status: $err"
			elif [ "$(digest "$dir")" != "$before" ]; then
				fail "$name --salvage: the trace directory changed"
			elif [ -n "$(ls -A "$work/tmp")" ]; then
				fail "$name --salvage: scratch files left behind: $(ls -A "$work/tmp")"
			else
				ok "$name --salvage: partial report"
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

echo "$layout: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
