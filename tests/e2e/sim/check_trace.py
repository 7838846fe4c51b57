#!/usr/bin/python3
"""check_trace.py TRACE WORKERS STEPS KERNELS LABEL: checks a recording of profopt-sim."""
import collections
import sys

import bt2

trace_dir, worker_count, step_count, kernel_count, label = sys.argv[1:6]
worker_count, step_count, kernel_count = int(worker_count), int(step_count), int(kernel_count)
failures = []


def check(cond, text):
    print(("ok   " if cond else "FAIL ") + text)
    if not cond:
        failures.append(text)


events = []  # (name, vpid, payload dict)
discarded = 0
for msg in bt2.TraceCollectionMessageIterator(trace_dir):
    if type(msg) is bt2._DiscardedEventsMessageConst:
        discarded += msg.count or 1
    elif type(msg) is bt2._EventMessageConst:
        ev = msg.event
        fields = {}
        for name, field in ev.payload_field.items():
            if isinstance(field, bt2._StringFieldConst):
                fields[name] = str(field)
            else:
                fields[name] = int(field)
        events.append((ev.name, int(ev.common_context_field["vpid"]), fields))

by_name = collections.defaultdict(list)
for name, vpid, fields in events:
    by_name[name].append((vpid, fields))

pids = {vpid for _, vpid, _ in events}
check(len(pids) == worker_count + 1, f"{len(pids)} processes emitted events, expected {worker_count + 1}")
check(discarded == 0, f"{discarded} events discarded")

run = by_name["profopt:run_begin"]
check(len(run) == 1 and run[0][1]["framework"] == "profopt-sim", "one run_begin from profopt-sim")
main_pid = run[0][0] if run else -1
config = {f["key"]: f["value"] for _, f in by_name["profopt:run_config"]}
check(config.get("num_workers") == str(worker_count) and config.get("device") == "sim",
      f"run configuration recorded ({len(config)} pairs)")

for kind in ("step_begin", "step_end"):
    steps = sorted(f["step"] for pid, f in by_name["profopt:" + kind] if pid == main_pid)
    check(steps == list(range(step_count)), f"every step has one {kind} in the main process")

worker_pid = {f["worker_id"]: pid for pid, f in by_name["profopt:worker_begin"]}
check(sorted(worker_pid) == list(range(worker_count)) and main_pid not in worker_pid.values(),
      f"worker_begin from workers {sorted(worker_pid)}")
check(len(by_name["profopt:worker_end"]) == worker_count, "every worker ended")


def stage_batches(stage, pid_filter):
    return [f["batch"] for pid, f in by_name["profopt:stage_end"]
            if f["stage"] == stage and pid_filter(pid)]


waits = stage_batches(0, lambda pid: pid == main_pid)  # data_wait
check(sorted(waits) == list(range(step_count)), "one data_wait per batch in the main process")
loaded = collections.defaultdict(set)
for pid, f in by_name["profopt:stage_end"]:
    if f["stage"] == 1 and pid != main_pid:
        loaded[pid].add(f["batch"])
check(all(b in loaded[worker_pid.get(b % worker_count)] for b in waits),
      "each waited-for batch was loaded by worker batch % workers")
ready = {f["batch"] for pid, f in by_name["profopt:batch_ready"] if pid != main_pid}
check(set(waits) <= ready, "each waited-for batch was announced by batch_ready")
cpu = [f["cpu_ns"] for _, f in by_name["profopt:stage_end"] if f["stage"] == 2]
check(cpu and min(cpu) >= 900000, f"preprocess spans carry CPU time (min {min(cpu or [0])} ns)")

begins = collections.Counter((pid, f["stage"]) for pid, f in by_name["profopt:stage_begin"])
ends = collections.Counter((pid, f["stage"]) for pid, f in by_name["profopt:stage_end"])
check(begins == ends, "stage begins and ends pair per process and stage")
labels = {f["label"] for _, f in by_name["profopt:stage_begin"]}
check(labels == {label}, f"span labels kept byte for byte: {sorted(labels)!r}")

activity = [f for _, f in by_name["profopt:gpu_activity"]]
kernels = [f for f in activity if f["kind"] == 0]
copies = [f for f in activity if f["kind"] == 1]
check(len(kernels) == step_count * kernel_count, f"{len(kernels)} kernel records")
check(len(copies) == step_count, f"{len(copies)} host-to-device copy records")
check(all(f["start_ns"] < f["end_ns"] for f in activity), "every GPU record has start < end")
launches = {f["correlation_id"] for _, f in by_name["profopt:gpu_launch"]}
check(launches == {f["correlation_id"] for f in activity}, "launches and activity correlate")
check(len(by_name["profopt:gpu_sync_end"]) == step_count, "one device sync per step")
leaks = [f for _, f in by_name["profopt:mem_alloc"] if f["label"] == "leak" and f["device"] == 0]
check(len(leaks) == step_count, f"{len(leaks)} device leak allocations")
depth = [f for _, f in by_name["profopt:counter"] if f["kind"] == 0]
check(len(depth) == step_count, "a queue-depth counter at each data wait")

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
