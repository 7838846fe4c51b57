#!/usr/bin/python3
"""One flipped bit exactly where a value lies, in committed real recordings: profopt-analyze
must leave that value out, say so (warning implausible-values, trace.partial), and give the
undamaged trace's verdict, findings and GPU busy time, not confident nonsense from the
damaged value or the loss of its good neighbours.

Each case finds its value with python3-bt2 (an event's payload field), then the value's
eight bytes in the trace's stream files (the case needs them to occur exactly once), and
flips one high bit there.

usage: values.py PROFOPT_ANALYZE TRACES_DIR WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import bt2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_damaged import stream_files  # noqa: E402

# (case, trace, event, field, which of the candidate values, bit to flip)
CASES = [
    # a preprocess span's thread CPU time: 3 ms once became 148,434 s, and a cpu-contention
    # finding at confidence 0.95 ("71,305 cores on 2")
    ("span-cpu-time", "too-few-workers", "profopt:stage_end", "cpu_ns", "middle", 47),
    # a GPU kernel's end, 17 s or more later: the good records after it were dropped as overlaps
    # and the device looked busy
    ("gpu-record-end", "compute-bound", "profopt:gpu_activity", "end_ns", "middle", 34),
    # a stack sample's weight (its thread's CPU time since its previous sample): one bit moved
    # the input-bound finding from "72% in hot_decode" to "100% in hot_augment"
    ("sample-weight", "pytorch-hotspots", "profopt:stack_sample", "cpu_ns", "middle", 40),
]


def candidates(trace, event_name, field):
    values = []
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is bt2._EventMessageConst and msg.event.name == event_name:
            value = int(msg.event.payload_field[field])
            if value > 0:
                values.append(value)
    return values


def flip_value(trace, values, which, bit):
    """Sets `bit` (or the next higher bit that is 0) of the first candidate from `which`
    on whose bytes occur once in the streams."""
    files = stream_files(trace)
    contents = {path: open(path, "rb").read() for path in files}
    order = values[len(values) // 2:] + values[:len(values) // 2] if which == "middle" \
        else values
    for value in order:
        pattern = struct.pack("<q", value)
        hits = [(path, data.find(pattern)) for path, data in contents.items()
                if data.count(pattern) == 1]
        if len(hits) == 1 and sum(d.count(pattern) for d in contents.values()) == 1:
            path, at = hits[0]
            while value & (1 << bit):  # a bit that was 0, so that the value grows
                bit += 1
            with open(path, "r+b") as f:
                f.seek(at)
                f.write(struct.pack("<q", value | (1 << bit)))
            return value, bit, os.path.relpath(path, trace)
    return None, None, None


def analyze(analyze_bin, trace, out):
    shutil.rmtree(out, ignore_errors=True)
    run = subprocess.run([analyze_bin, "--json-only", "-o", out, trace],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=180)
    if run.returncode != 0:
        return None, "exit %d: %s" % (run.returncode, run.stderr.decode(errors="replace"))
    return json.load(open(os.path.join(out, "summary.json"))), None


def essentials(summary):
    verdict = summary["verdict"]
    return {
        "verdict": verdict["verdict"] if isinstance(verdict, dict) else verdict,
        "findings": sorted(f["id"] for f in summary["findings"]),
        "steps": summary["steps"]["count"],
        "gpu_busy_ms": [round(g.get("busy_ms") or 0, 0) for g in summary.get("gpu", [])],
        "top_hotspots": top_hotspots(summary),
    }


def top_hotspots(summary):
    """Each (role, stage)'s function with the largest self share, and that share rounded to
    10 points: a weight that took every share changes them."""
    return sorted((g.get("role"), g.get("stage"), g["functions"][0]["function"],
                   round(g["functions"][0]["self_pct"], -1))
                  for g in summary.get("hotspots", []) if g.get("functions"))


def main(analyze_bin, traces, work):
    failures = 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name, trace_name, event, field, which, bit in CASES:
        trace = os.path.join(traces, trace_name)
        clean, err = analyze(analyze_bin, trace, os.path.join(work, "clean"))
        if clean is None:
            sys.exit("%s: the undamaged trace does not analyse: %s" % (trace_name, err))
        copy = os.path.join(work, name)
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(trace, copy)
        value, bit, where = flip_value(copy, candidates(trace, event, field), which, bit)
        if value is None:
            failures += 1
            print("FAIL %s: no %s.%s value occurs once in the streams" % (name, event, field))
            continue
        damaged, err = analyze(analyze_bin, copy, os.path.join(work, "out"))
        problems = []
        if damaged is None:
            problems.append(err)
        else:
            codes = [w["code"] for w in damaged["trace"]["warnings"]]
            if "implausible-values" not in codes:
                problems.append("no implausible-values warning (warnings: %s)" % codes)
            if not damaged["trace"]["partial"]:
                problems.append("trace.partial is false")
            want, got = essentials(clean), essentials(damaged)
            if want != got:
                problems.append("the result changed: %s" % {
                    k: (want[k], got[k]) for k in want if want[k] != got[k]})
        failures += bool(problems)
        print("%s %s: %s.%s %d, bit %d flipped in %s%s" % (
            "FAIL" if problems else "ok  ", name, event, field, value, bit, where,
            ": " + "; ".join(problems) if problems else ""))
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
