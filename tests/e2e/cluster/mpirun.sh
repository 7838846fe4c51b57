#!/usr/bin/env bash
# mpirun.sh [BUILD]: a 2-rank DDP job (tests/workloads/ddp_straggler.py --one-rank, gloo on
# the CPU) started by Open MPI's mpirun (openmpi-bin, installed when missing) through
# samples/cluster/mpirun_job.sh: one profopt-record per rank, each rank reduces its trace
# with `profopt-analyze --partial`, and `profopt-analyze --merge` makes the job's report.
# Checks: mpirun exits 0, each rank left a trace and a partial, the report's
# distributed.ranks holds ranks 0 and 1 with the steps each ran, and rank 1 (which loads
# each batch in 40 ms) is the straggler, cause input.
#
# No daemon of its own: mpirun starts the ranks on this machine (--oversubscribe, so that
# a machine with one core runs both), under a 300 s deadline. The test runs in private
# mount and PID namespaces (lib.sh): a session daemon of the machine is not seen, and
# nothing the job started outlives the test.
# Prints "ok ..."/"FAIL ..." lines; exits 1 when a check failed, 77 when the package is
# missing and cannot be installed.
set -u
# shellcheck source=tests/e2e/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
cluster_setup mpirun "${1:-$cluster_root/build}" openmpi-bin

# shellcheck disable=SC2317 # run by the trap
cleanup() {
	cluster_remove_work
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$(date +%s)
out=$work/job/out
mkdir -p "$work/job" || exit 1
MASTER_PORT=$(cluster_free_port 15000 35000) || { echo "FAIL no free port"; exit 1; }
if ! getent hosts "$(hostname)" >/dev/null; then
	export MASTER_ADDR=127.0.0.1
fi
export MASTER_PORT PROFOPT_OUT=$out PROFOPT_NP=2 PROFOPT_MPIRUN_ARGS=--oversubscribe
(cd "$work/job" && exec timeout --kill-after=10 300 \
	"$cluster_root/samples/cluster/mpirun_job.sh" "${train[@]}") >"$work/job/mpirun.out" 2>&1
status=$?
echo "mpirun_job.sh: status $status after $(($(date +%s) - started)) s"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
	fail "the job did not end within 300 s"
fi
cluster_check "$status" "$out"
if [ "$failed" -ne 0 ]; then
	echo "--- job output"
	tail -n 60 "$work/job/mpirun.out"
	for log in "$out"/traces/rank*.analyze.log; do
		[ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }
	done
fi
echo "wall time $(($(date +%s) - started)) s"
exit "$failed"
