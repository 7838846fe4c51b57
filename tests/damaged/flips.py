#!/usr/bin/python3
"""A property over seeded single-byte flips of a real recording: profopt-analyze either
fails with a documented status (3 or 4) and one line, or exits 0; and when it exits 0 with
a result that differs from the undamaged trace's, the result says so (a trace warning, or
trace.partial). Confident nonsense is the failure this looks for.

usage: flips.py PROFOPT_ANALYZE TRACE_DIR WORK_DIR FIRST_SEED COUNT
"""
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_damaged import metadata_files, stream_files  # noqa: E402


def essentials(summary):
    """What a user acts on: steps, verdict, findings, breakdown, workers."""
    steps = summary["steps"]
    return {
        "steps": steps["count"],
        "p50_ms": round(steps.get("p50_ms") or 0, 1),
        "verdict": summary["verdict"]["verdict"] if isinstance(summary["verdict"], dict)
        else summary["verdict"],
        "findings": sorted(f["id"] for f in summary["findings"]),
        "workers": len(summary["workers"]),
        "processes": len(summary["trace"]["processes"]),
    }


def analyze(analyze_bin, trace, out):
    shutil.rmtree(out, ignore_errors=True)
    run = subprocess.run([analyze_bin, "--json-only", "-o", out, trace],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=180,
                         env=dict(os.environ, PROFOPT_DECODE_LIMITS="cpu=10,mem=1024,wall=30"))
    return run.returncode, run.stderr.decode(errors="replace")


def main(analyze_bin, trace, work, first_seed, count):
    status, err = analyze(analyze_bin, trace, os.path.join(work, "clean"))
    if status != 0:
        sys.exit("the undamaged trace does not analyse: " + err)
    clean = essentials(json.load(open(os.path.join(work, "clean", "summary.json"))))
    files = stream_files(trace) + metadata_files(trace)
    failures = changed_said = refused = 0
    for seed in range(first_seed, first_seed + count):
        rng = random.Random(seed)
        copy = os.path.join(work, "flipped")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(trace, copy)
        # streams nine times in ten: they hold the values; metadata otherwise
        pool = stream_files(copy) if rng.random() < 0.9 else metadata_files(copy)
        target = rng.choice(pool)
        size = os.path.getsize(target)
        at = rng.randrange(size)
        with open(target, "r+b") as f:
            f.seek(at)
            byte = f.read(1)[0]
            f.seek(at)
            f.write(bytes([byte ^ (1 << rng.randrange(8))]))
        where = "%s@%d" % (os.path.relpath(target, copy), at)
        out = os.path.join(work, "out")
        status, err = analyze(analyze_bin, copy, out)
        lines = [l for l in err.splitlines() if l and "warning" not in l]
        if status in (3, 4):
            refused += 1
            if len(lines) != 1 or os.path.exists(out):
                failures += 1
                print("FAIL seed %d (%s): exit %d without one line or with output: %r"
                      % (seed, where, status, err[:300]))
            continue
        if status != 0:
            failures += 1
            print("FAIL seed %d (%s): exit %d: %r" % (seed, where, status, err[:300]))
            continue
        summary = json.load(open(os.path.join(out, "summary.json")))
        result = essentials(summary)
        said = summary["trace"]["warnings"] or summary["trace"]["partial"]
        changed_said += result != clean and bool(said)
        if result != clean and not said:
            failures += 1
            changed = {k: (clean[k], result[k]) for k in clean if clean[k] != result[k]}
            print("FAIL seed %d (%s): a different result with no warning: %s"
                  % (seed, where, changed))
    print("%d flips: %d refused with one line, %d changed the result and said so, %d failures"
          % (count, refused, changed_said, failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
