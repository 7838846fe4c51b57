#!/usr/bin/env bash
# findings.sh BIN_DIR: what profopt-analyze finds in torch.profiler traces of an input-bound
# loop (the DataLoader's __next__ 60% of each step, 20 short kernels), generated here as
# PyTorch writes them. With _SingleProcessDataLoaderIter (num_workers=0) the trace shows
# the main process loading: input-bound advises num_workers with a prediction. With
# _MultiProcessingDataLoaderIter the workers are not in the trace: input-bound says so and
# advises nothing it cannot predict. Both: gpu-idle, caused by the wait. And GPU memory
# that grows every step, from the [memory] events: gpu-memory-growth.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-kineto-findings.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

write() { # write FILE ITERATOR
	python3 - "$1" "$2" <<'PY'
import json, sys
events, correlation = [], 1
for step in range(30):
    start = 1_000_000 + step * 10_000
    events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": 10, "tid": 10, "ts": start, "dur": 10_000})
    events.append({"ph": "X", "cat": "user_annotation",
                   "name": "enumerate(DataLoader)#%s.__next__" % sys.argv[2],
                   "pid": 10, "tid": 10, "ts": start + 10, "dur": 6_000})
    for k in range(20):
        launch = start + 6_100 + k * 100
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10,
                       "tid": 10, "ts": launch, "dur": 10, "args": {"correlation": correlation}})
        events.append({"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_f32f32", "pid": 0,
                       "tid": 7, "ts": launch + 20, "dur": 80,
                       "args": {"device": 0, "stream": 7, "correlation": correlation}})
        correlation += 1
    events.append({"ph": "X", "cat": "cpu_op", "pid": 10, "tid": 11, "ts": start + 7_200,
                   "name": "autograd::engine::evaluate_function: AddmmBackward0", "dur": 1_500})
    events.append({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step",
                   "pid": 10, "tid": 10, "ts": start + 9_000, "dur": 900})
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
}

check() { # check NAME FILE (must|must-not REGEX)...
	local name=$1 file=$2 ok=1
	shift 2
	if ! "$bin/profopt-analyze" --json-only -o "$work/out-$name" "$file" >"$work/$name.out" 2>&1; then
		failed=$((failed + 1)); echo "FAIL $name: profopt-analyze failed:"; cat "$work/$name.out"; return
	fi
	while [ $# -ge 2 ]; do
		if [ "$1" = must ] && ! grep -Eq -- "$2" "$work/$name.out"; then
			ok=0; echo "FAIL $name: does not say /$2/"
		elif [ "$1" = must-not ] && grep -Eq -- "$2" "$work/$name.out"; then
			ok=0; echo "FAIL $name: says /$2/"
		fi
		shift 2
	done
	if [ $ok = 1 ]; then passed=$((passed + 1)); echo "ok   $name"
	else failed=$((failed + 1)); sed 's/^/    /' "$work/$name.out"; fi
}

write "$work/main.json" _SingleProcessDataLoaderIter
check main-process-loading "$work/main.json" \
	must 'Verdict: input-bound' \
	must 'critical input-bound .*loaded on the training thread itself' \
	must '-> set num_workers=[0-9]+ \(predicted [0-9.]+ ms/step' \
	must 'gpu-idle .*while the training thread is in load' \
	must-not 'kineto-records-left-out'
write "$work/workers.json" _MultiProcessingDataLoaderIter
check workers-not-traced "$work/workers.json" \
	must 'Verdict: input-bound' \
	must 'input-bound .*what the loader does meanwhile is not in the trace' \
	must 'gpu-idle .*while the training thread is in data_wait' \
	must 'kineto-not-recorded' \
	must-not 'set num_workers'
# GPU memory that grows 64 MiB a step ([memory] events, profile_memory=True): a tensor kept
# every step, and a temporary one freed in the same step.
python3 - "$work/leak.json" <<'PY'
import json, sys
events, correlation, total = [], 1, 0
for step in range(40):
    start = 1_000_000 + step * 10_000
    events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": 10, "tid": 10, "ts": start, "dur": 10_000})
    for k in range(20):
        launch = start + 100 + k * 400
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10,
                       "tid": 10, "ts": launch, "dur": 10, "args": {"correlation": correlation}})
        events.append({"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_f32f32", "pid": 0,
                       "tid": 7, "ts": launch + 20, "dur": 380,
                       "args": {"device": 0, "stream": 7, "correlation": correlation}})
        correlation += 1
    total += 64 << 20
    for ts, addr, size, allocated in ((50, 0x7f0000000000 + step * (64 << 20), 64 << 20, total),
                                      (60, 0x100000, 1 << 20, total + (1 << 20)),
                                      (9_000, 0x100000, -(1 << 20), total)):
        events.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 10, "tid": 10,
                       "ts": start + ts, "args": {"Device Type": 1, "Device Id": 0,
                                                  "Addr": addr, "Bytes": size,
                                                  "Total Allocated": allocated,
                                                  "Total Reserved": total + (128 << 20)}})
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
check gpu-memory-growth "$work/leak.json" \
	must 'gpu-memory-growth .*grows by 65536\.0 KiB per step' \
	must-not 'host-memory-growth' \
	must-not 'input-bound'
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
