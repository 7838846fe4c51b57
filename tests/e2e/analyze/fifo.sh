#!/usr/bin/env bash
# A FIFO, a socket or a directory where a trace file should be (metadata, a stream file, an
# index file under index/) and a --config FIFO: a one-line error naming the file and the
# cause within seconds (exit 3; 2 for --config), never a wait on the FIFO; with --salvage,
# the process is left out and the result's warnings say so.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-fifo.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
# A decoder that waits on a FIFO is stopped after 5 s (the default is two hours; 60 s
# under valgrind, where a whole analysis takes longer than 5 s).
wall=5
[ "${PROFOPT_VALGRIND:-0}" = 1 ] && wall=60
export PROFOPT_DECODE_LIMITS="wall=$wall"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# run STATUS DESCRIPTION TEXT... -- ARGS...: exit STATUS before the decoder's wall-clock
# limit has passed three times, one line holding each TEXT.
run() {
	local want=$1 what=$2 texts=()
	shift 2
	while [ "$1" != -- ]; do texts+=("$1"); shift; done
	shift
	timeout $((3 * wall)) "${analyzer_command[@]}" "$@" -q >"$work/out" 2>"$work/err"
	local got=$? problem=""
	[ "$got" -eq "$want" ] || problem="status $got, want $want"
	[ "$want" -eq 0 ] || [ "$(wc -l <"$work/err")" -eq 1 ] || problem="$problem; not one line"
	for text in "${texts[@]}"; do
		grep -qF -- "$text" "$work/err" || problem="$problem; no \"$text\""
	done
	[ -z "$problem" ] && ok "$what ($got): $(cat "$work/err")" ||
		fail "$what: $problem; stderr: $(head -c 400 "$work/err")"
}

"$bin/profopt-record" --buffers pid -o "$work/trace" -- "$bin/profopt-sim" --workers 1 \
	--steps 25 --load-ms 1 --forward-ms 1 --gpu-ms 1 --kernels 2 >/dev/null 2>&1 ||
	{ echo "FAIL record"; exit 1; }
proc_dir=$(ls -d "$work"/trace/ust/pid/*/ | head -n 1)
proc_dir=${proc_dir%/}
process=$(basename "$proc_dir")
stream=$(cd "$proc_dir" && ls | grep -E '_[0-9]+$' | head -n 1)
[ -n "$stream" ] && [ -f "$proc_dir/index/$stream.idx" ] || { echo "FAIL no stream with an index in $proc_dir"; exit 1; }

# damaged NAME: a fresh copy of the trace, the same process directory in $dir.
damaged() {
	rm -rf "$work/$1"
	cp -r "$work/trace" "$work/$1"
	dir="$work/$1/ust/pid/$process"
}
make_socket() { /usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"; }

damaged index-fifo
rm "$dir/index/$stream.idx" && mkfifo "$dir/index/$stream.idx"
run 3 "a FIFO as an index file" "index/$stream.idx" "FIFO" -- "$work/index-fifo" -o "$work/r1"
[ -e "$work/r1" ] && fail "output written for an unusable trace"

damaged stream-fifo
rm "$dir/$stream" && mkfifo "$dir/$stream"
run 3 "a FIFO as a stream file" "$process/$stream" "FIFO" -- "$work/stream-fifo" -o "$work/r2"

damaged metadata-fifo
rm "$dir/metadata" && mkfifo "$dir/metadata"
run 3 "a FIFO as metadata" "$process/metadata" "FIFO" -- "$work/metadata-fifo" -o "$work/r3"

damaged index-socket
rm "$dir/index/$stream.idx" && make_socket "$dir/index/$stream.idx"
run 3 "a socket as an index file" "index/$stream.idx" "socket" -- "$work/index-socket" -o "$work/r4"

damaged stream-dir
rm "$dir/$stream" && mkdir "$dir/$stream"
run 3 "a directory as a stream file" "$process/$stream" "directory" -- "$work/stream-dir" -o "$work/r5"

damaged index-dir
rm "$dir/index/$stream.idx" && mkdir "$dir/index/$stream.idx"
run 3 "a directory as an index file" "index/$stream.idx" "directory" -- "$work/index-dir" -o "$work/r6"

# --salvage leaves the process out and says so in the result.
run 0 "--salvage over a FIFO index file" -- "$work/index-fifo" -o "$work/salvaged" --salvage
/usr/bin/python3 - "$work/salvaged/summary.json" "$process" "index/$stream.idx" <<'EOF' &&
import json, sys
summary = json.load(open(sys.argv[1]))
texts = [w["text"] for w in summary["trace"]["warnings"] if w["code"] == "skipped-traces"]
ok = summary["trace"]["partial"] and any(sys.argv[2] in t and sys.argv[3] in t and "FIFO" in t for t in texts)
print(texts)
sys.exit(0 if ok else 1)
EOF
	ok "the salvaged report is partial and names the process and the FIFO" ||
	fail "the salvaged report does not say what was left out"

# --config given a FIFO: read without blocking, refused.
mkfifo "$work/rules.fifo"
run 2 "--config FIFO" "$work/rules.fifo" "FIFO" -- "$work/trace" -o "$work/r7" --config "$work/rules.fifo"
ls -a "$work" | grep -q '\.profopt-' && fail "a staging directory was left" || ok "no staging directory left"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
