#!/usr/bin/python3
"""evaluate.py BUILD_DIR RUN_DIR...: compares what profopt says of the real-GPU recordings
with what each run measured itself (tests/gpu/README.md). Each RUN_DIR holds the unpacked
output of one tests/gpu/device_checks.sh run (traces/ and runs/). Run here, not on the GPU
machine: it needs profopt-analyze and Debian's python3-bt2.

It prints, as Markdown tables:
- per recording: the verdict and the verdict the run's own measurements call for, GPU
  busy and kernels per step against torch.profiler's view of the same configuration
  without profopt (NAME-ref in the same run), and the launches' timeline check (no
  kernel starts before its launch);
- per recommendation that a run of the changed configuration measured: the predicted
  speed-up against the measured one, in the same session (plain runs: NAME-ref, without
  profopt; recorded runs: both under profopt).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

import bt2


def truth_of(run_dir, name):
    path = os.path.join(run_dir, "runs", name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as file:
        return json.load(file)


def plain_steps(truth):
    """The steps a run timed without torch.profiler: after 10 warm-up steps, before the
    profiled last 20 when it profiled."""
    steps = truth["steps"]
    end = len(steps) - 20 if truth.get("profiler") else len(steps)
    return steps[10:end] or steps


def mean_ms(truth, key="wall_s"):
    return 1000 * statistics.mean(step[key] for step in plain_steps(truth))


def median_ms(truth, key="wall_s"):
    return 1000 * statistics.median(step[key] for step in plain_steps(truth))


def analyze(build, trace, out, options=()):
    subprocess.run([os.path.join(build, "bin", "profopt-analyze"), "--json-only", *options,
                    "-o", out, trace], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as file:
        return json.load(file)


def launch_order(trace):
    """(kernels, kernels with a launch, kernels that start before their launch)."""
    launches, kernels = {}, []
    for message in bt2.TraceCollectionMessageIterator(trace):
        if type(message) is not bt2._EventMessageConst:
            continue
        event = message.event
        if event.name == "profopt:gpu_launch":
            key = (int(event.common_context_field["vpid"]),
                   int(event.payload_field["correlation_id"]))
            launches[key] = message.default_clock_snapshot.value
        elif event.name == "profopt:gpu_kernel":
            kernels.append((int(event.common_context_field["vpid"]),
                            int(event.payload_field["correlation_id"]),
                            int(event.payload_field["start_ns"])))
    launched = [(start, launches[(pid, id)]) for pid, id, start in kernels
                if (pid, id) in launches]
    return len(kernels), len(launched), sum(1 for start, at in launched if start < at)


# The verdict each configuration's own measurements call for, and why; configurations
# whose measurements do not settle it are left out.
EXPECTED = {
    "transformer-fp32": ("gpu-bound", "torch.profiler: the GPU busy 78-89% of the step"),
    "transformer-bf16": ("host-bound", "torch.profiler: busy 20%; 5.2 ms of kernels in an "
                         "18 ms step"),
    "cnn-fp32": ("host-bound", "busy 29-40%; channels_last, which removes launches, 1.3x"),
    "cnn-fp32-again": ("host-bound", "as cnn-fp32"),
    "cnn-fp32-cl": ("host-bound", "busy 23%"),
    "cnn-bf16": ("host-bound", "busy 27%"),
    "beside": ("host-bound", "as cnn-fp32"),
    "leak": ("host-bound", "as cnn-fp32"),
    "mlp-b32": ("host-bound", "CUDA graphs alone 1.75x faster; loading 0.3 of 3 ms"),
    "mlp-b32-nocb": ("host-bound", "as mlp-b32"),
    "mlp-b256": ("input-bound", "loading on the training thread: 1.7 of 4.3 ms"),
    "input-w2": ("input-bound", "waits 15 of 35 ms per step (median)"),
}


def expected_verdict(name):
    return EXPECTED.get(name, (None, ""))[0]


def recordings(build, run_dirs, work):
    """Each recording analysed with the default rules, and again with a lower threshold of
    the GPU busy share for gpu-bound (to see its what-if where the default threshold keeps
    the finding out)."""
    rows = []
    for run_dir in run_dirs:
        traces = os.path.join(run_dir, "traces")
        for name in sorted(os.listdir(traces)):
            truth = truth_of(run_dir, name)
            if not truth:
                continue
            out = os.path.join(work, os.path.basename(run_dir) + "-" + name)
            summary = analyze(build, os.path.join(traces, name), out)
            summary["lowered"] = analyze(build, os.path.join(traces, name), out + "-lowered",
                                         ["--set", "verdict.gpu_bound_pct=70"])
            reference = truth_of(run_dir, name + "-ref")
            kernels, launched, early = launch_order(os.path.join(traces, name))
            rows.append((os.path.basename(run_dir), name, summary, truth, reference,
                         (kernels, launched, early)))
    return rows


def print_recordings(rows):
    print("| run | recording | verdict | expected | GPU busy % (profiler) | kernels/step "
          "(profiler) | kernels before their launch | findings |")
    print("|---|---|---|---|---|---|---|---|")
    for run, name, summary, truth, reference, order in rows:
        profiler = (reference or {}).get("profiler") or {}
        work = summary.get("gpu_work") or {}
        busy = summary["steady"]["gpu_busy_pct"]
        print(f"| {run} | {name} | {summary['verdict']} | "
              f"{expected_verdict(name) or '-'} | "
              f"{busy if busy is not None else '-'} ({profiler.get('busy_pct', '-') if not profiler else round(profiler['busy_pct'], 1)}) | "
              f"{work.get('kernels', '-')} ({profiler.get('kernels_per_step', '-')}) | "
              f"{order[2]} of {order[1]} | "
              f"{', '.join(f['id'] for f in summary['findings'])} |")


def recommendation(summary, finding_id, knob):
    for finding in summary["findings"]:
        if finding["id"] != finding_id:
            continue
        for rec in finding.get("recommendations", []):
            if rec.get("knob") == knob:
                return rec
    return None


# (recording, finding, knob, baseline truth, changed truth, per sample factor)
CHANGES = [
    ("transformer-fp32", "gpu-bound", "precision", "transformer-fp32-ref", "transformer-bf16-ref", 1),
    ("transformer-fp32", "gpu-bound", "precision", "transformer-fp32", "transformer-bf16", 1),
    ("transformer-fp32", "gpu-bound", "tf32", "transformer-fp32-ref", "transformer-fp32-tf32-ref", 1),
    ("cnn-fp32", "launch-bound", "channels_last", "cnn-fp32-ref", "cnn-fp32-cl-ref", 1),
    ("cnn-fp32", "launch-bound", "channels_last", "cnn-fp32", "cnn-fp32-cl", 1),
    ("mlp-b32", "launch-bound", "cuda_graphs", "mlp-b32-ref", "mlp-b32-graphs-ref", 1),
    ("mlp-b32", "launch-bound", "cuda_graphs", "mlp-b32", "mlp-b32-graphs", 1),
    ("mlp-b32", "launch-bound", "batch_size", "mlp-b32-ref", "mlp-b256-ref", 8),
    ("mlp-b32", "launch-bound", "batch_size", "mlp-b32", "mlp-b256", 8),
    ("input-w2", "input-bound", "num_workers", "input-w2", "input-w8", 1),
]


def print_changes(rows, run_dirs):
    print()
    print("| recording (run) | advice | predicted speed-up | measured: mean (median); "
          "baseline -> changed, session | error of the mean |")
    print("|---|---|---|---|---|")
    for name, finding_id, knob, base, changed, factor in CHANGES:
        for run, recorded, summary, _, _, _ in rows:
            if recorded != name:
                continue
            rec, note = recommendation(summary, finding_id, knob), ""
            if not rec and recommendation(summary["lowered"], finding_id, knob):
                rec, note = (recommendation(summary["lowered"], finding_id, knob),
                             " (verdict.gpu_bound_pct=70)")
            same = [d for d in run_dirs if os.path.basename(d) == run and
                    truth_of(d, base) and truth_of(d, changed)]
            # host speed differs from one GPU machine to the next: compare in one session,
            # and across sessions only where no session measured both
            for run_dir in same or run_dirs:
                before, after = truth_of(run_dir, base), truth_of(run_dir, changed)
                if not before or not after:
                    continue
                measured = mean_ms(before) * factor / mean_ms(after)
                median = median_ms(before) * factor / median_ms(after)
                predicted = rec["predicted_speedup"] if rec else None
                error = (f"{100 * (predicted - measured) / measured:+.0f}%" if predicted
                         else "no advice")
                if not same:
                    note += " (another session)"
                print(f"| {name} ({run}) | {finding_id}: {knob}{note} | "
                      f"{f'{predicted:.2f}x' if predicted else '-'} | {measured:.2f}x "
                      f"({median:.2f}x); {base} -> {changed}, "
                      f"{os.path.basename(run_dir)} | {error} |")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, run_dirs = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="profopt-gpu-evaluate.") as work:
        rows = recordings(build, run_dirs, work)
        print_recordings(rows)
        print_changes(rows, run_dirs)


if __name__ == "__main__":
    main()
