#!/usr/bin/python3
"""check_trace.py MODE TRACE_DIR: checks a profopt-record trace with babeltrace2's Python
bindings. MODE is pipeline (record_workload pipeline), sim (profopt-sim --workers 2),
wait (record_workload wait, stopped by a signal) or heap (record_workload heap, --heap).
Prints one line per check and "N passed, N failed"; exits 1 on any failure."""
import collections
import sys

import bt2

mode, trace_dir = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(cond, text):
    global passed, failed
    print(("ok   " if cond else "FAIL ") + text)
    if cond:
        passed += 1
    else:
        failed += 1


events_by_vpid = collections.defaultdict(collections.Counter)
stages_by_vpid = collections.defaultdict(set)
worker_parents = {}
procnames = set()
missing_context = 0
discarded = 0
event_count = 0
ip_events = 0
for msg in bt2.TraceCollectionMessageIterator(trace_dir):
    if type(msg) is bt2._DiscardedEventsMessageConst:
        discarded += msg.count or 1
        continue
    if type(msg) is not bt2._EventMessageConst:
        continue
    event = msg.event
    event_count += 1
    ctx = event.common_context_field
    if ctx is None or not all(k in ctx for k in ("vpid", "vtid", "procname")):
        missing_context += 1
        continue
    vpid = int(ctx["vpid"])
    procnames.add(str(ctx["procname"]))
    if "ip" in ctx:
        ip_events += 1
    events_by_vpid[vpid][event.name] += 1
    if event.name in ("profopt:stage_begin", "profopt:stage_end"):
        stages_by_vpid[vpid].update(event.payload_field["stage"].labels)
    if event.name == "profopt:worker_begin":
        worker_parents[vpid] = int(event.payload_field["parent_pid"])

check(event_count > 0, f"the trace has events ({event_count})")
check(missing_context == 0, f"every event has vpid, vtid and procname ({missing_context} without)")
check(discarded == 0, f"no discarded events ({discarded})")
mains = [p for p, names in events_by_vpid.items() if names["profopt:run_begin"]]
workers = [p for p, names in events_by_vpid.items() if names["profopt:worker_begin"]]

if mode in ("pipeline", "sim"):
    check(len(events_by_vpid) == 3, f"3 distinct vpids ({sorted(events_by_vpid)})")
    check(len(mains) == 1, f"one main process emitted run_begin ({mains})")
    check(len(workers) == 2, f"two workers emitted worker_begin ({workers})")
    main = mains[0] if mains else -1
    check(events_by_vpid[main]["profopt:step_begin"] > 0, "the main process emitted steps")
    check("data_wait" in stages_by_vpid[main], "the main process emitted data_wait spans")
    for worker in workers:
        check(worker_parents[worker] == main, f"worker {worker}'s parent is the main process")
        check({"load", "preprocess", "collate"} <= stages_by_vpid[worker] or mode == "sim"
              and "load" in stages_by_vpid[worker],
              f"worker {worker} emitted its stage spans ({sorted(stages_by_vpid[worker])})")
    if mode == "pipeline":
        check(procnames == {"record_workload"}, f"procname is record_workload ({procnames})")
        check(all(events_by_vpid[w]["profopt:stage_begin"] == 12 for w in workers),
              "each worker emitted its 12 stage spans")
elif mode == "wait":
    check(len(mains) == 1, f"one process emitted run_begin ({mains})")
    check(mains and events_by_vpid[mains[0]]["profopt:run_end"] == 1,
          "run_end, emitted after the forwarded signal, is in the kept trace")
elif mode == "heap":
    mallocs = sum(names["lttng_ust_libc:malloc"] for names in events_by_vpid.values())
    frees = sum(names["lttng_ust_libc:free"] for names in events_by_vpid.values())
    check(mallocs >= 16, f"malloc events recorded ({mallocs} >= 16)")
    check(frees >= 8, f"free events recorded ({frees} >= 8)")
    check(ip_events == event_count, f"every event has the ip context ({ip_events}/{event_count})")
else:
    check(False, f"unknown mode {mode}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
