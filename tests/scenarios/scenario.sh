#!/usr/bin/env bash
# scenario.sh BIN_DIR NAME: records profopt-sim in one pipeline scenario, analyses the trace
# and checks summary.json's verdict and findings with check.py. Runs inside
# tests/lib/with-sessiond.sh. Durations are long enough that a machine with a core of other
# work cannot flip the outcome; when the checks fail while other programs used a quarter of
# the CPUs or more during the recording (measured: tests/lib/machine.py), the scenario the
# verdict depends on did not happen, and the test is skipped (77) with one line saying so.
set -u
bin=$1
name=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-scenario.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Common settings: 8 kernels per step, a little jitter, a fixed seed.
common=(--kernels 8 --jitter 5 --seed 3)

case $name in
main-loading)
	args=(--workers 0 --steps 120 --load-ms 6 --preprocess-ms 3 --collate-ms 1 --h2d-ms 0.3
	      --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4) ;;
too-few-workers)
	args=(--workers 1 --steps 120 --load-ms 40 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 4 --backward-ms 4 --optimizer-ms 1 --gpu-ms 5) ;;
cpu-saturated)
	# 15.5 ms of CPU per batch in each of 2 workers and 4.5 ms per step in the main loop:
	# three busy threads share 2 cores, so the CPU stages wait for a core (more so when
	# other programs run too).
	# The run is pinned to 2 cores, whatever the machine has.
	args=(--workers 2 --steps 120 --load-ms 0.5 --preprocess-ms 14 --collate-ms 1
	      --h2d-ms 0.2 --forward-ms 2 --backward-ms 2 --optimizer-ms 0.5 --gpu-ms 3)
	launcher=(taskset -c 0,1) ;;
leak-worker)
	args=(--workers 2 --steps 150 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4
	      --leak-bytes 262144 --leak-in worker) ;;
leak-main)
	args=(--workers 2 --steps 150 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4
	      --leak-bytes 262144 --leak-in main) ;;
periodic-stall)
	args=(--workers 2 --steps 100 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 5
	      --stall-every 10 --stall-ms 80) ;;
compute-bound)
	args=(--workers 2 --steps 100 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.2 --forward-ms 2 --backward-ms 2 --optimizer-ms 0.5 --gpu-ms 30) ;;
balanced)
	# Many short kernels: the GPU's idle time is spread in gaps far below 1 ms, even when
	# a busy machine stretches the host's time between launches a few times over.
	args=(--workers 2 --steps 120 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 4 --backward-ms 4 --optimizer-ms 0.3 --gpu-ms 3
	      --kernels 32) ;;
few-steps)
	args=(--workers 0 --steps 12 --load-ms 6 --preprocess-ms 3 --collate-ms 1 --h2d-ms 0.3
	      --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4) ;;
lossy)
	args=(--workers 1 --steps 300 --load-ms 1 --preprocess-ms 0.2 --collate-ms 0.1
	      --h2d-ms 0.1 --forward-ms 0.5 --backward-ms 0.5 --optimizer-ms 0.1 --gpu-ms 1
	      --kernels 400)
	record_options=(--subbuf-size 4096 --num-subbuf 2) ;;
cpu-contention)
	# 2K-1 workers spinning 20 ms x K of CPU per batch beside a loop spinning 18 ms per
	# step, on a machine of K cores: 2K runnable threads, so the loop gets well under a
	# core (40-70% measured on 2 cores) and the loader and the loop would need more than
	# the cores at full speed.
	cores=$(getconf _NPROCESSORS_ONLN)
	args=(--workers $((2 * cores - 1)) --steps $((2 * cores + 60)) --load-ms 0.5
	      --preprocess-ms $((20 * cores)) --collate-ms 1 --h2d-ms 0.2 --forward-ms 8
	      --backward-ms 8 --optimizer-ms 2 --gpu-ms 2) ;;
cpu-contention-control)
	# The same loop beside one light worker: the loop keeps its core.
	args=(--workers 1 --steps 60 --load-ms 0.5 --preprocess-ms 3 --collate-ms 1
	      --h2d-ms 0.2 --forward-ms 8 --backward-ms 8 --optimizer-ms 2 --gpu-ms 2) ;;
handoff)
	# Workers with little to do, a loop of 16 ms of CPU, and 5 ms of CPU per batch to take
	# a ready batch in (unpickling): the hand-off, not the loading, costs the loop time.
	args=(--workers 2 --steps 120 --load-ms 1 --preprocess-ms 0.5 --collate-ms 0.5
	      --h2d-ms 0.2 --forward-ms 7 --backward-ms 7 --optimizer-ms 2 --gpu-ms 2
	      --handoff-ms 5) ;;
respawning-workers)
	# PyTorch's default: new workers every epoch (8 epochs of 25 steps), each taking 80 ms
	# to start; their memory must never add up across epochs.
	args=(--workers 2 --steps 25 --epochs 8 --persistent-workers 0 --worker-start-ms 80
	      --load-ms 2 --preprocess-ms 1 --collate-ms 0.5 --h2d-ms 0.2 --forward-ms 4
	      --backward-ms 4 --optimizer-ms 1 --gpu-ms 3) ;;
change-at)
	# A run that changes at step 60 (--change-at, the live alerts' test bed): the workers'
	# loading goes from 2 to 60 ms per batch and the main process starts leaking 256 KiB
	# per step. The trace must show both, from that step on only.
	args=(--workers 2 --steps 120 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4
	      --change-at 60 --after load-ms=60 --after leak-bytes=262144) ;;
gpu-bound-fp32 | gpu-bound-bf16 | gpu-bound-layout | gpu-bound-small | gpu-bound-small-nofit)
	# The device busy most of each step (40 kernels of 1 ms beside 5 ms of host work), its
	# kernels named as cuBLAS, cuDNN and PyTorch name theirs (--kernel-mix): what the GPU
	# works on decides the advice, and where nothing helps there is none.
	args=(--workers 2 --steps 100 --load-ms 1 --preprocess-ms 0.5 --collate-ms 0.5
	      --h2d-ms 0.2 --forward-ms 2 --backward-ms 2 --optimizer-ms 0.5 --gpu-ms 40
	      --kernels 40 --gpu-multiprocessors 132 --gpu-memory-mb 81920
	      --resident-memory-mb 2000 --step-memory-mb 3000)
	case $name in
	gpu-bound-fp32) args+=(--kernel-mix matmul-fp32:80,elementwise:20 --kernel-blocks 1024) ;;
	gpu-bound-bf16) args+=(--kernel-mix matmul-bf16:80,elementwise:20 --kernel-blocks 1024) ;;
	gpu-bound-layout)
		args+=(--kernel-mix conv-bf16:60,layout:25,elementwise:15 --kernel-blocks 1024) ;;
	gpu-bound-small) args+=(--kernel-mix matmul-bf16:80,elementwise:20 --kernel-blocks 32) ;;
	gpu-bound-small-nofit)
		args+=(--kernel-mix matmul-bf16:80,elementwise:20 --kernel-blocks 32
		       --step-memory-mb 60000) ;;
	esac ;;
launch-bound | launch-bound-graphs)
	# 100 kernels of 0.1 ms per step, launched 0.4 ms apart by the training thread: the
	# device idles most of the step. As CUDA graphs (25 kernels a launch), the launches
	# are not what the host's time goes to.
	args=(--workers 2 --steps 100 --load-ms 1 --preprocess-ms 0.5 --collate-ms 0.5
	      --h2d-ms 0.2 --forward-ms 20 --backward-ms 20 --optimizer-ms 0.5 --gpu-ms 10
	      --kernels 100 --kernel-mix matmul-fp32:60,elementwise:40 --kernel-blocks 1024
	      --gpu-multiprocessors 132 --gpu-memory-mb 81920 --resident-memory-mb 500
	      --step-memory-mb 200)
	[ "$name" = launch-bound-graphs ] && args+=(--graph-kernels 25) ;;
killed-workers)
	# At the end the workers are killed in the middle of loads past the last step, as a
	# DataLoader terminates workers that do not stop in time: not tracer loss.
	args=(--workers 2 --steps 80 --load-ms 30 --preprocess-ms 1 --collate-ms 0.5
	      --h2d-ms 0.2 --forward-ms 10 --backward-ms 10 --optimizer-ms 1 --gpu-ms 3
	      --kill-workers 1) ;;
*)
	echo "scenario.sh: unknown scenario $name" >&2
	exit 2 ;;
esac

# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=../lib/busy.sh
. "$here/../lib/busy.sh"
launcher=(/usr/bin/python3 "$busy_lib/machine.py" run "$work/machine.json" --
	${launcher[@]+"${launcher[@]}"})
record_sim "$work/trace" "${record_options[@]+"${record_options[@]}"}" -- "${common[@]}" "${args[@]}" || exit 1
analyze "$work/trace" "$work/report" || exit 1
/usr/bin/python3 "$here/check.py" "$name" "$work/report/summary.json" && exit 0
skip_if_busy "the recording" "the checks above failed" "$work/machine.json"
exit 1
