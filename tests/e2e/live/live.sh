#!/usr/bin/env bash
# live.sh BIN_DIR CASE: profopt-record --live end to end, next to a session daemon of the
# test's own in a private network namespace (with-sessiond.sh, PROFOPT_SESSIOND_NET=1).
#
#   change_at       the simulator's loading slows down at a known step: input-bound is
#                   raised after it and within 2 s of the first window in which the offline
#                   rules hold over the recorded trace, nothing is raised before it, every
#                   stdout line is a window of the documented schema, --alerts and
#                   --on-alert get each alert (as data, never as shell text), and the end
#                   report equals profopt-analyze's of the trace, plus alerts.json
#   clean           a run that stays the same raises nothing but program-ended
#   killed_program  the program is killed: program-ended (no-run-end), the report is written
#   relay_dies      lttng-relayd is killed during the run: the view ends with a one-line
#                   message, the recording completes and analyses offline, no daemon is left
#   no_session      --live on a session the relay does not have: exit 3, one line
#   refused         --live on a port where nothing listens: exit 4, one line
set -u
bin=$1
case=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-live.XXXXXX)
trap 'pkill -KILL -x lttng-relayd 2>/dev/null; [ -n "${PROFOPT_LIVE_KEEP:-}" ] || rm -rf "$work"' EXIT
cd "$work" || exit 1
export PROFOPT_DECODE_LIMITS="cpu=60,mem=2048,wall=120"

fail() {
	echo "FAIL: $*"
	for f in rec.err view.err; do
		[ -s "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
	done
	exit 1
}

relay_left() {
	pgrep -x lttng-relayd >/dev/null
}

# kill_during STEPS WINDOWS NAME: records the simulator with --live, kills the process
# NAME with SIGKILL once WINDOWS windows were shown, and sets status to profopt-record's.
kill_during() {
	"$bin/profopt-record" --live --every 0.5 -o trace -- \
		$(sim --steps "$1") >windows.jsonl 2>rec.err &
	local record=$!
	for _ in $(seq 100); do
		[ "$(wc -l <windows.jsonl)" -ge "$2" ] && break
		sleep 0.2
	done
	pkill -KILL -x "$3" || fail "no $3 to kill"
	wait "$record"
	status=$?
}

sim() {
	# GPU busy about 80% of a step: a loaded CI machine does not make it idle half the time
	echo "$bin/profopt-sim" --workers 2 --load-ms 1 --forward-ms 5 --gpu-ms 10 "$@"
}

case $case in
change_at)
	# Before step 400 the two workers keep up; from it a batch takes 60 ms to load.
	# shellcheck disable=SC2016 # the command is for /bin/sh, with the alert as data
	on_alert='printf "%s|%s|%s\n" "$PROFOPT_ALERT" "$PROFOPT_ALERT_STATE" "$PROFOPT_ALERT_EVIDENCE" >>on-alert.env; cat >>on-alert.stdin'
	"$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl --on-alert "$on_alert" \
		-o trace -- $(sim --steps 900 --change-at 400 --after load-ms=60) \
		>windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	relay_left && fail "an lttng-relayd was left running"
	"$bin/profopt-analyze" -o offline trace >offline.txt 2>offline.err ||
		fail "the trace does not analyse offline: $(cat offline.err)"
	/usr/bin/python3 "$here/check_live.py" change_at --step 400 --trace trace \
		--windows windows.jsonl --alerts alerts.jsonl --on-alert on-alert.env \
		--on-alert-stdin on-alert.stdin --report trace-report --offline offline \
		--every 0.5 || fail "the checks above"
	;;
clean)
	"$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl -o trace -- \
		$(sim --steps 700) >windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	/usr/bin/python3 "$here/check_live.py" clean --windows windows.jsonl \
		--alerts alerts.jsonl --report trace-report || fail "the checks above"
	;;
killed_program)
	kill_during 100000 4 profopt-sim
	[ "$status" -eq 137 ] || fail "profopt-record exited with $status, want 137 (the command's)"
	relay_left && fail "an lttng-relayd was left running"
	/usr/bin/python3 "$here/check_live.py" killed --windows windows.jsonl \
		--report trace-report || fail "the checks above"
	;;
relay_dies)
	kill_during 1500 3 lttng-relayd
	[ "$status" -eq 0 ] || fail "profopt-record exited with $status, want 0 (the command's)"
	grep -q "^profopt-analyze: .*live stream failed" rec.err ||
		fail "the view did not say that the live stream failed"
	grep -q "the live view ended with status 4" rec.err ||
		fail "profopt-record did not say that the live view failed"
	relay_left && fail "an lttng-relayd was left running"
	"$bin/profopt-analyze" --json-only -o offline trace >/dev/null 2>offline.err ||
		fail "the trace does not analyse offline: $(cat offline.err)"
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["steps"]["count"] == 1500 and not s["trace"]["partial"] else 1)' \
		offline/summary.json || fail "the offline analysis lost steps"
	;;
no_session)
	lttng-relayd -b -o "$work/relay" >relay.log 2>&1 || fail "lttng-relayd did not start"
	for _ in $(seq 50); do
		(echo >/dev/tcp/127.0.0.1/5344) 2>/dev/null && break
		sleep 0.1
	done
	"$bin/profopt-analyze" --live "net://127.0.0.1/host/$(hostname)/no-such-session" \
		>view.out 2>view.err
	status=$?
	[ "$status" -eq 3 ] || fail "exit $status, want 3"
	[ "$(wc -l <view.err)" -eq 1 ] && grep -q "^profopt-analyze: net://.*no-such-session: " view.err ||
		fail "want one line naming the session, got: $(cat view.err)"
	[ -s view.out ] && fail "stdout is not empty"
	;;
refused)
	"$bin/profopt-analyze" --live "net://127.0.0.1:5399/host/$(hostname)/s" \
		>view.out 2>view.err
	status=$?
	[ "$status" -eq 4 ] || fail "exit $status, want 4"
	[ "$(wc -l <view.err)" -eq 1 ] && grep -q "^profopt-analyze: net://127.0.0.1:5399/.*: " view.err ||
		fail "want one line naming the URL, got: $(cat view.err)"
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
echo "ok: $case"
