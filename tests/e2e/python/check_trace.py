#!/usr/bin/python3
"""check_trace.py TRACE_DIR --workers N --steps S: checks a recording of
samples/pytorch/train.py: workers announced in distinct processes, every consumed batch
followed to the process that loaded, preprocessed and collated it, forward, backward and
optimizer spans in every step, balanced spans, nothing discarded."""

import argparse
import collections
import sys

import bt2

LOADER_STAGES = ("load", "preprocess", "collate")


def read_events(path):
    events = []
    discarded = 0
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) in (bt2._DiscardedEventsMessageConst, bt2._DiscardedPacketsMessageConst):
            discarded += 1
            continue
        if type(msg) is not bt2._EventMessageConst:
            continue
        event = msg.event
        fields = {"name": event.name, "pid": int(event["vpid"]), "tid": int(event["vtid"])}
        for key in ("stage", "batch", "step", "worker_id", "sample", "batch_size"):
            try:
                value = event.payload_field[key]
            except KeyError:
                continue
            fields[key] = str(value.labels[0]) if key == "stage" else int(value)
        events.append(fields)
    return events, discarded


class Checker:
    def __init__(self):
        self.failures = 0

    def check(self, condition, text):
        print(("ok   " if condition else "FAIL ") + text)
        if not condition:
            self.failures += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    events, discarded = read_events(args.trace)
    c = Checker()
    c.check(discarded == 0, f"nothing discarded ({discarded} discard messages)")
    runs = [e for e in events if e["name"] == "profopt:run_begin"]
    c.check(len(runs) == 1, f"one run_begin ({len(runs)})")
    if not runs:
        return 1
    main_pid = runs[0]["pid"]
    check_workers(c, events, main_pid, args.workers)
    consumed = check_steps(c, events, main_pid, args.steps)
    check_batches(c, events, main_pid, args.workers, consumed)
    check_balance(c, events)
    return 1 if c.failures else 0


def check_workers(c, events, main_pid, workers):
    begins = [e for e in events if e["name"] == "profopt:worker_begin"]
    pids = {e["pid"] for e in begins}
    # Workers that do not persist are new processes in every epoch.
    c.check(len(pids) >= workers and len(pids) % max(workers, 1) == 0 and main_pid not in pids,
            f"worker_begin in {len(pids)} distinct worker processes, {workers} per epoch")
    ids = sorted({e["worker_id"] for e in begins})
    c.check(ids == list(range(workers)), f"worker ids {ids}")


def check_steps(c, events, main_pid, steps):
    """Per step of the main process: stages seen, and the batch its data wait received."""
    open_step, per_step = None, []
    for e in events:
        if e["pid"] != main_pid:
            continue
        if e["name"] == "profopt:step_begin":
            open_step = collections.Counter(batch=-1)
            per_step.append(open_step)
        elif e["name"] == "profopt:step_end":
            if e["batch_size"] == 0:
                per_step.pop()  # the end of an iterable dataset: a step of no batch
            open_step = None
        elif e["name"] == "profopt:stage_end" and open_step is not None:
            open_step[e["stage"]] += 1
            if e["stage"] == "data_wait":
                open_step["batch"] = e["batch"]
    c.check(len(per_step) == steps, f"{len(per_step)} steps == {steps}")
    consumed = [seen["batch"] for seen in per_step]
    for stage in ("data_wait", "forward", "backward", "optimizer"):
        missing = [i for i, seen in enumerate(per_step) if seen[stage] < 1]
        c.check(not missing, f"every step has a {stage} span (missing in {missing[:5]})")
    c.check(len(consumed) == steps and len(set(consumed)) == steps and min(consumed) >= 0,
            f"{len(set(consumed))} distinct batch indexes consumed, none unknown")
    return consumed


def check_batches(c, events, main_pid, workers, consumed):
    where = collections.defaultdict(set)  # (stage, batch) -> pids
    ready = collections.defaultdict(set)
    for e in events:
        if e["name"] == "profopt:stage_begin" and e["stage"] in LOADER_STAGES:
            where[(e["stage"], e["batch"])].add(e["pid"])
        elif e["name"] == "profopt:batch_ready":
            ready[e["batch"]].add(e["pid"])
    for stage in LOADER_STAGES:
        missing = []
        for batch in consumed:
            pids = where.get((stage, batch), set())
            expected_ok = (pids and main_pid not in pids) if workers else pids == {main_pid}
            if not expected_ok or len(pids) != 1:
                missing.append(batch)
        c.check(not missing, f"every consumed batch has its {stage} span in one "
                f"{'worker' if workers else 'main'} process (wrong: {missing[:5]})")
    same = [b for b in consumed if ready.get(b) != where.get(("collate", b))]
    c.check(not same, f"batch_ready comes from the process that collated (wrong: {same[:5]})")
    if workers > 1:
        producers = {next(iter(where[("collate", b)])) for b in consumed
                     if where.get(("collate", b))}
        c.check(len(producers) >= workers, f"batches consumed from {len(producers)} workers")


def check_balance(c, events):
    depth = collections.Counter()
    for e in events:
        key = (e["tid"], e.get("stage"))
        if e["name"] == "profopt:stage_begin":
            depth[key] += 1
        elif e["name"] == "profopt:stage_end":
            depth[key] -= 1
    # A worker stopped while fetching ahead may leave its last spans open.
    negative = [k for k, v in depth.items() if v < 0]
    c.check(not negative, f"no span ends without a begin ({negative[:3]})")


if __name__ == "__main__":
    sys.exit(main())
