#!/usr/bin/python3
"""The same span pairing as profopt-analyze's model, written the obvious way with
babeltrace2's Python bindings (python3-bt2): the comparison point of bench/analyze_speed.sh.

Pairs profopt stage_begin/stage_end and step_begin/step_end per thread and prints the
total time per stage and the mean step time.
"""
import collections
import sys

import bt2


def main(trace_dir):
    stacks = collections.defaultdict(list)
    open_steps = {}
    stage_ns = collections.Counter()
    step_ns = []
    events = 0
    for msg in bt2.TraceCollectionMessageIterator(trace_dir):
        if type(msg) is not bt2._EventMessageConst:
            continue
        events += 1
        event = msg.event
        name = event.name
        if not name.startswith("profopt:"):
            continue
        ctx = event.common_context_field
        key = (int(ctx["vpid"]), int(ctx["vtid"]))
        now = msg.default_clock_snapshot.value
        if name == "profopt:stage_begin":
            stacks[key].append((int(event.payload_field["stage"]), now))
        elif name == "profopt:stage_end":
            stage = int(event.payload_field["stage"])
            stack = stacks[key]
            while stack:
                open_stage, begin = stack.pop()
                if open_stage == stage:
                    stage_ns[stage] += now - begin
                    break
        elif name == "profopt:step_begin":
            open_steps[key] = now
        elif name == "profopt:step_end" and key in open_steps:
            step_ns.append(now - open_steps.pop(key))
    mean = sum(step_ns) / len(step_ns) / 1e6 if step_ns else 0.0
    print(f"events {events} steps {len(step_ns)} mean_step_ms {mean:.3f}")
    for stage, total in sorted(stage_ns.items()):
        print(f"stage {stage} total_ms {total / 1e6:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bt2_pairing.py TRACE_DIR")
    main(sys.argv[1])
