#!/usr/bin/env bash
# live.sh BIN_DIR CASE [LIBPROFOPT PYTHONPATH]: profopt-record --live end to end, next to a session daemon of the
# test's own in a private network namespace (with-sessiond.sh, PROFOPT_SESSIOND_NET=1).
#
#   change_at       the simulator's loading slows down at a known step: input-bound is
#                   raised after it and within 2 s of the first window in which the offline
#                   rules hold over the recorded trace, nothing is raised before it, every
#                   stdout line is a window of the documented schema, --alerts and
#                   --on-alert get each alert (as data, never as shell text), and the end
#                   report equals profopt-analyze's of the trace, plus alerts.json
#   real_change     a real PyTorch loop (slow_loading.py) whose samples slow down at a known
#                   step: input-bound is raised once, after it, no later than the offline
#                   analysis of the windows' steps (profopt-analyze --steps-in) finds it,
#                   and that analysis finds it over the raising window's steps
#   clean           a run that stays the same raises nothing but program-ended
#                   (change_at, clean and leak need the machine: check_live.py skips them,
#                   exit 77, when the trace shows the scenario did not happen while
#                   other programs used a quarter of the CPUs or more)
#   leak            every step leaks from a known step on: host-memory-growth after it
#   agreement       a window as long as the run: its last line shows the figures of the
#                   offline summary.json of the recorded trace (steady steps, input wait,
#                   GPU busy, median step, verdict) to its printed precision
#   discards        the tracer discards events: events-discarded, never cleared
#   worker_hangs    a worker is stopped: worker-stopped is raised, and cleared when it runs
#   killed_program  the program is killed: program-ended (no-run-end), the report is written
#   relay_dies      lttng-relayd is killed during the run: the view ends with a one-line
#                   message, the recording completes and analyses offline, no daemon is left
#   consumer_dies   the consumer daemon is killed: exit 1 with what is missing, no report
#   session_destroyed  someone destroys the live session: the report still comes, whole
#   attach          profopt-analyze --live on a session made with plain lttng commands
#   hostile         an exception named in shell syntax reaches --on-alert only as data
#   bad_set         a rule the view refuses: exit 2 before the command runs, nothing left
#   no_session      --live on a session the relay does not have: exit 3, one line
#   refused         --live on a port where nothing listens: exit 4, one line
#   private_relay   another program listens on 5342-5344: the recording uses a relay of its
#                   own on other ports, and sends that program nothing
#   alerts_refused  --alerts targets refused before the view attaches (a link, a directory,
#                   a missing directory, a FIFO nobody reads, a 0444 file, a device): exit 2
#   alerts_fifo     --alerts to a FIFO with a reader, and to /dev/null: the report is written
#   alerts_disk_full  --alerts on a full file system: a warning with its cause, the report
#   report_taken    TRACE-report holds the user's files: exit 2 before the command runs
#   terminal        on a terminal the recorder's last lines come after the panel's last frame
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

# check CASE ARGS...: check_live.py CASE; a skip (77) is passed on, any other failure fails
check() {
	/usr/bin/python3 "$here/check_live.py" "$@"
	case $? in
	0) ;;
	77) exit 77 ;;
	*) fail "the checks above" ;;
	esac
}

# shellcheck source=../../lib/busy.sh
. "$here/../../lib/busy.sh"

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
	measured machine.json "$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl \
		--on-alert "$on_alert" -o trace -- $(sim --steps 900 --change-at 400 --after load-ms=60) \
		>windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	relay_left && fail "an lttng-relayd was left running"
	"$bin/profopt-analyze" -o offline trace >offline.txt 2>offline.err ||
		fail "the trace does not analyse offline: $(cat offline.err)"
	check change_at --step 400 --trace trace --windows windows.jsonl --alerts alerts.jsonl \
		--on-alert on-alert.env --on-alert-stdin on-alert.stdin --report trace-report \
		--offline offline --every 0.5 --machine machine.json
	;;
clean)
	measured machine.json "$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl -o trace -- \
		$(sim --steps 700 --jitter 20) >windows.jsonl 2>rec.err ||
		fail "profopt-record exited with $?"
	check clean --trace trace --windows windows.jsonl --alerts alerts.jsonl \
		--report trace-report --machine machine.json
	;;
leak)
	# From step 300 every step leaks 1 MiB: host-memory-growth is raised after it.
	measured machine.json "$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl -o trace -- \
		$(sim --steps 700 --change-at 300 --after leak-bytes=1048576) \
		>windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	check leak --step 300 --trace trace --windows windows.jsonl --alerts alerts.jsonl \
		--machine machine.json
	;;
discards)
	# Buffers far too small for 300 kernels a step: the tracer discards, and says so live.
	"$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl --subbuf-size 4k \
		--num-subbuf 2 -o trace -- $(sim --steps 300 --kernels 300 --gpu-ms 1) \
		>windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	grep -q '"alert":"events-discarded","state":"raised"' alerts.jsonl ||
		fail "no events-discarded alert: $(cat alerts.jsonl)"
	grep -q '"alert":"events-discarded","state":"cleared"' alerts.jsonl &&
		fail "events-discarded was cleared"
	;;
worker_hangs)
	# A worker is stopped (SIGSTOP): the in-order loader makes the loop wait for its
	# batch, and worker-stopped is raised; once it runs again the alert clears.
	"$bin/profopt-record" --live --every 0.5 --alerts alerts.jsonl \
		--set live.worker_silent_s=2 -o trace -- $(sim --steps 1200) \
		>windows.jsonl 2>rec.err &
	record=$!
	for _ in $(seq 100); do
		[ "$(wc -l <windows.jsonl)" -ge 4 ] && break
		sleep 0.2
	done
	main=$(pgrep -o -x profopt-sim) || fail "no profopt-sim"
	worker=$(pgrep -P "$main" -x profopt-sim | head -n 1)
	[ -n "$worker" ] || fail "no worker process"
	kill -STOP "$worker"
	for _ in $(seq 100); do
		grep -q '"alert":"worker-stopped","state":"raised"' alerts.jsonl 2>/dev/null && break
		sleep 0.2
	done
	kill -CONT "$worker"
	wait "$record"
	status=$?
	[ "$status" -eq 0 ] || fail "profopt-record exited with $status"
	grep '"alert":"worker-stopped","state":"raised"' alerts.jsonl | grep -q "waited" ||
		fail "worker-stopped was not raised for the waiting loop: $(cat alerts.jsonl)"
	grep -q '"alert":"worker-stopped","state":"cleared"' alerts.jsonl ||
		fail "worker-stopped was not cleared once the worker ran again"
	;;
agreement)
	# Two workers that cannot keep up (40 ms a batch, 15 ms steps), a GPU, two epochs.
	"$bin/profopt-record" --live --every 0.5 --set live.window_s=1000000 -o trace -- \
		$(sim --steps 400 --epochs 2 --jitter 20 --load-ms 40) >windows.jsonl 2>rec.err ||
		fail "profopt-record exited with $?"
	check agreement --windows windows.jsonl --report trace-report
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
consumer_dies)
	# The consumer daemon that writes both sessions is killed: the recording fails and
	# says what is missing, the view says it wrote no report, no relay is left.
	kill_during 1500 4 lttng-consumerd
	[ "$status" -eq 1 ] || fail "profopt-record exited with $status, want 1"
	grep -q "^profopt-analyze: .*the recording did not complete" rec.err ||
		fail "the view did not say why it wrote no report"
	[ -e trace-report ] && fail "a report was written for an incomplete recording"
	relay_left && fail "an lttng-relayd was left running"
	# Analysed offline, the trace is refused in one line (the consumer died before it wrote
	# what makes it a trace), or analysed as what is there: a partial result that says so.
	"$bin/profopt-analyze" --json-only -o offline trace >/dev/null 2>offline.err
	status=$?
	if [ "$status" -eq 0 ]; then
		/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["trace"]; sys.exit(0 if t["partial"] and t.get("warnings") else 1)' \
			offline/summary.json || fail "the damaged trace analysed as whole: $(cat offline.err)"
	else
		[ "$status" -eq 3 ] && [ "$(wc -l <offline.err)" -eq 1 ] ||
			fail "the damaged trace: exit $status, $(cat offline.err)"
	fi
	;;
session_destroyed)
	# Someone destroys the live session: the view waits for the recording to complete,
	# then writes the report; the command is not disturbed.
	"$bin/profopt-record" --live --every 0.5 -o trace -- \
		$(sim --steps 1000) >windows.jsonl 2>rec.err &
	record=$!
	for _ in $(seq 100); do
		[ "$(wc -l <windows.jsonl)" -ge 3 ] && break
		sleep 0.2
	done
	lttng destroy "$(lttng list | grep -o 'profopt-live-[0-9-]*' | head -n 1)" >/dev/null ||
		fail "no live session to destroy"
	wait "$record"
	status=$?
	[ "$status" -eq 0 ] || fail "profopt-record exited with $status, want 0"
	grep -q "the live view ended" rec.err && fail "the view failed"
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["steps"]["count"] == 1000 else 1)' \
		trace-report/summary.json || fail "the report does not hold the whole run"
	;;
attach)
	# A session made with plain lttng commands, and profopt-analyze --live attached to it.
	lttng-relayd -b -o "$work/relay" >relay.log 2>&1 || fail "lttng-relayd did not start"
	{
		lttng create plain --live=100000 --set-url=net://127.0.0.1 &&
			lttng enable-channel -u plain --buffers-uid &&
			lttng enable-event -u -c plain 'profopt:*' &&
			lttng add-context -u -c plain -t vpid -t vtid -t procname &&
			lttng start
	} >lttng.log 2>&1 || fail "lttng: $(cat lttng.log)"
	mkfifo ready
	"$bin/profopt-analyze" --live "net://127.0.0.1/host/$(hostname)/plain" --every 0.5 \
		--ready-fd 3 3>ready >windows.jsonl 2>view.err &
	view=$!
	read -r -t 20 _ <ready || fail "the view did not attach"
	LD_PRELOAD=liblttng-ust-fork.so.1 $(sim --steps 400) >/dev/null 2>&1 ||
		fail "the simulator failed"
	lttng destroy plain >/dev/null
	wait "$view"
	status=$?
	[ "$status" -eq 0 ] || fail "profopt-analyze --live exited with $status"
	/usr/bin/python3 - windows.jsonl <<'PY' || fail "the checks above"
import json, sys
windows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
last = windows[-1] if windows else {}
ok = len(windows) >= 3 and last.get("steps") == 400 and last.get("ended") and \
    last.get("ending") == "clean" and last.get("workers_seen") == 2
print("windows %d, last %s" % (len(windows), {k: last.get(k) for k in
      ("steps", "ended", "ending", "workers_seen")}))
sys.exit(0 if ok else 1)
PY
	;;
real_change)
	# 300 steps that never wait, then 120 (19 s) whose loading is 40 times slower: a
	# 10 s window wholly after the change, twice.
	PROFOPT_LIBRARY=$3 PYTHONPATH=$4 measured machine.json "$bin/profopt-record" --live \
		--every 1 --alerts alerts.jsonl -o trace -- /usr/bin/python3 "$here/slow_loading.py" \
		420 300 >windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	check real_change --step 300 --trace trace --windows windows.jsonl --alerts alerts.jsonl \
		--report trace-report --analyze "$bin/profopt-analyze" --machine machine.json
	;;
hostile)
	# The program ends on an exception whose type name is shell syntax: the alert that
	# says so reaches --on-alert as data; nothing of it runs.
	cat >hostile.py <<'PY'
import time
import profopt

Hostile = type("$(touch pwned-1)`touch pwned-2`;touch pwned-3;'\"", (Exception,), {})
try:
    with profopt.run(config={"num_workers": "0"}):
        for i in range(150):
            with profopt.step(i):
                time.sleep(0.01)
        raise Hostile()
except Hostile:
    pass
PY
	# shellcheck disable=SC2016 # for /bin/sh, with the alert as data
	on_alert='printf "%s\n" "$PROFOPT_ALERT_EVIDENCE" >>evidence.txt; cat >>stdin.txt'
	PROFOPT_LIBRARY=$3 PYTHONPATH=$4 "$bin/profopt-record" --live --every 0.5 \
		--alerts alerts.jsonl --on-alert "$on_alert" -o trace -- /usr/bin/python3 hostile.py \
		>windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	ls pwned-* 2>/dev/null && fail "the alert's text was run by the shell"
	grep -qF "exception: \$(touch pwned-1)\`touch pwned-2\`;touch pwned-3;'\"" evidence.txt ||
		fail "PROFOPT_ALERT_EVIDENCE does not hold the exception's name: $(cat evidence.txt)"
	/usr/bin/python3 - stdin.txt alerts.jsonl <<'PY' || fail "the checks above"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
ended = [a for a in want if a["alert"] == "program-ended"]
ok = got == want and ended and "pwned-3;'\"" in ended[0]["evidence"]
print("on-alert stdin %s the alerts" % ("matches" if got == want else "differs from"))
sys.exit(0 if ok else 1)
PY
	;;
bad_set)
	# A rule the view refuses stops the recording before the command runs.
	"$bin/profopt-record" --live --set live.window_s=0 -o trace -- $(sim --steps 50) \
		>windows.jsonl 2>rec.err
	status=$?
	[ "$status" -eq 2 ] || fail "profopt-record exited with $status, want 2"
	grep -q "live.window_s" rec.err || fail "the rule is not named: $(cat rec.err)"
	[ -e trace ] && fail "a trace directory was left for a command that never ran"
	relay_left && fail "an lttng-relayd was left running"
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
private_relay)
	# Another program listens on the relay's standard ports, 5342-5344 (here one that
	# accepts and never answers; on a shared host it could be another user's relay):
	# profopt-record starts a relay of its own on ports the kernel chose, and nothing of
	# the recording reaches the other program.
	/usr/bin/python3 - <<'PY' &
import select, socket
servers = []
for port in (5342, 5343, 5344):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen()
    servers.append(server)
open("listening", "w").close()
held = []
while True:
    for server in select.select(servers, [], [])[0]:
        held.append(server.accept()[0])
        with open("accepted.txt", "a") as out:
            out.write("%d\n" % server.getsockname()[1])
PY
	listener=$!
	for _ in $(seq 100); do
		[ -e listening ] && break
		sleep 0.1
	done
	PROFOPT_SESSIOND_TIMEOUT=10 timeout 120 "$bin/profopt-record" --live --every 0.5 -o trace -- \
		$(sim --steps 150) >windows.jsonl 2>rec.err
	status=$?
	kill "$listener"
	[ "$status" -eq 0 ] || fail "profopt-record exited with $status, want 0"
	[ -s accepted.txt ] && fail "the listener on ports 5342-5344 got connections: $(tr '\n' ' ' <accepted.txt)"
	grep -q "^profopt-record: lttng-relayd started on 127.0.0.1:[0-9]*, [0-9]*, [0-9]* (pid" rec.err ||
		fail "profopt-record did not start a relay of its own"
	relay_left && fail "an lttng-relayd was left running"
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s["steps"]["count"] == 150 else 1)' \
		trace-report/summary.json || fail "the report does not hold the whole run"
	;;
alerts_refused)
	# --alerts targets that are refused before the view attaches: exit 2 and one line
	# naming it, before any relay is asked (5399: nothing listens there, which would be
	# exit 4). A link is never followed, whatever it points to (as root, it wrote into a
	# 0444 file, and created a dangling link's target).
	echo keep >ro.txt
	chmod 0444 ro.txt
	ln -s ro.txt link
	ln -s created.txt dangling
	mkdir adir
	mkfifo unread.fifo
	url="net://127.0.0.1:5399/host/$(hostname)/s"
	for target in adir missing/alerts.jsonl unread.fifo link dangling ro.txt /dev/zero; do
		"$bin/profopt-analyze" --live "$url" --alerts "$target" >view.out 2>view.err
		status=$?
		[ "$status" -eq 2 ] || fail "--alerts $target: exit $status, want 2: $(cat view.err)"
		[ "$(wc -l <view.err)" -eq 1 ] && grep -q "^profopt-analyze: --alerts $target: " view.err ||
			fail "--alerts $target: want one line naming it, got: $(cat view.err)"
	done
	[ "$(cat ro.txt)" = keep ] || fail "the 0444 file was written"
	[ -e created.txt ] && fail "the dangling link's target was created"
	# Accepted, then the view goes on to the relay (exit 4): /dev/null, a FIFO that a
	# process reads (this shell holds it open), a new file, a file of the user's.
	mkfifo read.fifo
	exec 3<>read.fifo
	echo '{}' >mine.jsonl
	for target in /dev/null read.fifo new.jsonl mine.jsonl; do
		"$bin/profopt-analyze" --live "$url" --alerts "$target" >view.out 2>view.err
		status=$?
		[ "$status" -eq 4 ] || fail "--alerts $target: exit $status, want 4: $(cat view.err)"
	done
	exec 3<&-
	# profopt-record stops before the command runs, and leaves nothing behind.
	"$bin/profopt-record" --live --alerts link -o trace -- $(sim --steps 50) \
		>windows.jsonl 2>rec.err
	status=$?
	[ "$status" -eq 2 ] || fail "profopt-record exited with $status, want 2"
	grep -q "^profopt-analyze: --alerts link: a symbolic link" rec.err ||
		fail "the link is not named: $(cat rec.err)"
	grep -q "^profopt-record: --live: the live view refused to start" rec.err ||
		fail "profopt-record did not say why it stopped: $(cat rec.err)"
	[ -e trace ] && fail "a trace directory was left for a command that never ran"
	[ "$(cat ro.txt)" = keep ] || fail "the 0444 file was written"
	relay_left && fail "an lttng-relayd was left running"
	;;
alerts_fifo)
	# --alerts to a FIFO that a process reads, and to /dev/null: neither can be synced to
	# disk (fsync failed with "Invalid argument", the view exited 5 without a report); the
	# alerts reach the reader and the report is written.
	mkfifo alerts.fifo
	exec 3<>alerts.fifo # a reader from the start; cat gets the end once the view closes it
	cat alerts.fifo >alerts.got 3<&- &
	reader=$!
	"$bin/profopt-record" --live --every 0.5 --alerts alerts.fifo -o trace -- \
		$(sim --steps 150) >windows.jsonl 2>rec.err 3<&- || fail "profopt-record exited with $?"
	exec 3<&-
	wait "$reader"
	grep -q "live view ended" rec.err && fail "the view failed"
	grep -q '"alert":"program-ended","state":"raised"' alerts.got ||
		fail "the reader did not get the alerts: $(cat alerts.got)"
	[ -f trace-report/summary.json ] || fail "no report"
	"$bin/profopt-record" --live --every 0.5 --alerts /dev/null -o trace2 -- \
		$(sim --steps 100) >windows.jsonl 2>rec.err || fail "profopt-record exited with $?"
	grep -q "live view ended" rec.err && fail "the view failed with --alerts /dev/null"
	[ -f trace2-report/summary.json ] || fail "no report with --alerts /dev/null"
	;;
alerts_disk_full)
	# The file system of --alerts FILE is full, with room for part of the first alert in
	# the file's last page (a short write, then ENOSPC): one warning with the cause (it
	# said "Success"), the alerts go on in the windows and the report, which is written.
	if [ "$(id -u)" -ne 0 ] || [ "${PROFOPT_SESSIOND_STAGE:-}" != ns ]; then
		echo "ok: $case (not run: needs root in a private mount namespace)"
		exit 0
	fi
	mkdir full && mount -t tmpfs -o size=64k profopt-full full || fail "cannot mount a tmpfs"
	printf '%04000d\n' 0 >full/alerts.jsonl # 4001 bytes of the user's: 95 left in the page
	dd if=/dev/zero of=full/fill bs=4k 2>/dev/null
	"$bin/profopt-record" --live --every 0.5 --alerts full/alerts.jsonl -o trace -- \
		$(sim --steps 150) >windows.jsonl 2>rec.err
	status=$?
	kept=$(head -c 4001 full/alerts.jsonl | tr -d '0\n')
	umount full
	[ "$status" -eq 0 ] || fail "profopt-record exited with $status, want 0"
	[ -z "$kept" ] || fail "the user's lines in the alerts file changed"
	grep -q "^profopt-analyze: warning: --alerts full/alerts.jsonl: No space left on device" rec.err ||
		fail "the warning does not give the cause: $(cat rec.err)"
	grep -q "Success" rec.err && fail "a failure was called Success"
	grep -q "live view ended" rec.err && fail "the view failed"
	grep -q '"program-ended"' trace-report/alerts.json || fail "the report lacks the alerts"
	;;
report_taken)
	# TRACE-report already holds the user's files: refused before the command runs (the
	# whole run used to go through, and the view then exited 2 without a report).
	mkdir trace-report
	echo "my notes" >trace-report/notes.txt
	"$bin/profopt-record" --live -o trace -- $(sim --steps 50) >windows.jsonl 2>rec.err
	status=$?
	[ "$status" -eq 2 ] || fail "profopt-record exited with $status, want 2"
	grep -q "^profopt-analyze: .*trace-report is not empty and holds no profopt report" rec.err ||
		fail "the report directory is not named: $(cat rec.err)"
	[ -e trace ] && fail "a trace directory was left for a command that never ran"
	[ "$(ls -A trace-report)" = notes.txt ] && [ "$(cat trace-report/notes.txt)" = "my notes" ] ||
		fail "the user's files changed: $(ls -A trace-report)"
	relay_left && fail "an lttng-relayd was left running"
	;;
terminal)
	# On a terminal the panel's last frame is drawn when the live session ends: the
	# recorder's own last lines (loss, the trace's path, a disk-full error) come after it,
	# not under it.
	/usr/bin/python3 "$here/terminal.py" screen.txt -- "$bin/profopt-record" --live \
		--every 0.5 -o trace -- $(sim --steps 150) || fail "profopt-record exited with $?"
	panel=$(grep -n '^profopt live ' screen.txt | tail -n 1 | cut -d: -f1)
	loss=$(grep -n '^profopt-record: no events were discarded$' screen.txt | cut -d: -f1)
	path=$(grep -n "^profopt-record: trace: $work/trace\$" screen.txt | cut -d: -f1)
	report=$(grep -n '^Report: ' screen.txt | cut -d: -f1)
	[ -n "$panel" ] && [ -n "$report" ] || fail "no panel or no report on the screen: $(cat screen.txt)"
	[ -n "$loss" ] && [ -n "$path" ] && [ "$loss" -gt "$panel" ] && [ "$path" -gt "$loss" ] ||
		fail "the recorder's last lines are not after the panel: $(cat screen.txt)"
	;;
*)
	echo "unknown case $case"
	exit 2
	;;
esac
echo "ok: $case"
