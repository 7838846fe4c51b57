#!/usr/bin/env bash
# check.sh BIN_DIR SOURCE_DIR: profopt-record --check finds each planted problem, in a
# private mount namespace (as root) where the problem is made real: no session daemon and
# none on PATH, the fork hooks replaced by a device, a /dev/shm too small for the
# buffers or read-only, a /run/lttng where no daemon can start, a consumer daemon that
# cannot run, a nearly full disk at -o, a Python module that cannot load libprofopt, a user
# who is neither root nor in the tracing group and has no writable home. With nothing
# planted it exits 0, having recorded and read back a few events of its own (starting a
# session daemon for that and stopping it).
set -u
bin=$1 src=$2
if [ "$(id -u)" -ne 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
	echo "check.sh needs root and mount namespaces to plant its problems"
	exit 1
fi
work=$(mktemp -d /tmp/profopt-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pybin" "$work/module"
ln -s /usr/bin/python3 "$work/pybin/python3"
cp -r "$src/tracepoints/python/profopt" "$work/module/"
lib=$(ls "$bin"/../lib/libprofopt.so.0 2>/dev/null || echo "$bin/../lib/libprofopt.so.0")
failed=0 passed=0

# run NAME WANT_STATUS WANT_TEXT SETUP: profopt-record --check after SETUP (shell code run
# in the namespace first); its status and a line matching WANT_TEXT are checked.
run() {
	local name=$1 want=$2 text=$3 setup=$4 status
	unshare --mount --propagation private bash -c "
		mount -t tmpfs none /run/lttng 2>/dev/null || { mkdir -p /run/lttng && mount -t tmpfs none /run/lttng; }
		mount -t tmpfs none /dev/shm
		export LTTNG_HOME=$work/home HOME=$work/home PATH=$work/pybin:$bin:/usr/bin:/bin
		export TMPDIR=$work/home/tmp && mkdir -p \$TMPDIR
		export PYTHONPATH=$src/tracepoints/python PROFOPT_LIBRARY=$lib
		$setup
		exec \"$bin/profopt-record\" --check \${CHECK_ARGS:-}" >"$work/$name.out" 2>&1
	status=$?
	if [ "$status" -ne "$want" ] || ! grep -qE -- "$text" "$work/$name.out"; then
		failed=$((failed + 1))
		echo "FAIL $name: exit $status (want $want), no line matching '$text':"
		sed 's/^/     /' "$work/$name.out"
	else
		passed=$((passed + 1))
		echo "ok   $name: $(grep -E -- "$text" "$work/$name.out" | head -n 1)"
	fi
}

run all-good 0 "a recording would work" ""
check_ran() { # the recording in miniature ran, and left no daemon, session or directory
	grep -qE "^ok +recording +a private session recorded a process's events, read back from its trace \(.*, with a session daemon started for it and stopped\)" "$work/all-good.out" &&
		[ -z "$(ls "$work/home/tmp" 2>/dev/null)" ]
}
if check_ran; then
	passed=$((passed + 1)) && echo "ok   all-good: the recording in miniature ran and left nothing"
else
	failed=$((failed + 1)) && echo "FAIL all-good: the recording in miniature did not run, or left something"
fi
run shm-read-only 1 "^FAIL +buffer memory +/dev/shm is mounted read-only" \
	"mount -t tmpfs -o ro none /dev/shm"
run run-read-only 1 "^FAIL +recording +Failed to start a session daemon: /run/lttng is on a read-only file system" \
	"mount -t tmpfs -o ro none /run/lttng"
consumerd=$(find /usr/lib /usr/local/lib -name lttng-consumerd -path '*libexec*' 2>/dev/null | head -n 1)
run consumer-broken 1 "^FAIL +recording +.*session" \
	"mount --bind /bin/false $consumerd; export PROFOPT_SESSIOND_TIMEOUT=3"
run no-sessiond 1 "^FAIL +session daemon +none running, and no lttng-sessiond on PATH" \
	"export PATH=$work/pybin:$bin"
fork_lib=$(sed -n 's/^ok  *fork hooks  *//p' "$work/all-good.out" | head -n 1)
run fork-hooks 1 "^FAIL +fork hooks +.*not a regular file" \
	"mount --bind /dev/null $fork_lib"
run small-shm 1 "^FAIL +buffer memory +the buffers need" \
	"mount -t tmpfs -o size=16m none /dev/shm"
mkdir -p "$work/full"
run disk-full 1 "^FAIL +disk room +[0-9]+ MiB free" \
	"mount -t tmpfs -o size=8m none $work/full; export CHECK_ARGS='-o $work/full/trace'"
run python-no-library 1 "^FAIL +python module +imported, but it cannot load libprofopt" \
	"export PYTHONPATH=$work/module PROFOPT_LIBRARY=/nonexistent/libprofopt.so.0"
run python-absent 0 "^warn +python module +not importable" "export PYTHONPATH=$work/pybin"
# an unprivileged user whose home cannot hold a session daemon's state
nobody=$(id -u nobody)
run no-rights 1 "^FAIL +rights +not root, not in the tracing group" \
	"cd /; exec setpriv --reuid=$nobody --regid=$nobody --clear-groups env HOME=/nonexistent LTTNG_HOME= \"$bin/profopt-record\" --check"


echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
