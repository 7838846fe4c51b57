# shellcheck shell=bash
# lib.sh: what the cluster tests (slurm.sh, mpirun.sh) share. Sourced, never run.
#
# cluster_setup NAME BUILD PACKAGE...: installs the packages that are missing, moves the
# test into private mount and PID namespaces (re-running it there, as with-sessiond.sh
# does), makes its temporary directory $work and the environment the ranks need (build/bin
# first on PATH, the library and the Python module of this tree).
# cluster_check JOB_STATUS OUT: the checks on the job's results; sets $failed.

# shellcheck disable=SC2034 # failed and train are the sourcing script's
cluster_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
failed=0

ok() { echo "ok   $*"; }
fail() {
	echo "FAIL $*"
	failed=1
}

# The Debian packages that are missing, installed with apt-get (as tests/lib/install-deps.sh
# does); exits 77 when they are missing and cannot be installed (not root).
cluster_install() {
	local missing=() pkg
	for pkg in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
			missing+=("$pkg")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "skip: missing Debian packages ${missing[*]}, and not root to install them"
		exit 77
	fi
	echo "installing ${missing[*]}"
	if ! DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive timeout 120 apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq \
			--no-install-recommends "${missing[@]}" >/dev/null ||
			{ echo "FAIL could not install ${missing[*]}"; exit 1; }
	fi
}

# A free TCP port of 127.0.0.1 in [LOW, HIGH).
cluster_free_port() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import random, socket, sys
low, high = int(sys.argv[1]), int(sys.argv[2])
for _ in range(200):
    port = random.randrange(low, high)
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
else:
    sys.exit("no free port")
EOF
}

cluster_setup() {
	local name=$1
	build=$(cd "$2" && pwd) || { echo "FAIL no build directory $2"; exit 1; }
	shift 2
	cluster_install "$@"
	# Private mount and PID namespaces: /run/lttng and /dev/shm of our own (no session
	# daemon of the machine or of another test is seen or disturbed), and whatever the
	# job leaves running dies with the namespace, even when the test is killed. Where
	# unshare is not allowed (not root, a container), the test runs as it is.
	if [ "${PROFOPT_CLUSTER_NS:-}" = "" ] && [ "$(id -u)" -eq 0 ] &&
		unshare --mount --pid --fork --mount-proc --propagation private true 2>/dev/null; then
		PROFOPT_CLUSTER_NS=1 exec unshare --mount --pid --fork --kill-child --mount-proc \
			--propagation private "$0" "$build"
	fi
	if [ "${PROFOPT_CLUSTER_NS:-}" = 1 ]; then
		mkdir -p /run/lttng
		mount -t tmpfs profopt-test /run/lttng || exit 1
		mount -t tmpfs profopt-test /dev/shm || exit 1
	fi
	for tool in profopt-record profopt-analyze; do
		[ -x "$build/bin/$tool" ] || { echo "FAIL $build/bin/$tool is not built"; exit 1; }
	done
	work=$(mktemp -d "/tmp/profopt-$name.XXXXXX") || exit 1
	# build/bin first; the daemons (munged, slurmctld, slurmd) are in /usr/sbin
	export PATH=$build/bin:$PATH:/usr/sbin:/sbin
	export PROFOPT_LIBRARY=$build/lib/libprofopt.so
	export PYTHONPATH=$cluster_root/tracepoints/python${PYTHONPATH:+:$PYTHONPATH}
	# the training command of both tests: ddp_straggler's rank 1 loads each batch in 40 ms
	# shellcheck disable=SC2034 # used by the sourcing script
	train=(/usr/bin/python3 "$cluster_root/tests/workloads/ddp_straggler.py"
		--one-rank "$work/stamps")
	mkdir -p "$work/stamps"
}

# Stops a daemon started by this test, by its pid: SIGTERM, 10 s, then SIGKILL.
cluster_stop() {
	local pid=$1 _
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# The checks on a job that wrote under OUT (traces/, partials/, report/).
# The test's temp dir removed, or kept and named with PROFOPT_CLUSTER_KEEP=1.
cluster_remove_work() {
	if [ "${PROFOPT_CLUSTER_KEEP:-0}" = 1 ]; then
		echo "kept $work"
	else
		rm -rf "$work"
	fi
}

cluster_check() {
	local status=$1 out=$2 rank
	if [ "$status" -eq 0 ]; then
		ok "the job exited 0"
	else
		fail "the job exited with status $status"
	fi
	for rank in 0 1; do
		if [ -f "$out/traces/rank$rank/profopt-recording.txt" ]; then
			ok "rank $rank was recorded by its own profopt-record ($out/traces/rank$rank)"
		else
			fail "rank $rank left no recording in $out/traces/rank$rank"
		fi
		if [ -f "$out/partials/rank$rank/partial.json" ]; then
			ok "rank $rank's profopt-analyze --partial wrote partials/rank$rank/partial.json"
		else
			fail "rank $rank left no partials/rank$rank/partial.json"
		fi
	done
	if [ ! -f "$out/report/summary.json" ]; then
		fail "profopt-analyze --merge wrote no report/summary.json"
		return
	fi
	ok "profopt-analyze --merge wrote report/summary.json"
	# The two ranks' traces analysed together (they were recorded through one session
	# daemon, so each holds the other's processes too): the same job as the merge.
	if "$build/bin/profopt-analyze" -q --json-only -o "$work/joint" \
		"$out/traces/rank0" "$out/traces/rank1" 2>"$work/joint.err"; then
		if /usr/bin/python3 -c 'import json, sys; a, b = (json.load(open(p)).get("distributed") for p in sys.argv[1:3]); sys.exit(a != b)' \
			"$out/report/summary.json" "$work/joint/summary.json"; then
			ok "profopt-analyze traces/rank0 traces/rank1 gives the merge's ranks, clocks and straggler"
		else
			fail "profopt-analyze traces/rank0 traces/rank1 differs from the merge: $(head -c 600 "$work/joint/summary.json")"
		fi
	else
		fail "profopt-analyze traces/rank0 traces/rank1 failed: $(cat "$work/joint.err")"
	fi
	# shellcheck disable=SC2034 # read by the sourcing script
	/usr/bin/python3 - "$out/report/summary.json" "$work/stamps" <<'EOF' || failed=1
import json, os, sys
summary = json.load(open(sys.argv[1]))
distributed = summary.get("distributed") or {}
ranks = {entry.get("rank"): entry for entry in distributed.get("ranks") or []}
failed = False
def check(ok, text):
    global failed
    print(("ok   " if ok else "FAIL ") + text)
    failed |= not ok
steps = {r: e.get("steps") for r, e in ranks.items()}
check(sorted(ranks) == [0, 1] and all(isinstance(s, int) and s > 0 for s in steps.values()),
      f"distributed.ranks holds ranks 0 and 1, each with steps: {steps}")
for rank in (0, 1):
    path = os.path.join(sys.argv[2], f"rank{rank}.json")
    if rank in ranks and os.path.exists(path):
        want = len(json.load(open(path))["backward_at_ns"])
        check(steps[rank] == want,
              f"rank {rank}'s steps in the report ({steps[rank]}) are the steps it ran ({want})")
straggler = distributed.get("straggler") or {}
check((straggler.get("rank"), straggler.get("cause")) == (1, "input"),
      f"the straggler is rank 1, cause input: {straggler}")
sys.exit(1 if failed else 0)
EOF
}
