#!/usr/bin/env bash
# slurm.sh [BUILD]: a 2-rank DDP job (tests/workloads/ddp_straggler.py --one-rank, gloo on
# the CPU) submitted with sbatch to a private Slurm cluster of one node, this machine, run
# by samples/cluster/slurm_job.sh: srun starts one profopt-record per rank, each rank's
# task reduces its trace with `profopt-analyze --partial`, and `profopt-analyze --merge`
# makes the job's report. Checks: the job exits 0, each rank left a trace and a partial,
# the report's distributed.ranks holds ranks 0 and 1 with the steps each ran, and rank 1
# (which loads each batch in 40 ms) is the straggler, cause input.
#
# The cluster (Debian's slurm-wlm 22.05 and munge, installed when missing): munged,
# slurmctld and slurmd run in the foreground (-F, -D) as background jobs of this script,
# each with its pid noted, and are stopped by that pid when the script ends (trap). All
# their files are in a temporary directory: the munge key and socket (auth/munge, as
# real clusters use; munged runs fine as root with a private key, socket, pid and log
# file, so auth/none is not needed), slurm.conf (SLURM_CONF points the clients at it),
# state, spool, logs and pid files. The node is this machine (`hostname -s`, address
# 127.0.0.1), 2 CPUs (config_overrides: the configuration is trusted over the
# hardware); no cgroup is used (proctrack/linuxproc, task/none, no accounting), so
# slurmd needs no cgroup hierarchy of its own. Ports: free ones, chosen at start.
# The whole test runs in private mount and PID namespaces (lib.sh): a session daemon of
# the machine is not seen, and nothing the job started outlives the test.
# Prints "ok ..."/"FAIL ..." lines; exits 1 when a check failed, 77 when not root or when
# the packages are missing and cannot be installed.
set -u
# shellcheck source=tests/e2e/cluster/lib.sh
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "skip: a private Slurm node needs root (slurmd runs the job as its user)"
	exit 77
fi
cluster_setup slurm "${1:-$cluster_root/build}" slurm-wlm munge

munged_pid='' slurmctld_pid='' slurmd_pid=''
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	# jobs first (their steps are not children of this script), then the daemons
	if [ -n "$slurmctld_pid" ]; then
		timeout 10 scancel --quiet --full --user=root >/dev/null 2>&1
	fi
	cluster_stop "$slurmd_pid"
	cluster_stop "$slurmctld_pid"
	cluster_stop "$munged_pid"
	cluster_remove_work
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$(date +%s)
# munged checks that its socket's directory can be entered by everyone
chmod 711 "$work"
mkdir -m 711 "$work/munge" && mkdir "$work/state" "$work/spool" "$work/log" "$work/job" || exit 1
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2>/dev/null &&
	chmod 600 "$work/munge/munge.key" || exit 1
munge_socket=$work/munge/munge.socket
munged --foreground --key-file="$work/munge/munge.key" --socket="$munge_socket" \
	--pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
	--seed-file="$work/munge/munged.seed" >"$work/munge/munged.out" 2>&1 &
munged_pid=$!

node=$(hostname -s)
ctld_port=$(cluster_free_port 40000 50000) || { echo "FAIL no free port"; exit 1; }
slurmd_port=$(cluster_free_port 50000 60000) || { echo "FAIL no free port"; exit 1; }
# slurm_job.sh takes MASTER_PORT = 15000 + job id mod 20000: the first job id is chosen
# so that this port is a free one.
master_port=$(cluster_free_port 15001 35000) || { echo "FAIL no free port"; exit 1; }
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=profopt-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId=$((master_port - 15000 + 20000))
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

# munged answers before slurmctld starts (it authenticates the first message)
for _ in $(seq 100); do
	munge --socket="$munge_socket" --no-input 2>/dev/null |
		unmunge --socket="$munge_socket" >/dev/null 2>&1 && break
	kill -0 "$munged_pid" 2>/dev/null || break
	sleep 0.1
done
if ! munge --socket="$munge_socket" --no-input | unmunge --socket="$munge_socket" >/dev/null; then
	fail "munged did not start: $(tail -n 3 "$work/munge/munged.out")"
	exit 1
fi
ok "munged answers on its private socket (pid $munged_pid)"

slurmctld -D >"$work/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D -N "$node" >"$work/log/slurmd.out" 2>&1 &
slurmd_pid=$!

# the node idle, 30 s at most
state=
for _ in $(seq 150); do
	state=$(timeout 5 sinfo --noheader --node="$node" --format=%t 2>/dev/null)
	[ "$state" = idle ] && break
	if ! kill -0 "$slurmctld_pid" 2>/dev/null || ! kill -0 "$slurmd_pid" 2>/dev/null; then
		break
	fi
	sleep 0.2
done
if [ "$state" != idle ]; then
	fail "the node is not idle after 30 s (sinfo: '$state')"
	tail -n 20 "$work/log/slurmctld.out" "$work/log/slurmd.out"
	exit 1
fi
ok "slurmctld (pid $slurmctld_pid) and slurmd (pid $slurmd_pid) run; node $node is idle ($(($(date +%s) - started)) s)"

# The job. MASTER_ADDR is the job's first host (slurm_job.sh): the node's name must
# resolve, which it does on a Debian machine (/etc/hosts); where it does not, 127.0.0.1.
if ! getent hosts "$node" >/dev/null; then
	export MASTER_ADDR=127.0.0.1
fi
out=$work/job/out
export PROFOPT_OUT=$out
submitted=$(date +%s)
timeout --kill-after=10 300 sbatch --wait --ntasks=2 --nodes=1 --time=5 --chdir="$work/job" \
	--output="$work/job/slurm-%j.out" "$cluster_root/samples/cluster/slurm_job.sh" \
	"${train[@]}" >"$work/job/sbatch.out" 2>&1
status=$?
echo "sbatch --wait: status $status after $(($(date +%s) - submitted)) s: $(head -n 1 "$work/job/sbatch.out")"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
	fail "the job did not end within 300 s"
fi
cluster_check "$status" "$out"
if [ "$failed" -ne 0 ]; then
	echo "--- job output"
	tail -n 60 "$work"/job/slurm-*.out
	for log in "$out"/traces/rank*.analyze.log; do
		[ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }
	done
	echo "--- slurmd log"
	tail -n 20 "$work/log/slurmd.log"
fi
echo "wall time $(($(date +%s) - started)) s"
exit "$failed"
