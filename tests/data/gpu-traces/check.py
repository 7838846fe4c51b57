"""check.py DIR: checks the analyses (DIR/NAME.report/summary.json) of the H100
recordings against what each run measured about itself (tests/gpu/README.md)."""
import json
import os
import sys

failures = []


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + text)
    if not condition:
        failures.append(text)


def load(directory, name):
    with open(os.path.join(directory, name + ".report", "summary.json")) as file:
        return json.load(file)


def finding(summary, finding_id):
    return next((f for f in summary["findings"] if f["id"] == finding_id), None)


def knobs(summary, finding_id):
    found = finding(summary, finding_id)
    return [rec["knob"] for rec in (found or {}).get("recommendations", [])]


def speedup(summary, finding_id, knob):
    found = finding(summary, finding_id)
    for rec in (found or {}).get("recommendations", []):
        if rec["knob"] == knob:
            return rec["predicted_speedup"]
    return None


def main():
    d = sys.argv[1]
    s = load(d, "h100-transformer-fp32")
    check(s["verdict"] == "gpu-bound", f"transformer fp32: gpu-bound ({s['verdict']})")
    check(s["gpu_work"]["kernels"] == 228, f"228 kernels per step, torch.profiler's count "
          f"({s['gpu_work']['kernels']})")
    check(s["gpu_work"]["matrix_pct_by_precision"]["fp32"] > 95, "its matrix work is fp32 on CUDA cores")
    # measured on the H100: autocast 1.59-1.67x, TF32 2.04x (tests/gpu/evaluate.py)
    check(1.4 <= (speedup(s, "gpu-bound", "precision") or 0) <= 2.6,
          f"mixed precision predicted {speedup(s, 'gpu-bound', 'precision')}x")
    check(1.6 <= (speedup(s, "gpu-bound", "tf32") or 0) <= 2.5,
          f"TF32 predicted {speedup(s, 'gpu-bound', 'tf32')}x (2.04x measured)")
    check(s["gpu"][0]["name"] == "NVIDIA H100 80GB HBM3" and s["gpu"][0]["multiprocessors"] == 132,
          "the device is described")

    s = load(d, "h100-transformer-bf16")
    check("precision" not in knobs(s, "gpu-bound") and "precision" not in knobs(s, "launch-bound"),
          "under autocast: no mixed precision advice")
    check(s["gpu_work"]["matrix_pct_by_precision"]["fp32"] < 5, "its matrix work is no longer fp32")

    s = load(d, "h100-mlp-b32")
    check(s["verdict"] == "host-bound", f"MLP: host-bound ({s['verdict']})")
    check(finding(s, "launch-bound") is not None, "launch-bound")
    # measured: CUDA graphs 1.70-1.85x, 8x the batch 4.9-5.6x the samples per second
    check(1.3 <= (speedup(s, "launch-bound", "cuda_graphs") or 0) <= 2.2,
          f"CUDA graphs predicted {speedup(s, 'launch-bound', 'cuda_graphs')}x")
    check((speedup(s, "launch-bound", "batch_size") or 0) >= 2,
          f"a larger batch predicted {speedup(s, 'launch-bound', 'batch_size')}x")
    check("precision" not in knobs(s, "launch-bound"), "no precision advice when launches "
          "hold the GPU back")

    s = load(d, "h100-mlp-b32-graphs")
    check(finding(s, "launch-bound") is None, "as CUDA graphs: no launch-bound")
    check(s["gpu_work"]["graph_kernel_pct"] > 80,
          f"the kernels come from graphs ({s['gpu_work']['graph_kernel_pct']}%)")

    s = load(d, "h100-cnn-fp32")
    check(s["verdict"] == "host-bound", f"ResNet-18: host-bound ({s['verdict']})")
    # measured: channels_last 1.30x (median), 1.10x (mean)
    check(1.05 <= (speedup(s, "launch-bound", "channels_last") or 0) <= 1.6,
          f"channels_last predicted {speedup(s, 'launch-bound', 'channels_last')}x")
    check(s["gpu_work"]["class_count"]["layout"] > 150, "151 or more layout conversions a step")

    s = load(d, "h100-input-w2")
    check(s["verdict"] == "input-bound", f"slow loader: input-bound ({s['verdict']})")
    idle = finding(s, "gpu-idle")
    check(idle is not None and idle["evidence"].get("cause") == "data_wait",
          "the GPU idles while the loop waits for data")

    s = load(d, "h100-leak")
    growth = finding(s, "gpu-memory-growth")
    slope = growth["evidence"].get("slope_bytes_per_step") if growth else None
    check(slope is not None and abs(slope - 16 * 2**20) < 0.02 * 16 * 2**20,
          f"device memory grows {slope} bytes per step; the program keeps 16 MiB a step")
    check(finding(s, "unfreed-allocations") is None or
          "cuda device memory" not in finding(s, "unfreed-allocations")["summary"],
          "the caching allocator's memory is no unfreed allocation")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
