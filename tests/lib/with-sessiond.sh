#!/usr/bin/env bash
# with-sessiond.sh CMD [ARGS...]: runs CMD next to a session daemon of its own.
#
# As root, the daemon and CMD run in private mount and PID namespaces whose /run/lttng and
# /dev/shm are fresh tmpfs mounts, so tests can run in parallel with each other and with
# a system daemon, and whatever is left running dies with the namespace when CMD ends or
# the test is killed. As another user, a private LTTNG_HOME gives the same isolation. Where
# unshare is not allowed, tests take a lock and use the global paths. The daemon is
# started with --no-kernel and stopped by its pid when CMD ends; CMD's status is returned.
# With PROFOPT_SESSIOND_NET=1 the namespaces include a network one (see below).
set -u

if [ "${PROFOPT_SESSIOND_STAGE:-}" = "" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		export PROFOPT_SESSIOND_STAGE=user
	elif [ "${PROFOPT_SESSIOND_NET:-0}" = 1 ] &&
		unshare --net --mount --pid --fork --mount-proc --propagation private true 2>/dev/null; then
		PROFOPT_SESSIOND_STAGE=ns PROFOPT_SESSIOND_NETNS=1 exec unshare --net --mount --pid \
			--fork --kill-child --mount-proc --propagation private "$0" "$@"
	elif unshare --mount --pid --fork --mount-proc --propagation private true 2>/dev/null; then
		PROFOPT_SESSIOND_STAGE=ns exec unshare --mount --pid --fork --kill-child \
			--mount-proc --propagation private "$0" "$@"
	else
		PROFOPT_SESSIOND_STAGE=lock exec flock /tmp/profopt-sessiond-test.lock "$0" "$@"
	fi
fi

# PROFOPT_SESSIOND_NET=1 (tests of lttng-relayd): a private network namespace too, whose
# loopback interface is brought up, so a relay's ports are the test's own.
if [ "${PROFOPT_SESSIOND_NETNS:-0}" = 1 ]; then
	ip link set lo up || exit 1
fi

home=$(mktemp -d /tmp/profopt-lttng-home.XXXXXX)
export LTTNG_HOME=$home HOME=$home
rundir=$home/.lttng
if [ "$PROFOPT_SESSIOND_STAGE" = ns ]; then
	mkdir -p /run/lttng
	mount -t tmpfs profopt-test /run/lttng || exit 1
	mount -t tmpfs profopt-test /dev/shm || exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
	rundir=/run/lttng
fi

if ! lttng-sessiond --daemonize --no-kernel >"$home/sessiond.log" 2>&1; then
	echo "with-sessiond: failed to start lttng-sessiond: $(tail -n 1 "$home/sessiond.log")" >&2
	rm -rf "$home"
	exit 1
fi
pid=$(cat "$rundir/lttng-sessiond.pid" 2>/dev/null)
stop_daemon() {
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$home"
}
trap stop_daemon EXIT
trap 'exit 130' INT TERM

"$@"
