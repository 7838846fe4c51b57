#!/usr/bin/env bash
# Signals to profopt-analyze while its analysis child runs: SIGHUP, SIGINT, SIGTERM,
# SIGUSR1, SIGUSR2, SIGALRM, SIGQUIT and SIGPIPE end it with status 130 and one line, the
# child gone and no staging directory or report left; after SIGKILL the child dies too
# (it dies with its parent) and the next run removes the staging directory it left. A
# staging directory whose creator still runs is never removed.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-signals.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# About half a second of analysis: the signals below reach it while the child decodes.
"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 1 --steps 15000 \
	--load-ms 0 --preprocess-ms 0 --collate-ms 0 --h2d-ms 0 --forward-ms 0 --backward-ms 0 \
	--optimizer-ms 0 --gpu-ms 0 --kernels 1 >/dev/null 2>&1 || { echo "FAIL record"; exit 1; }

# start OUT: profopt-analyze in the background (SIGINT and SIGQUIT not ignored, as they are
# for a background job of a script); waits for its analysis child; sets pid and child.
start() {
	env --default-signal=INT,QUIT "${analyzer_command[@]}" "$work/trace" -o "$work/$1" -q \
		>/dev/null 2>"$work/stderr" &
	pid=$!
	child=""
	for _ in $(seq 500); do
		child=$(pgrep -P "$pid" | head -n 1)
		[ -n "$child" ] && ls -a "$work" | grep -q "^\.$1\.profopt-" && return 0
		sleep 0.01
	done
	return 1
}
# gone PID: the process has ended (reaped, or a zombie nobody reaped yet).
gone() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
	[ "$state" = Z ] || [ "$state" = X ]
}
# wait_gone PID: within half a second (the analysis alone takes longer).
wait_gone() { for _ in $(seq 50); do gone "$1" && return 0; sleep 0.01; done; return 1; }
staging_of() { ls -a "$work" | grep "^\.$1\.profopt-"; }
# Under valgrind, a process killed by SIGKILL leaves a log without its error summary: the
# logs of the processes this test kills on purpose are set aside.
killed_on_purpose() { for p in "$@"; do rm -f "$work/valgrind/$p.log"; done; }

for signal in HUP INT TERM USR1 USR2 ALRM QUIT PIPE; do
	out="r-$signal"
	if ! start "$out"; then
		fail "SIG$signal: the analysis child did not start"
		continue
	fi
	kill "-$signal" "$pid"
	wait "$pid"
	status=$?
	problem=""
	[ "$status" -eq 130 ] || problem="status $status, want 130"
	[ "$(wc -l <"$work/stderr")" -eq 1 ] && grep -q "interrupted by SIG$signal" "$work/stderr" ||
		problem="$problem; stderr: $(head -c 200 "$work/stderr")"
	wait_gone "$child" || problem="$problem; the analysis child $child still runs"
	[ -z "$(staging_of "$out")" ] || problem="$problem; staging left: $(staging_of "$out")"
	[ -e "$work/$out" ] && problem="$problem; a report was written"
	[ -z "$problem" ] && ok "SIG$signal: exit 130, child gone, nothing left: $(cat "$work/stderr")" ||
		fail "SIG$signal: $problem"
	killed_on_purpose "$child"
done

# SIGKILL: nothing to catch; the child dies with its parent, the staging directory stays
# until the next run, which removes it and writes the report.
if start r-kill; then
	kill -KILL "$pid"
	wait "$pid"
	wait_gone "$child" && ok "SIGKILL: the analysis child died with its parent" ||
		fail "SIGKILL: the analysis child $child still runs ($(cat "/proc/$child/stat" 2>/dev/null))"
	stale=$(staging_of r-kill)
	[ -n "$stale" ] && ok "SIGKILL left $stale" || fail "SIGKILL: no staging directory to recover"
	sleep 3 # longer than the analysis: a child that outlived its parent has written by now
	[ -n "$stale" ] && [ -e "$work/$stale/summary.json" ] &&
		fail "SIGKILL: the analysis went on and wrote $stale/summary.json"
	[ -e "$work/r-kill" ] && fail "SIGKILL: a report appeared"
	killed_on_purpose "$pid" "$child"
	analyzer "$work/trace" -o "$work/r-kill" -q 2>"$work/stderr" && [ -f "$work/r-kill/summary.json" ] &&
		ok "the next run writes the report" || fail "the next run: $(cat "$work/stderr")"
	[ -z "$(staging_of r-kill)" ] && ok "the next run removed the stale staging directory" ||
		fail "stale staging left: $(staging_of r-kill)"
else
	fail "SIGKILL: the analysis child did not start"
fi

# Staging directories beside a report: the creator's pid and start time are in the name.
# One of a live process (this shell) is kept; one of a pid no process has, or of a pid
# whose process started at another time, is removed.
my_start=$(awk '{sub(/.*\) /, ""); print $20}' /proc/$$/stat)
sh -c 'exit 0' &
dead_pid=$!
wait "$dead_pid"
mkdir -p "$work/.r-own.profopt-$$-$my_start-AAAAAA" "$work/.r-own.profopt-$dead_pid-1-BBBBBB" \
	"$work/.r-own.profopt-$$-$((my_start + 1))-CCCCCC" "$work/.r-own.profopt-DDDDDD"
for dir in "$work"/.r-own.profopt-*; do
	chmod 755 "$dir" # a staging directory others can write is not recovered
	touch "$dir/.profopt-staging" "$dir/summary.json"
done
analyzer "$work/trace" -o "$work/r-own" -q 2>"$work/stderr" || fail "run beside staging directories: $(cat "$work/stderr")"
[ -d "$work/.r-own.profopt-$$-$my_start-AAAAAA" ] && ok "a live run's staging directory is kept" ||
	fail "a live run's staging directory was removed"
[ ! -e "$work/.r-own.profopt-$dead_pid-1-BBBBBB" ] && ok "a dead run's staging directory is removed" ||
	fail "a dead run's staging directory is left"
[ ! -e "$work/.r-own.profopt-$$-$((my_start + 1))-CCCCCC" ] &&
	ok "a staging directory whose pid now names another process is removed" ||
	fail "a staging directory of a reused pid is left"
[ -d "$work/.r-own.profopt-DDDDDD" ] && ok "a staging directory naming no run is kept" ||
	fail "a staging directory naming no run was removed"

valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
