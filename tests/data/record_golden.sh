#!/usr/bin/env bash
# record_golden.sh BUILD_DIR: records the committed golden traces again (tests/data/traces)
# next to a private session daemon. Run it only to change what the traces hold (a new
# event, a new case); then run the golden test with UPDATE_GOLDEN=1, review the diff of
# tests/data/expected and commit both. Traces are small real recordings: profopt-sim in
# the main scenarios, two PyTorch training scripts (Debian's python3-torch, CPU; one with
# --stacks), and the CUPTI collector's events from records built by hand.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -z "${PROFOPT_SESSIOND_STAGE:-}" ]; then
	exec "$root/tests/lib/with-sessiond.sh" "$0" "$@"
fi
bin=$build/bin
common=(--kernels 8 --jitter 5 --seed 3)
record() { # record NAME SIM_ARGS...
	local name=$1
	shift
	rm -rf "$here/traces/$name"
	"$bin/profopt-record" -o "$here/traces/$name" -- "$bin/profopt-sim" "${common[@]}" "$@" \
		>/dev/null
}
mkdir -p "$here/traces"
record main-loading --workers 0 --steps 60 --load-ms 6 --preprocess-ms 3 --collate-ms 1 \
	--h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4
record too-few-workers --workers 1 --steps 60 --load-ms 40 --preprocess-ms 1 \
	--collate-ms 0.5 --h2d-ms 0.3 --forward-ms 4 --backward-ms 4 --optimizer-ms 1 --gpu-ms 5
record compute-bound --workers 2 --steps 60 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5 \
	--h2d-ms 0.2 --forward-ms 2 --backward-ms 2 --optimizer-ms 0.5 --gpu-ms 30
record leak-main --workers 2 --steps 100 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5 \
	--h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 4 \
	--leak-bytes 262144 --leak-in main
record periodic-stall --workers 2 --steps 80 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5 \
	--h2d-ms 0.3 --forward-ms 3 --backward-ms 3 --optimizer-ms 1 --gpu-ms 5 \
	--stall-every 10 --stall-ms 80
record respawning-workers --workers 2 --steps 20 --epochs 4 --persistent-workers 0 \
	--worker-start-ms 80 --load-ms 2 --preprocess-ms 1 --collate-ms 0.5 --h2d-ms 0.2 \
	--forward-ms 4 --backward-ms 4 --optimizer-ms 1 --gpu-ms 3
rm -rf "$here/traces/pytorch-main-loading"
PROFOPT_LIBRARY=$build/lib/libprofopt.so PYTHONPATH=$root/tracepoints/python \
	"$bin/profopt-record" -o "$here/traces/pytorch-main-loading" -- /usr/bin/python3 \
	"$root/tests/workloads/main_loading.py" --steps 60 --truth /dev/null >/dev/null
# Function samples (--stacks): three functions of designed shares in 2 workers' load stage.
rm -rf "$here/traces/pytorch-hotspots"
PROFOPT_LIBRARY=$build/lib/libprofopt.so PYTHONPATH=$root/tracepoints/python \
	"$bin/profopt-record" --stacks -o "$here/traces/pytorch-hotspots" -- /usr/bin/python3 \
	"$root/tests/workloads/hotspots_workers.py" --steps 30 --truth /dev/null >/dev/null
# GPU activity as the CUPTI collector records it: records built by hand through its
# conversion (tests/e2e/cupti/cupti_replay.c; built when CUPTI is found).
if [ -x "$bin/po_cupti_replay" ]; then
	rm -rf "$here/traces/cupti-gpu-bound"
	"$bin/profopt-record" -o "$here/traces/cupti-gpu-bound" -- "$bin/po_cupti_replay" gpu-bound \
		>/dev/null
fi
du -sh "$here/traces"/*
