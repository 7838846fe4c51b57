#!/usr/bin/env bash
# samples/cluster/mpirun_job.sh: records every rank of a distributed training job started
# by Open MPI's mpirun with profopt, and makes one report of the whole job.
#
#   samples/cluster/mpirun_job.sh [COMMAND [ARGS...]]
#
# What it does:
#
#   1. `mpirun -np N` starts one process per rank; each records its rank with
#      profopt-record (one trace directory per rank), then reduces that trace to a small
#      partial.json with `profopt-analyze --partial`, still on its own host, right after
#      recording.
#   2. Once every rank is done, one `profopt-analyze --merge` reads all the partials and
#      writes the job's report: summary.json (its `distributed` member names the ranks,
#      the hosts and their clocks, and the straggler) and a text summary on stdout.
#
# The command: the script's arguments, else $PROFOPT_COMMAND (run with bash -c), else
# `python3 train.py`. It is run once per rank with the variables torch.distributed reads
# (init_process_group("gloo" or "nccl") with no arguments finds them):
#   RANK=$OMPI_COMM_WORLD_RANK  WORLD_SIZE=$OMPI_COMM_WORLD_SIZE
#   LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK
#   MASTER_ADDR=this host (where mpirun runs: rank 0 runs here unless a hostfile leaves it
#   out; then set MASTER_ADDR to the host of rank 0)  MASTER_PORT=15000 + (pid mod 20000)
# (a MASTER_ADDR or MASTER_PORT already set in the environment is kept).
#
# Environment:
#   PROFOPT_NP          ranks (default 2)
#   PROFOPT_MPIRUN_ARGS extra mpirun options, split on spaces: --hostfile FILE, --host
#                       a,b, --map-by ..., and --oversubscribe when there are more ranks
#                       than cores (mpirun refuses to start them otherwise)
#   PROFOPT_OUT         where everything goes (default ./profopt-mpi-DATE-TIME): on a file
#                       system every host sees, since the merge reads every partial
#   PROFOPT_TRACE_ROOT  where each rank's trace goes (default $PROFOPT_OUT/traces): may be
#                       host-local scratch, the traces never leave their host
#   PROFOPT_RECORD_ARGS extra options of profopt-record, e.g. "--gpu" (split on spaces)
#   PROFOPT_COMMAND     the training command when no argument is given
#
# As root, mpirun refuses to run unless it is given --allow-run-as-root, which this script
# adds then. mpirun hands remote hosts only the variables named with -x: this script names
# the ones above, PATH, LD_LIBRARY_PATH, PYTHONPATH and PROFOPT_LIBRARY.
# profopt-record and profopt-analyze come from PATH, on every host. Results:
#   $PROFOPT_OUT/traces/rankN/        rank N's trace
#   $PROFOPT_OUT/partials/rankN/      its partial.json
#   $PROFOPT_OUT/report/summary.json  the job's report
#
# Session daemons: LTTng records through one lttng-sessiond per host. A host's daemon is
# used when one runs; else the host's first rank (local rank 0) lets its profopt-record
# start one, and the host's other ranks wait until it answers before they start recording
# (two recorders starting a daemon at the same instant would collide). The last
# recording of the host stops a daemon that a recorder started.
set -u

if [ $# -gt 0 ]; then
	command=("$@")
else
	command=(bash -c "${PROFOPT_COMMAND:-python3 train.py}")
fi

np=${PROFOPT_NP:-2}
out=${PROFOPT_OUT:-$PWD/profopt-mpi-$(date +%Y%m%d-%H%M%S)}
trace_root=${PROFOPT_TRACE_ROOT:-$out/traces}
mkdir -p "$out/partials" || exit 1
out=$(cd "$out" && pwd)

MASTER_ADDR=${MASTER_ADDR:-$(hostname)}
MASTER_PORT=${MASTER_PORT:-$((15000 + $$ % 20000))}
export MASTER_ADDR MASTER_PORT PROFOPT_OUT=$out PROFOPT_TRACE_ROOT=$trace_root
export PROFOPT_RECORD_ARGS=${PROFOPT_RECORD_ARGS:-}
echo "mpirun_job.sh: $np ranks, rendezvous $MASTER_ADDR:$MASTER_PORT, output $out"

# shellcheck disable=SC2206 # options, split on spaces
options=(-np "$np" ${PROFOPT_MPIRUN_ARGS:-})
if [ "$(id -u)" -eq 0 ]; then
	options+=(--allow-run-as-root)
fi
for name in MASTER_ADDR MASTER_PORT PROFOPT_OUT PROFOPT_TRACE_ROOT PROFOPT_RECORD_ARGS PATH \
	LD_LIBRARY_PATH PYTHONPATH PROFOPT_LIBRARY; do
	if [ -n "${!name+set}" ]; then
		options+=(-x "$name")
	fi
done

# What each rank runs: its recording, then its partial. $1... is the command.
# shellcheck disable=SC2016 # expanded by the rank's bash, not here
rank_script='
export RANK=$OMPI_COMM_WORLD_RANK WORLD_SIZE=$OMPI_COMM_WORLD_SIZE
export LOCAL_RANK=$OMPI_COMM_WORLD_LOCAL_RANK
trace=$PROFOPT_TRACE_ROOT/rank$RANK
partial=$PROFOPT_OUT/partials/rank$RANK
mkdir -p "$PROFOPT_TRACE_ROOT" || exit 1
# Not root: the daemon of this user lives in $LTTNG_HOME/.lttng ($HOME by default),
# which a home directory shared by the nodes would make one for all nodes; a directory
# of the host'\''s own keeps one daemon per host.
if [ "$(id -u)" -ne 0 ] && [ -z "${LTTNG_HOME:-}" ]; then
	export LTTNG_HOME=${PROFOPT_LTTNG_HOME:-/tmp/profopt-lttng-$(id -u)}
	mkdir -p -m 700 "$LTTNG_HOME" && [ -O "$LTTNG_HOME" ] ||
		{ echo "rank $RANK: $LTTNG_HOME is not a directory of this user" >&2; exit 1; }
fi
# One session daemon per host: the host'\''s first rank starts it (through
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

# A rank that fails makes mpirun end the others (they would wait for it in their next
# collective forever) and exit non-zero.
mpirun "${options[@]}" bash -c "$rank_script" profopt-rank "${command[@]}"
status=$?
if [ "$status" -ne 0 ]; then
	echo "mpirun_job.sh: a rank failed (mpirun exit status $status); merging what was recorded" >&2
fi

# One report of the whole job, from every rank's partial.
partials=("$out"/partials/rank*)
if [ ! -e "${partials[0]}" ]; then
	echo "mpirun_job.sh: no rank left a partial in $out/partials" >&2
	exit 1
fi
profopt-analyze --merge -o "$out/report" "${partials[@]}" || exit 1
echo "mpirun_job.sh: report in $out/report"
exit "$status"
