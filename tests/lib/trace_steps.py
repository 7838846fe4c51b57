#!/usr/bin/python3
"""trace_steps.py: the training loop's steps as a recorded trace holds them, read with
babeltrace2's text output, not with profopt's code: what a test checks the analyzer
against, and what it checks its own scenario with (a loop that was meant to wait for data
must have waited).

As a program: trace_steps.py TRACE prints the steps' count, their mean, and the share of
their time the loop waited for data (steps after the first WARMUP)."""

import bisect
import re
import subprocess
import sys

LOADER_STAGES = ('"data_wait"', '"load"', '"preprocess"', '"collate"')
WARMUP = 5


def trace_steps(trace):
    """(step number, begin, end, wait) of the training loop's steps, in ns: the wait is
    the time in data_wait and in loading stages on the loop's own thread."""
    text = subprocess.run(["babeltrace2", "--clock-cycles", trace], capture_output=True,
                          text=True, check=True).stdout
    pattern = re.compile(r"^\[(\d+)\].*? profopt:(step_begin|step_end|stage_begin|stage_end): "
                         r".*?vtid = (\d+).*?\}, \{ (.*)\}$")
    loop_tid = None
    steps, begin, wait_from, wait = [], None, None, 0
    for line in text.splitlines():
        m = pattern.match(line)
        if not m:
            continue
        t, name, tid, payload = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        if name == "step_begin":
            loop_tid = tid
            step = int(re.search(r"step = (\d+)", payload).group(1))
            begin, wait = (t, step), 0
        elif tid != loop_tid:
            continue
        elif name == "step_end" and begin:
            steps.append((begin[1], begin[0], t, wait))
            begin = None
        elif any(stage in payload for stage in LOADER_STAGES):
            if name == "stage_begin":
                wait_from = t
            elif wait_from is not None:
                wait += t - wait_from
                wait_from = None
    return steps


def gpu_busy_intervals(trace):
    """The device's busy time as merged [start, end) intervals in ns, from the
    gpu_activity records' own start and end times."""
    text = subprocess.run(["babeltrace2", "--clock-cycles", trace], capture_output=True,
                          text=True, check=True).stdout
    pattern = re.compile(r"profopt:gpu_activity: .*start_ns = (\d+), end_ns = (\d+)")
    intervals = sorted((int(m.group(1)), int(m.group(2)))
                       for m in map(pattern.search, text.splitlines()) if m)
    merged = []
    for start, end in intervals:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def gpu_idle_pct(steps, busy, since_ns, until_ns):
    """The share of the time of the steps that ended in (since, until] with no device busy
    (busy: gpu_busy_intervals()), or None without such a step."""
    inside = [(begin, end) for _, begin, end, _ in steps if since_ns < end <= until_ns]
    wall = sum(end - begin for begin, end in inside)
    if not wall:
        return None
    covered = 0
    for begin, end in inside:
        at = bisect.bisect_left(busy, [begin, begin])
        at = at - 1 if at and busy[at - 1][1] > begin else at
        while at < len(busy) and busy[at][0] < end:
            covered += max(0, min(busy[at][1], end) - max(busy[at][0], begin))
            at += 1
    return 100.0 * (1 - covered / wall)


def wait_share_pct(steps):
    """The share of the steps' time the loop waited for data, after the first WARMUP."""
    steady = steps[WARMUP:]
    wall = sum(end - begin for _, begin, end, _ in steady)
    return 100.0 * sum(wait for *_, wait in steady) / wall if wall else 0.0


def main(argv):
    steps = trace_steps(argv[0])
    mean_ms = sum(e - b for _, b, e, _ in steps) / len(steps) / 1e6 if steps else 0.0
    print(f"{len(steps)} steps, mean {mean_ms:.2f} ms, waiting for data "
          f"{wait_share_pct(steps):.1f}% of the steps after the first {WARMUP}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
