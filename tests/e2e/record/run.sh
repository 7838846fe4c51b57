#!/usr/bin/env bash
# run.sh PROFOPT_RECORD RECORD_WORKLOAD CASE [PROFOPT_SIM [PROFOPT_ANALYZE]]: one end-to-end case of
# profopt-record, run next to a private session daemon (tests/lib/with-sessiond.sh).
# Prints one line per check and "N passed, N failed".
set -u
record=$1 workload=$2 case=$3 sim=${4:-} analyze=${5:-}
# own_sessiond runs without with-sessiond.sh: as root, in a mount namespace of its own
# where no session daemon is reachable. shared_sessiond too, in a PID namespace as well, so
# that the daemon it leaves running dies with the test.
if [ "$case" = own_sessiond ] && [ "$(id -u)" -eq 0 ] && [ -z "${PROFOPT_RECORD_NS:-}" ]; then
	PROFOPT_RECORD_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi
if { [ "$case" = shared_sessiond ] || [ "$case" = killed ]; } && [ "$(id -u)" -eq 0 ] &&
	[ -z "${PROFOPT_RECORD_NS:-}" ]; then
	PROFOPT_RECORD_NS=1 exec unshare --mount --pid --fork --kill-child --mount-proc \
		--propagation private "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-record-test.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
passed=0 failed=0

check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		passed=$((passed + 1)); echo "ok   $what"
	else
		failed=$((failed + 1)); echo "FAIL $what"
	fi
}

not() { ! "$@"; }

# Whether process PID runs (a zombie does not: in a PID namespace of its own, this script
# is the init that reaps the orphans, when it gets to it).
running() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"
}

# run_record ARGS...: runs profopt-record; status in $status, output in $work/out, $work/err.
run_record() {
	"$record" "$@" >"$work/out" 2>"$work/err"
	status=$?
}

one_error_line() { # the error is one "profopt-record: " line mentioning $1
	[ "$(grep -vc '^profopt-record: no session daemon\|^profopt-record: session daemon started' \
		"$work/err")" -eq 1 ] && grep -q "^profopt-record: .*$1" "$work/err"
}

check_trace() { # check_trace MODE DIR
	if /usr/bin/python3 "$here/check_trace.py" "$1" "$2" >"$work/check" 2>&1; then
		passed=$((passed + 1)); sed 's/^/     /' "$work/check"; echo "ok   trace checks ($1)"
	else
		failed=$((failed + 1)); sed 's/^/     /' "$work/check"; echo "FAIL trace checks ($1)"
	fi
}

case_pipeline() {
	run_record -o "$work/trace" -- "$workload" pipeline
	check "recording the pipeline exits 0 (got $status)" [ "$status" -eq 0 ]
	check "the trace path is the last line of stdout" \
		[ "$(tail -n 1 "$work/out")" = "$work/trace" ]
	check "stderr says no events were discarded" grep -q "no events were discarded" "$work/err"
	check "one trace of per-user buffers (ust/uid), none per process" \
		[ -d "$work/trace/ust/uid" ] && [ ! -e "$work/trace/ust/pid" ]
	check_trace pipeline "$work/trace"
	cat "$work/err"
	run_record --buffers pid -o "$work/trace-pid" -- "$workload" pipeline
	check "--buffers pid: one trace per process (3 under ust/pid)" \
		[ "$(ls "$work/trace-pid/ust/pid" | wc -l)" -eq 3 ]
	check_trace pipeline "$work/trace-pid"
	run_record --buffers tid -o "$work/trace-bad" -- "$workload" pipeline
	check "--buffers tid is a usage error (got $status)" [ "$status" -eq 2 ]
	check "--buffers tid is refused in one line" one_error_line "invalid --buffers 'tid'"
}

case_exit_status() {
	run_record -o "$work/t3" -- "$workload" exit 3
	check "a command exiting 3 gives 3 (got $status)" [ "$status" -eq 3 ]
	check "its trace is kept" [ -d "$work/t3/ust" ]
	run_record -o "$work/t0" -- "$workload" exit 0
	check "a command exiting 0 gives 0 (got $status)" [ "$status" -eq 0 ]
	run_record -o "$work/t9" -- /bin/sh -c 'kill -9 $$'
	check "a command killed by SIGKILL gives 137 (got $status)" [ "$status" -eq 137 ]
	cd "$work" && mkdir default && cd default || return
	run_record -- "$workload" exit 0
	check "the default trace directory is ./profopt-trace-YYYYMMDD-HHMMSS" \
		[ -d "$(tail -n 1 "$work/out")" ] && [[ "$(tail -n 1 "$work/out")" =~ \
		^$work/default/profopt-trace-[0-9]{8}-[0-9]{6}$ ]]
	cd "$work" || return
	check "the session daemon found running is left running" \
		kill -0 "$(cat "$(daemon_pid_file)")"
}

daemon_pid_file() {
	if [ "$(id -u)" -eq 0 ]; then
		echo /run/lttng/lttng-sessiond.pid
	else
		echo "${LTTNG_HOME:-$HOME}/.lttng/lttng-sessiond.pid"
	fi
}

# Where no session daemon is reachable: a private /run/lttng and /dev/shm as root (in the
# mount namespace run.sh made), a private LTTNG_HOME.
no_daemon_here() {
	if [ "$(id -u)" -eq 0 ]; then
		mkdir -p /run/lttng && mount -t tmpfs profopt-test /run/lttng &&
			mount -t tmpfs profopt-test /dev/shm || { echo "FAIL private /run/lttng"; return 1; }
	fi
	export LTTNG_HOME=$work/home HOME=$work/home
	mkdir -p "$LTTNG_HOME"
}

case_own_sessiond() {
	no_daemon_here || return
	run_record -o "$work/trace" -- "$workload" exit 5
	check "recording without a daemon works and passes status 5 through (got $status)" \
		[ "$status" -eq 5 ] && [ -d "$work/trace/ust" ]
	check "it says it starts a session daemon" grep -q "starting lttng-sessiond" "$work/err"
	local pid
	pid=$(sed -n 's/.*session daemon started (pid \([0-9]*\)).*/\1/p' "$work/err")
	check "it names the daemon's pid ($pid)" [ -n "$pid" ] && [ "$pid" -gt 0 ]
	check "the daemon it started is stopped at the end" [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null
	check "no daemon pid file is left" [ ! -s "$(daemon_pid_file)" ]
	cat "$work/err"
}

# Two recordings on a machine where no session daemon runs: A starts the daemon, B uses
# it, and A ends while B still records. A must not stop the daemon under B (it did: B lost
# its session, "Failed to stop tracing: Session name not found", exit 1, 47 of 300 steps).
case_shared_sessiond() {
	no_daemon_here || return
	# A runs 50 steps once B has started; B runs 300 steps, then waits until A has ended.
	"$record" -o "$work/ta" -- /bin/sh -c "until [ -e '$work/b-ready' ]; do sleep 0.1; done
		exec '$sim' --workers 1 --steps 50" >"$work/a.out" 2>"$work/a.err" &
	local a=$! b waited=0 pid
	until grep -q "session daemon started" "$work/a.err" || [ $waited -ge 600 ]; do
		sleep 0.1; waited=$((waited + 1))
	done
	"$record" -o "$work/tb" -- /bin/sh -c "touch '$work/b-ready'
		'$sim' --workers 1 --steps 300 || exit 1
		until [ -e '$work/a-done' ]; do sleep 0.1; done" >"$work/b.out" 2>"$work/b.err" &
	b=$!
	wait "$a"
	status=$?
	touch "$work/a-done"
	check "A, which started the daemon, exits 0 (got $status)" [ "$status" -eq 0 ]
	pid=$(sed -n 's/.*session daemon started (pid \([0-9]*\)).*/\1/p' "$work/a.err")
	check "A says in one line that it leaves its daemon ($pid) running for another session" \
		[ "$(grep -c "left .*running" "$work/a.err")" -eq 1 ] &&
		grep -q "pid $pid" <(grep "left .*running" "$work/a.err")
	check "the daemon still runs after A" running "$pid"
	wait "$b"
	status=$?
	check "B, which found the daemon running, exits 0 (got $status)" [ "$status" -eq 0 ]
	check "B stopped tracing (no 'Failed to stop tracing')" \
		not grep -q "Failed to stop tracing" "$work/b.err"
	"$analyze" --json-only -o "$work/ra" "$work/ta" >/dev/null 2>"$work/ra.err"
	"$analyze" --json-only -o "$work/rb" "$work/tb" >/dev/null 2>"$work/rb.err"
	check "A holds its 50 steps and B its 300" /usr/bin/python3 - "$work" <<'PY'
import json, sys
a = json.load(open(sys.argv[1] + "/ra/summary.json"))["steps"]["count"]
b = json.load(open(sys.argv[1] + "/rb/summary.json"))["steps"]["count"]
print("     A: %d steps, B: %d steps" % (a, b))
sys.exit(0 if (a, b) == (50, 300) else 1)
PY
	sed 's/^/     A: /' "$work/a.err"
	sed 's/^/     B: /' "$work/b.err"
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
}

# The start time (clock ticks since boot) of process $1, as /proc/PID/stat says.
start_time() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d ' ' -f 20
}

# The sessions the daemon lists, one name a line.
sessions() {
	lttng list 2>/dev/null | sed -n 's/^ *[0-9]*) \([^ ]*\) .*/\1/p'
}

# Whether no lttng-consumerd runs, within 10 s (it may end just after its daemon).
consumer_ended() {
	local p
	for _ in $(seq 100); do
		for p in $(pgrep -x lttng-consumerd); do
			running "$p" && break
			p=
		done
		[ -z "${p:-}" ] && return 0
		sleep 0.1
	done
	return 1
}

# profopt-record --live killed by SIGKILL leaves the daemon it started, both sessions (still
# tracing) and its scratch directory. The next profopt-record removes what it left, in one
# line, and touches nothing else: the session of a recording that still runs, sessions named
# otherwise, named as an earlier version did, or of another PID namespace, and directories
# named like scratch directories that are not proved to be one. The last recorder to end
# stops the daemon once no session lives in it. (Runs in PID and mount namespaces of its own.)
case_killed() {
	no_daemon_here || return
	export TMPDIR=$work/tmp
	mkdir -p "$TMPDIR"
	local a b ns self=$$ gone=2147483 kept daemon name
	"$record" --live -o "$work/ta" -- "$workload" wait "$work/a-ready" >"$work/a.out" 2>"$work/a.err" &
	a=$!
	for _ in $(seq 300); do [ -e "$work/a-ready" ] && break; sleep 0.1; done
	# B records from before A is killed to after C cleaned up.
	"$record" -o "$work/tb" -- "$workload" wait "$work/b-ready" >"$work/b.out" 2>"$work/b.err" &
	b=$!
	for _ in $(seq 300); do [ -e "$work/b-ready" ] && break; sleep 0.1; done
	kill -9 "$a"
	wait "$a" 2>/dev/null
	kill "$(sed -n 's/^command_pid //p' "$work/ta/profopt-recording.txt")"
	check "A (--live) and B recorded until A was killed" [ -e "$work/a-ready" ] && [ -e "$work/b-ready" ]
	check "A left two sessions named with its pid, start time and PID namespace" \
		[ "$(sessions | grep -c "^profopt-\(record\|live\)-$a-[0-9]*-[0-9]*")" -eq 2 ]
	check "A left its scratch directory" ls -d "$TMPDIR/profopt-record-$a-"* >/dev/null
	# What C must leave alone: sessions named otherwise, as an earlier version named them, of
	# another PID namespace; directories named like scratch directories without the proof.
	# And what it must remove: a session of a pid that another process uses now.
	ns=$(stat -L -c %i /proc/self/ns/pid)
	lttng create mine -o "$work/mine" >/dev/null
	lttng create "profopt-record-$gone-20260101-120000" -o "$work/old" >/dev/null
	lttng create "profopt-record-$gone-1-$((ns + 1))-20260101-120000" -o "$work/other-ns" >/dev/null
	lttng create "profopt-check-$self-$(($(start_time "$self") + 1))-$ns" -o "$work/reused" >/dev/null
	mkdir -p "$TMPDIR/profopt-record-$gone-1-$ns-nomark" "$TMPDIR/profopt-record-$gone-1-$ns-others"
	echo "$gone-1-$ns" >"$TMPDIR/profopt-record-$gone-1-$ns-others/.profopt-record"
	chown -R nobody "$TMPDIR/profopt-record-$gone-1-$ns-others"
	ln -s "$work/mine" "$TMPDIR/profopt-record-$gone-1-$ns-linked"
	run_record -o "$work/tc" -- "$workload" exit 0
	check "C, after A was killed, exits 0 (got $status)" [ "$status" -eq 0 ]
	check "C says in one line what it cleaned up after A (pid $a)" \
		[ "$(grep -c "pid $a," "$work/err")" -eq 1 ] &&
		grep -q "^profopt-record: cleaned up after profopt-record pid $a, which ended without doing so: destroyed its 2 session(s) (its trace $work/ta is closed now); removed its scratch directory $TMPDIR/profopt-record-$a-[0-9]*-$ns-......; the session daemon it started (pid [0-9]*) stops when this recording ends, unless another session lives in it$" "$work/err"
	check "C says it destroyed the session of pid $self, which another process uses now" \
		grep -q "^profopt-record: cleaned up after profopt-record pid $self, .*destroyed its 1 session(s)$" "$work/err"
	check "A's sessions and the reused pid's are gone" \
		not grep -q "^profopt-[a-z]*-\($a\|$self\)-" <(sessions)
	check "A's scratch directory is gone" not ls -d "$TMPDIR/profopt-record-$a-"* 2>/dev/null
	kept=$(sessions | grep -c "^mine$\|^profopt-record-$gone-20260101-120000$\|^profopt-record-$gone-1-$((ns + 1))-\|^profopt-record-$b-")
	check "B's session, and those named otherwise, as before or of another namespace, stay ($kept of 4)" \
		[ "$kept" -eq 4 ]
	check "directories not proved to be scratch directories stay" \
		[ -d "$TMPDIR/profopt-record-$gone-1-$ns-nomark" ] &&
		[ -e "$TMPDIR/profopt-record-$gone-1-$ns-others/.profopt-record" ] &&
		[ -L "$TMPDIR/profopt-record-$gone-1-$ns-linked" ] && [ -d "$work/mine" ]
	sed 's/^/     C: /' "$work/err"
	for name in mine "profopt-record-$gone-20260101-120000" \
		"profopt-record-$gone-1-$((ns + 1))-20260101-120000"; do
		lttng destroy "$name" >/dev/null
	done
	daemon=$(cat "$(daemon_pid_file)")
	kill -TERM "$b"
	wait "$b"
	status=$?
	check "B ends with its command's status 42 (got $status)" [ "$status" -eq 42 ]
	check "B says nothing of A" not grep -q "cleaned up" "$work/b.err"
	check "B, the last to end, stopped the daemon that A started (pid $daemon), and its consumer" \
		not running "$daemon" && consumer_ended
	sed 's/^/     B: /' "$work/b.err"
}

# A session daemon that does not answer (stopped with SIGSTOP): profopt-record gives up
# after PROFOPT_SESSIOND_TIMEOUT seconds with one line naming the daemon's pid and exit
# status 3, ends at once on SIGINT or SIGTERM while it waits, and --check says the daemon
# does not answer. Every run is guarded by timeout(1): the recorder used to hang forever.
case_sessiond_stopped() {
	local pid
	pid=$(cat "$(daemon_pid_file)")
	kill -STOP "$pid" || { echo "FAIL cannot stop the session daemon"; return; }
	trap 'kill -CONT '"$pid"' 2>/dev/null; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
	PROFOPT_SESSIOND_TIMEOUT=2 run_record_guarded -o "$work/t1" -- /bin/sh -c "touch '$work/ran'"
	check "a stopped daemon: exit status 3 (got $status)" [ "$status" -eq 3 ]
	check "one error line names the daemon's pid ($pid) and says it did not answer" \
		one_error_line "pid $pid.*did not answer"
	check "the command did not run" [ ! -e "$work/ran" ]
	check "no trace directory is left behind" [ ! -e "$work/t1" ]
	cat "$work/err"
	PROFOPT_SESSIOND_TIMEOUT=2 run_record_guarded --check
	check "--check with a stopped daemon exits 1 (got $status)" [ "$status" -eq 1 ]
	check "--check says the daemon ($pid) does not answer" \
		grep -qE "^FAIL +session daemon +.*pid $pid.*not answer" "$work/out"
	grep "session daemon" "$work/out"
	stopped_signal_case TERM "$pid"
	stopped_signal_case INT "$pid"
	# The daemon stops answering while the command runs: stopping tracing times out. The
	# calls before must succeed, hence a deadline a busy machine cannot miss.
	kill -CONT "$pid"
	PROFOPT_SESSIOND_TIMEOUT=10 run_record_guarded -o "$work/t2" -- \
		/bin/sh -c "kill -STOP $pid; touch '$work/ran2'"
	check "a daemon stopped during the command: exit status 3 (got $status)" [ "$status" -eq 3 ]
	check "the command ran" [ -e "$work/ran2" ]
	check "one error line names the daemon's pid ($pid) and says it did not answer" \
		one_error_line "pid $pid.*did not answer"
	cat "$work/err"
	kill -CONT "$pid"
}

# run_record_guarded ARGS...: run_record, killed after 60 s (status 137).
run_record_guarded() {
	timeout -s KILL 60 "$record" "$@" >"$work/out" 2>"$work/err"
	status=$?
}

# Whether PID, or a child of it, holds a socket: it is talking to the session daemon.
talks_to_daemon() {
	local p
	for p in "$1" $(pgrep -P "$1"); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'socket:' && return 0
	done
	return 1
}

# SIGNAL sent to profopt-record while it waits for the stopped daemon ends it: 128+N.
stopped_signal_case() {
	local signal=$1 pid=$2 recorder waited=0 number
	number=$(kill -l "$signal")
	PROFOPT_SESSIOND_TIMEOUT=600 "$record" -o "$work/ts-$signal" -- \
		/bin/sh -c "touch '$work/ran-$signal'" >"$work/out" 2>"$work/err" &
	recorder=$!
	until talks_to_daemon "$recorder" || [ $waited -ge 300 ]; do
		sleep 0.1; waited=$((waited + 1))
	done
	kill -s "$signal" "$recorder"
	waited=0
	while kill -0 "$recorder" 2>/dev/null && [ $waited -lt 300 ]; do
		sleep 0.1; waited=$((waited + 1))
	done
	kill -9 "$recorder" 2>/dev/null
	wait "$recorder"
	status=$?
	check "SIG$signal while waiting for the daemon ends profopt-record: $((128 + number)) (got $status)" \
		[ "$status" -eq $((128 + number)) ]
	check "the command did not run, no trace directory is left" \
		[ ! -e "$work/ran-$signal" ] && [ ! -e "$work/ts-$signal" ]
	cat "$work/err"
}

case_not_found() {
	run_record -o "$work/trace" -- profopt-no-such-command --flag
	check "a command not in PATH gives 127 (got $status)" [ "$status" -eq 127 ]
	check "a one-line error names the command" one_error_line "profopt-no-such-command"
	check "no trace directory is left behind" [ ! -e "$work/trace" ]
	run_record -o "$work/trace" -- "$work/missing/program"
	check "a missing path gives 127 (got $status)" [ "$status" -eq 127 ]
	check "no trace directory is left behind" [ ! -e "$work/trace" ]
	printf 'data\n' >"$work/not-executable" && chmod a-x "$work/not-executable"
	run_record -o "$work/trace" -- "$work/not-executable"
	check "a file that is not executable gives 126 (got $status)" [ "$status" -eq 126 ]
	check "no trace directory is left behind" [ ! -e "$work/trace" ]
}

case_output_dir() {
	mkdir -p "$work/busy" && echo keep >"$work/busy/notes.txt"
	run_record -o "$work/busy" -- "$workload" exit 0
	check "a non-empty output directory gives 2 (got $status)" [ "$status" -eq 2 ]
	check "a one-line error names the directory" one_error_line "$work/busy"
	check "the user's file is untouched" grep -q keep "$work/busy/notes.txt"
	check "nothing was added to it" [ "$(ls "$work/busy")" = notes.txt ]
	run_record -o "$work/busy/notes.txt" -- "$workload" exit 0
	check "an output path that is a file gives 2 (got $status)" [ "$status" -eq 2 ]
	mkdir "$work/empty"
	run_record -o "$work/empty" -- "$workload" exit 0
	check "an existing empty directory is used (got $status)" \
		[ "$status" -eq 0 ] && [ -d "$work/empty/ust" ]
	mkdir "$work/empty2"
	run_record -o "$work/empty2" -- profopt-no-such-command
	check "a command not found leaves an existing empty directory as it was" \
		[ "$status" -eq 127 ] && [ -d "$work/empty2" ] && [ -z "$(ls -A "$work/empty2")" ]
}

case_help_version() {
	run_record --help
	check "--help exits 0 (got $status)" [ "$status" -eq 0 ]
	check "--help shows the usage" grep -q "^Usage: profopt-record" "$work/out"
	check "--help documents the exit statuses" grep -q "127 COMMAND not found" "$work/out"
	run_record --version
	check "--version prints profopt-record 0.1.0" [ "$(cat "$work/out")" = "profopt-record 0.1.0" ]
	run_record --subbuf-size 1G -- true
	check "--subbuf-size 1G is refused: /dev/shm cannot hold it" \
		one_error_line "need [0-9]* MiB of shared memory"
	local bad
	for bad in "" "--bogus -- true" "-o" "--subbuf-size 3000 -- true" "--num-subbuf 3 -- true" \
		"--sample-ms -1 -- true" "--subbuf-size 1Q -- true" "--subbuf-size 1G -- true"; do
		# shellcheck disable=SC2086
		run_record $bad
		check "'$bad' gives 2 with one error line (got $status)" \
			[ "$status" -eq 2 ] && one_error_line ""
	done
}

# Starts a recording of "record_workload wait", sends SIGNAL to profopt-record once the
# command runs, and checks the command saw it and the trace was kept.
signal_case() {
	local signal=$1 trace=$work/trace-$1 pid waited=0
	"$record" -o "$trace" -- "$workload" wait "$work/ready-$signal" >"$work/out" 2>"$work/err" &
	pid=$!
	while [ ! -e "$work/ready-$signal" ] && [ $waited -lt 600 ]; do
		sleep 0.1; waited=$((waited + 1))
	done
	sleep 0.3
	kill -s "$signal" "$pid"
	wait "$pid"
	status=$?
	check "SIG$signal reached the command, which exited 42 (got $status)" [ "$status" -eq 42 ]
	check "the trace path is printed after SIG$signal" [ "$(tail -n 1 "$work/out")" = "$trace" ]
	check_trace wait "$trace"
}

case_signal() {
	signal_case TERM
	signal_case INT
}

case_heap() {
	run_record --heap -o "$work/trace" -- "$workload" heap
	check "recording with --heap exits 0 (got $status)" [ "$status" -eq 0 ]
	check_trace heap "$work/trace"
}

case_sim() {
	run_record -o "$work/trace" -- "$sim" --workers 2 --steps 50
	check "recording profopt-sim exits 0 (got $status)" [ "$status" -eq 0 ]
	check_trace sim "$work/trace"
}

# Two recordings at once, beside an instrumented program outside any recording: each
# analysis holds only its own command's processes and lists the others as left out.
case_concurrent() {
	local analyze=$sim outsider other pid_a summary
	"$workload" wait "$work/outside-ready" >/dev/null 2>&1 &
	outsider=$!
	"$record" -o "$work/tb" -- "$workload" wait "$work/b-ready" >"$work/b.out" 2>&1 &
	other=$!
	for _ in $(seq 100); do
		[ -e "$work/outside-ready" ] && [ -e "$work/b-ready" ] && break
		sleep 0.1
	done
	run_record -o "$work/ta" -- "$workload" pipeline
	check "recording A beside B and an outsider exits 0 (got $status)" [ "$status" -eq 0 ]
	kill -TERM "$other" "$outsider"
	wait "$other"
	check "recording B ends with its command's status 42 (got $?)" [ "$?" -eq 42 ] || true
	wait "$outsider" 2>/dev/null
	check "profopt-recording.txt names the recording and the command" \
		grep -q "^recording [0-9a-f]\{32\}$" "$work/ta/profopt-recording.txt"
	pid_a=$(sed -n 's/^command_pid //p' "$work/ta/profopt-recording.txt")
	"$analyze" --json-only -o "$work/ra" "$work/ta" >/dev/null 2>"$work/ra.err"
	check "A analyses (got $?)" [ -f "$work/ra/summary.json" ]
	"$analyze" --json-only -o "$work/rb" "$work/tb" >/dev/null 2>"$work/rb.err"
	check "B analyses" [ -f "$work/rb/summary.json" ]
	"$analyze" --json-only --all-processes -o "$work/rall" "$work/tb" >/dev/null 2>&1
	check "B with --all-processes analyses" [ -f "$work/rall/summary.json" ]
	check "A holds only its command's 3 processes; B's and the outsider's are left out" \
		/usr/bin/python3 - "$work" "$pid_a" "$outsider" <<'PY'
import json, sys
work, pid_a, outsider = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = json.load(open(work + "/ra/summary.json"))
b = json.load(open(work + "/rb/summary.json"))
every = json.load(open(work + "/rall/summary.json"))
pids_a = sorted(p["pid"] for p in a["trace"]["processes"])
pids_b = sorted(p["pid"] for p in b["trace"]["processes"])
left_a = {p["pid"]: p["reason"] for p in a["trace"]["excluded_processes"]}
left_b = {p["pid"]: p["reason"] for p in b["trace"]["excluded_processes"]}
ok = True
def need(what, cond):
    global ok
    print(("     ok   " if cond else "     FAIL ") + what)
    ok = ok and cond
need("A: the command and its 2 workers, %s" % pids_a, len(pids_a) == 3 and pid_a in pids_a)
need("A: 6 steps, 2 workers (%d steps, %d workers, warnings %s)" % (
    a["steps"]["count"], len(a["workers"]), sorted(w["code"] for w in a["trace"]["warnings"])),
    a["steps"]["count"] == 6 and len(a["workers"]) == 2)
need("A: the outsider left out %s" % left_a, outsider in left_a)
need("A: no process of B or the outsider analysed", not set(pids_a) & (set(pids_b) | {outsider}))
need("A: processes checked", a["trace"]["processes_checked"])
need("A: the warning says so", any(w["code"] == "other-processes" for w in a["trace"]["warnings"]))
need("B: A's 3 processes left out as another recording",
     sum(1 for p in pids_a if left_b.get(p) == "another-recording") == 3)
need("B: the outsider left out as outside the command", left_b.get(outsider) == "outside-command")
need("B: one process", len(pids_b) == 1)
need("--all-processes: everything analysed, nothing left out",
     not every["trace"]["excluded_processes"] and len(every["trace"]["processes"]) >= 5)
sys.exit(0 if ok else 1)
PY
}

# A full disk: the trace directory on a 1 MiB tmpfs (a private mount namespace, as root).
# profopt-record must not say the recording is complete: a one-line error per problem,
# a non-zero status, the trace kept.
case_disk_full() {
	if [ "$(id -u)" -ne 0 ] || [ "${PROFOPT_SESSIOND_STAGE:-}" != ns ]; then
		check "disk full: not run (needs root in a private mount namespace)" true
		return
	fi
	mkdir -p "$work/small" && mount -t tmpfs -o size=1m profopt-full "$work/small" || return
	run_record -o "$work/small/trace" -- "$workload" flood 2
	check "a recording on a full disk exits non-zero (got $status)" [ "$status" -ne 0 ]
	check "it says the disk is full, naming the trace" \
		grep -q "^profopt-record: error: $work/small/trace: the file system has [0-9]* bytes left" "$work/err"
	check "the trace is kept" [ -d "$work/small/trace/ust" ]
	# Whether the daemon fails to finish the trace depends on when the disk filled up.
	check "liblttng-ctl's 'Rotation failure on consumer' is not said" \
		not grep -q "Rotation failure" "$work/err"
	check "a daemon that could not finish the trace is put down to the full disk, in no liblttng-ctl words" \
		not grep -q "^profopt-record: Failed" "$work/err"
	cat "$work/err"
	umount "$work/small"
}

# What keeps a recording from working, seen before the command runs (each in a mount
# namespace of its own inside the test's): a read-only /dev/shm (the command used to run
# untraced, and registration was blamed afterwards), and a read-only /run/lttng with no
# daemon reachable (lttng-sessiond's "A session daemon is already running" was said).
case_preflight() {
	private_mounts "read-only /dev/shm and /run/lttng" || return
	run_record_in() { # run_record_in MOUNTPOINT ARGS...: with MOUNTPOINT a read-only tmpfs
		local at=$1
		shift
		unshare --mount sh -c 'mount -t tmpfs -o ro profopt-ro "$0" && exec "$@"' \
			"$at" "$record" "$@" >"$work/out" 2>"$work/err"
		status=$?
	}
	run_record_in /dev/shm -o "$work/t-shm" -- /bin/sh -c "touch '$work/ran-shm'"
	check "read-only /dev/shm: exit 1 (got $status)" [ "$status" -eq 1 ]
	check "one error line names /dev/shm, read-only" one_error_line "/dev/shm is mounted read-only"
	check "the command did not run" [ ! -e "$work/ran-shm" ]
	check "no trace directory is left behind" [ ! -e "$work/t-shm" ]
	cat "$work/err"
	run_record_in /run/lttng -o "$work/t-run" -- /bin/sh -c "touch '$work/ran-run'"
	check "read-only /run/lttng, no daemon: exit 1 (got $status)" [ "$status" -eq 1 ]
	check "one error line names /run/lttng, read-only" \
		one_error_line "Failed to start a session daemon: /run/lttng is on a read-only file system"
	check "lttng-sessiond's 'already running' is not said" not grep -q "already running" "$work/err"
	check "the command did not run" [ ! -e "$work/ran-run" ]
	cat "$work/err"
}

# The session daemon killed while the command runs: profopt-record names that, not a
# registration that came too late, nor liblttng-ctl's "No session daemon is available".
case_sessiond_killed() {
	local pid
	pid=$(cat "$(daemon_pid_file)")
	run_record -o "$work/trace" -- /bin/sh -c \
		"'$workload' pipeline; kill -KILL $pid; sleep 0.5; '$workload' pipeline"
	check "a daemon killed during the command: exit 1 (got $status)" [ "$status" -eq 1 ]
	check "it says the daemon (pid $pid) ended while the command ran" \
		grep -q "^profopt-record: error: the session daemon (pid $pid) ended while the command ran" "$work/err"
	check "it blames no registration" not grep -q "registered\|REGISTER_TIMEOUT" "$work/err"
	check "liblttng-ctl's words are not said" not grep -q "No session daemon is available" "$work/err"
	check "the trace is kept" [ -d "$work/trace/ust" ]
	cat "$work/err"
}

# The programs the command runs that do not load lttng-ust themselves (a shell, grep) are
# left without it: lttng-ust's fork wrapper, preloaded before, loaded it into each (which
# then registered with the daemon: 37 ms an exec). The forked workers of an instrumented
# program are still registered and recorded as their own processes.
case_plain_exec() {
	run_record --buffers pid -o "$work/trace" -- /bin/sh -c \
		"grep -c liblttng-ust /proc/self/maps >'$work/maps'; '$workload' pipeline"
	check "recording exits 0 (got $status)" [ "$status" -eq 0 ]
	check "grep, run by the command, has no lttng-ust mapped (got $(cat "$work/maps"))" \
		[ "$(cat "$work/maps")" = 0 ]
	check "the instrumented program and its 2 forked workers: 3 trace directories" \
		[ "$(ls "$work/trace/ust/pid" | grep -c '^record_workload-')" -eq 3 ]
	check_trace pipeline "$work/trace"
	# --stacks of a Python command names no object (Python's samples name theirs): no
	# liblttng-ust-dl, whose preload loaded lttng-ust into every program too.
	run_record --stacks -o "$work/trace-py" -- /usr/bin/python3 -c \
		"print(open('/proc/self/maps').read().count('liblttng-ust'))"
	check "--stacks of a Python command: exits 0 (got $status)" [ "$status" -eq 0 ]
	check "--stacks: python3 that does not import profopt has no lttng-ust mapped (got $(head -n 1 "$work/out"))" \
		[ "$(head -n 1 "$work/out")" = 0 ]
	run_record --heap -o "$work/trace-heap" -- /bin/sh -c \
		"grep -c liblttng-ust /proc/self/maps >'$work/maps-heap'"
	check "--heap still preloads lttng-ust's libc wrapper into every program" \
		not [ "$(cat "$work/maps-heap")" = 0 ]
	# Each process is named by its main thread, not by lttng-ust's own thread (NAME-ust),
	# whose events came first under a bash launcher with --stacks.
	run_record --stacks -o "$work/trace-named" -- /bin/bash -c "'$workload' pipeline; true"
	"$(dirname "$record")/profopt-analyze" -q --json-only -o "$work/named" \
		"$work/trace-named" >/dev/null 2>&1
	names=$(/usr/bin/python3 -c 'import json, sys
print(" ".join(sorted({p["name"] for p in json.load(open(sys.argv[1]))["trace"]["processes"]})))' \
		"$work/named/summary.json" 2>&1)
	check "--stacks under a bash launcher: processes named bash and record_workload (got: $names)" \
		[ "$names" = "bash record_workload" ]
}

# Whether this test runs as root in a private mount namespace (with-sessiond.sh's), where
# it may mount file systems; says the case is not run otherwise.
private_mounts() {
	if [ "$(id -u)" -ne 0 ] || [ "${PROFOPT_SESSIOND_STAGE:-}" != ns ]; then
		check "$1: not run (needs root in a private mount namespace)" true
		return 1
	fi
}

# A file system with little room left that did not fill: a 6 MiB tmpfs with 3 MiB taken
# before the recording. The trace is whole: profopt-record used to say "the end of the
# recording is missing" and exit 1 because less than 4 MiB was left.
case_small_fs() {
	private_mounts "small file system" || return
	mkdir -p "$work/small" && mount -t tmpfs -o size=6m profopt-small "$work/small" || return
	dd if=/dev/zero of="$work/small/filler" bs=1M count=3 status=none
	run_record -o "$work/small/trace" -- "$workload" pipeline
	check "a whole recording on a small file system exits 0 (got $status)" [ "$status" -eq 0 ]
	check "it says no events were discarded" grep -q "no events were discarded" "$work/err"
	check "it does not say the recording is cut" not grep -q "error\|missing" "$work/err"
	check "the file system had less than 4 MiB left" \
		[ "$(df -B1 --output=avail "$work/small" | tail -n 1)" -lt $((4 << 20)) ]
	check_trace pipeline "$work/small/trace"
	cat "$work/err"
	umount "$work/small"
}

# Processes that emit profopt events but are never registered with the session daemon
# (here: started in a mount namespace whose /run/lttng holds no daemon, so lttng-ust runs
# them untraced): with --buffers pid they have no trace directory. profopt-record must
# name them, counted, and not say that nothing was lost (it said "no events were discarded"
# and exited 0). With per-user buffers it names them too.
case_unregistered() {
	private_mounts "unregistered processes" || return
	local buffers untraced="unshare --mount sh -c 'mount -t tmpfs none /run/lttng &&
		LTTNG_UST_REGISTER_TIMEOUT=0 $workload pipeline; :'"
	local named="pid [0-9]+ \(record_workload\), pid [0-9]+ \(record_workload\), pid [0-9]+ \(record_workload\)$"
	for buffers in pid uid; do
		run_record --buffers "$buffers" -o "$work/trace-$buffers" -- /bin/sh -c "
			$workload exit 0 && $untraced"
		check "--buffers $buffers: processes that were not registered: exit 1 (got $status)" \
			[ "$status" -eq 1 ]
		check "--buffers $buffers: it does not say that no events were discarded" \
			not grep -q "no events were discarded" "$work/err"
		cp "$work/err" "$work/err-$buffers"
		cat "$work/err"
	done
	check "--buffers pid: it counts the 3 processes without a trace directory and names them" \
		grep -Eq "^profopt-record: error: 3 of the command's processes have no trace directory: .*: $named" \
		"$work/err-pid"
	check "--buffers uid: it counts the 3 processes that were not registered and names them" \
		grep -Eq "^profopt-record: error: 3 of the command's processes emitted profopt events before the session daemon had registered them, and those events were lost: $named" \
		"$work/err-uid"
	check "--buffers pid: the traced process has its directory" \
		[ "$(ls "$work/trace-pid/ust/pid" | grep -c '^record_workload-')" -eq 1 ]
}

"case_$case"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
