#!/usr/bin/env bash
#SBATCH --job-name=profopt
#SBATCH --ntasks=2
#SBATCH --output=profopt-%j.out
#
# samples/cluster/slurm_job.sh: records every rank of a distributed training job under
# Slurm with profopt, and makes one report of the whole job.
#
#   sbatch [SBATCH OPTIONS] samples/cluster/slurm_job.sh [COMMAND [ARGS...]]
#
# Copy it, set the #SBATCH lines above for your cluster (nodes, tasks per node, one task
# per GPU or per rank), and submit it. What it does:
#
#   1. srun starts one task per rank; each task records its rank with profopt-record
#      (one trace directory per rank), then reduces that trace to a small partial.json
#      with `profopt-analyze --partial`, still on its own node, right after recording.
#   2. Once every rank is done, one `profopt-analyze --merge` reads all the partials and
#      writes the job's report: summary.json (its `distributed` member names the ranks,
#      the hosts and their clocks, and the straggler) and a text summary on stdout.
#
# The command: the script's arguments, else $PROFOPT_COMMAND (run with bash -c), else
# `python3 train.py`. It is run once per rank with the variables torch.distributed reads
# (init_process_group("gloo" or "nccl") with no arguments finds them):
#   RANK=$SLURM_PROCID  WORLD_SIZE=$SLURM_NTASKS  LOCAL_RANK=$SLURM_LOCALID
#   MASTER_ADDR=the first host of the job  MASTER_PORT=15000 + (job id mod 20000)
# (a MASTER_ADDR or MASTER_PORT already set in the environment is kept).
#
# Environment:
#   PROFOPT_OUT        where everything goes (default ./profopt-job-$SLURM_JOB_ID): on a
#                      file system every node sees, since the merge reads every partial
#   PROFOPT_TRACE_ROOT where each rank's trace goes (default $PROFOPT_OUT/traces): may be
#                      node-local scratch (/tmp, $TMPDIR), the traces never leave the node
#   PROFOPT_RECORD_ARGS extra options of profopt-record, e.g. "--gpu" (split on spaces)
#   PROFOPT_COMMAND    the training command when no argument is given
#
# profopt-record and profopt-analyze come from PATH, on every node. Results:
#   $PROFOPT_OUT/traces/rankN/        rank N's trace
#   $PROFOPT_OUT/partials/rankN/      its partial.json
#   $PROFOPT_OUT/report/summary.json  the job's report
#
# Session daemons: LTTng records through one lttng-sessiond per node. A node's daemon is
# used when one runs; else the first task of the node (SLURM_LOCALID 0) lets its
# profopt-record start one, and the node's other tasks wait until it answers before they
# start recording (two recorders starting a daemon at the same instant would collide).
# The last recording of the node stops a daemon that a recorder started.
set -u

if [ -z "${SLURM_JOB_ID:-}" ]; then
	echo "slurm_job.sh: not inside a Slurm job; submit it with sbatch" >&2
	exit 2
fi

if [ $# -gt 0 ]; then
	command=("$@")
else
	command=(bash -c "${PROFOPT_COMMAND:-python3 train.py}")
fi

out=${PROFOPT_OUT:-$PWD/profopt-job-$SLURM_JOB_ID}
trace_root=${PROFOPT_TRACE_ROOT:-$out/traces}
mkdir -p "$out/partials" || exit 1
out=$(cd "$out" && pwd)

# The rendezvous of torch.distributed: the job's first host, a port from the job id (two
# jobs sharing a node get different ports).
if [ -z "${MASTER_ADDR:-}" ]; then
	MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
fi
MASTER_PORT=${MASTER_PORT:-$((15000 + SLURM_JOB_ID % 20000))}
export MASTER_ADDR MASTER_PORT PROFOPT_OUT=$out PROFOPT_TRACE_ROOT=$trace_root
export PROFOPT_RECORD_ARGS=${PROFOPT_RECORD_ARGS:-}
echo "slurm_job.sh: job $SLURM_JOB_ID, $SLURM_NTASKS ranks, rendezvous $MASTER_ADDR:$MASTER_PORT, output $out"

# What each task runs: its rank's recording, then its partial. $1... is the command.
# shellcheck disable=SC2016 # expanded by the task's bash, not here
rank_script='
export RANK=$SLURM_PROCID WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID
trace=$PROFOPT_TRACE_ROOT/rank$RANK
partial=$PROFOPT_OUT/partials/rank$RANK
mkdir -p "$PROFOPT_TRACE_ROOT" || exit 1
# Not root: the daemon of this user lives in $LTTNG_HOME/.lttng ($HOME by default),
# which a home directory shared by the nodes would make one for all nodes; a directory
# of the node'\''s own keeps one daemon per node.
if [ "$(id -u)" -ne 0 ] && [ -z "${LTTNG_HOME:-}" ]; then
	export LTTNG_HOME=${PROFOPT_LTTNG_HOME:-/tmp/profopt-lttng-$(id -u)}
	mkdir -p -m 700 "$LTTNG_HOME" && [ -O "$LTTNG_HOME" ] ||
		{ echo "rank $RANK: $LTTNG_HOME is not a directory of this user" >&2; exit 1; }
fi
# One session daemon per node: the node'\''s first task starts it (through
# profopt-record), the others wait for it to answer, 60 s at most.
if [ "$LOCAL_RANK" != 0 ]; then
	for _ in $(seq 600); do
		lttng list >/dev/null 2>&1 && break
		sleep 0.1
	done
fi
# shellcheck disable=SC2086 # options, split on spaces
profopt-record $PROFOPT_RECORD_ARGS -o "$trace" -- "$@"
status=$?
if [ -f "$trace/profopt-recording.txt" ]; then
	profopt-analyze --partial -o "$partial" "$trace" >"$trace.analyze.log" 2>&1 ||
		{ echo "rank $RANK: profopt-analyze --partial failed:" >&2; tail -n 20 "$trace.analyze.log" >&2; status=1; }
fi
exit "$status"
'

# One task per rank; if a rank fails, srun ends the others (they would wait for it in
# their next collective forever).
srun --kill-on-bad-exit=1 bash -c "$rank_script" profopt-rank "${command[@]}"
status=$?
if [ "$status" -ne 0 ]; then
	echo "slurm_job.sh: a rank failed (srun exit status $status); merging what was recorded" >&2
fi

# One report of the whole job, from every rank's partial.
partials=("$out"/partials/rank*)
if [ ! -e "${partials[0]}" ]; then
	echo "slurm_job.sh: no rank left a partial in $out/partials" >&2
	exit 1
fi
profopt-analyze --merge -o "$out/report" "${partials[@]}" || exit 1
echo "slurm_job.sh: report in $out/report"
exit "$status"
