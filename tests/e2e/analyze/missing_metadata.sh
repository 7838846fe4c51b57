#!/usr/bin/env bash
# A process directory of the trace (ust/pid/NAME-PID-DATE/) whose metadata is missing, a
# dangling symbolic link, a FIFO, a directory or unreadable: exit 3 with one line naming the
# process directory and the cause, not a report without that process (for the training
# process: 0 steps and exit 0); with --salvage, a partial report whose warnings name the
# process left out. "Unreadable" runs profopt-analyze as nobody on a copy of the trace.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-missing-metadata.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # nobody reads the copies below
. "$(dirname "$0")/lib.sh"
[ -d "$work/valgrind" ] && chmod 777 "$work/valgrind" # for the runs as nobody
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# run STATUS DESCRIPTION TEXT... -- COMMAND...: exit STATUS, one line holding each TEXT.
run() {
	local want=$1 what=$2 texts=()
	shift 2
	while [ "$1" != -- ]; do texts+=("$1"); shift; done
	shift
	timeout 60 "$@" >"$work/out" 2>"$work/err"
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
analyzer "$work/trace" -o "$work/whole" -q || { echo "FAIL the whole trace does not analyse"; exit 1; }
main_pid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["main_pid"])' "$work/whole/summary.json")
main_process=$(basename "$(ls -d "$work"/trace/ust/pid/*-"$main_pid"-*)")
worker_process=$(cd "$work/trace/ust/pid" && ls | grep -v -- "-$main_pid-" | head -n 1)
[ -n "$main_process" ] && [ -n "$worker_process" ] || { echo "FAIL no main and worker process directories"; exit 1; }
echo "main process: $main_process, worker: $worker_process"

# damaged NAME PROCESS: a fresh copy of the trace in $work/NAME, the process directory in $dir.
damaged() {
	rm -rf "${work:?}/$1"
	cp -r "$work/trace" "$work/$1"
	dir="$work/$1/ust/pid/$2"
	rm "$dir/metadata"
}

damaged missing "$main_process"
run 3 "the training process's metadata missing" "$main_process/metadata" "missing" -- \
	"${analyzer_command[@]}" "$work/missing" -o "$work/r-missing" -q
[ -e "$work/r-missing" ] && fail "a report was written without the training process"

damaged worker-missing "$worker_process"
run 3 "a worker's metadata missing" "$worker_process/metadata" "missing" -- \
	"${analyzer_command[@]}" "$work/worker-missing" -o "$work/r-worker" -q

damaged dangling "$main_process"
ln -s "$work/nowhere/metadata" "$dir/metadata"
run 3 "metadata a dangling symbolic link" "$main_process/metadata" "dangling symbolic link" -- \
	"${analyzer_command[@]}" "$work/dangling" -o "$work/r-dangling" -q

damaged fifo "$main_process"
mkfifo "$dir/metadata"
run 3 "metadata a FIFO" "$main_process/metadata" "FIFO" -- \
	"${analyzer_command[@]}" "$work/fifo" -o "$work/r-fifo" -q

damaged directory "$main_process"
mkdir "$dir/metadata"
run 3 "metadata a directory" "$main_process/metadata" "a directory" -- \
	"${analyzer_command[@]}" "$work/directory" -o "$work/r-directory" -q

# Unreadable: the copy is readable by all but the main process's metadata.
rm -rf "$work/unreadable"
cp -r "$work/trace" "$work/unreadable"
chmod -R a+rX "$work/unreadable"
chmod 000 "$work/unreadable/ust/pid/$main_process/metadata"
mkdir -m 777 "$work/out-nobody"
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
run 3 "metadata unreadable (as nobody)" "$main_process/metadata" "Permission denied" -- \
	"${as_nobody[@]}" "${analyzer_command[@]}" "$work/unreadable" -o "$work/out-nobody/r" -q
chmod 644 "$work/unreadable/ust/pid/$main_process/metadata"
chmod 000 "$work/unreadable/ust/pid/$main_process"
run 3 "process directory unreadable (as nobody)" "$main_process: cannot be read: Permission denied" -- \
	"${as_nobody[@]}" "${analyzer_command[@]}" "$work/unreadable" -o "$work/out-nobody/r" -q

# --salvage: the other process is analysed, the report is partial and names the one left out.
run 0 "--salvage without the training process's metadata" -- \
	"${analyzer_command[@]}" "$work/missing" -o "$work/salvaged" -q --salvage
/usr/bin/python3 - "$work/salvaged/summary.json" "ust/pid/$main_process" <<'EOF' &&
import json, sys
summary = json.load(open(sys.argv[1]))
texts = [w["text"] for w in summary["trace"]["warnings"] if w["code"] == "skipped-traces"]
print(texts)
sys.exit(0 if summary["trace"]["partial"] and any(sys.argv[2] in t and "missing" in t for t in texts) else 1)
EOF
	ok "the salvaged report is partial and names the training process" ||
	fail "the salvaged report does not name the process left out"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
