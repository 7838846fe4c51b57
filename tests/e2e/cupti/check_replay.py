#!/usr/bin/env python3
"""check_replay.py MODE SUMMARY RECORDS: checks the analysis of one cupti_replay mode."""
import json
import sys

mode, path, records = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path) as summary_file:
    summary = json.load(summary_file)
failures = []


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + f"{mode}: {text}")
    if not condition:
        failures.append(text)


findings = {finding["id"]: finding for finding in summary["findings"]}
gpus = summary["gpu"]
check(len(gpus) == 1, f"one device recorded ({len(gpus)})")
if gpus:
    check(gpus[0]["activity_count"] == records,
          f"{gpus[0]['activity_count']} GPU records in the analysis, {records} emitted")
    check(gpus[0]["late_records"] == 0, f"{gpus[0]['late_records']} records placed late")
busy = summary["steady"]["gpu_busy_pct"]
if mode in ("gpu-bound", "leak"):
    check(summary["verdict"] == "gpu-bound", f"verdict {summary['verdict']}, expected gpu-bound"
          f" (GPU busy {busy}% of the steady steps)")
    check(busy is not None and busy <= 100, f"GPU busy {busy}%: overlapping streams count once")
if gpus:
    launched = gpus[0]["launched_ms_by_stage"]
    kernel_ms = sum(stream["kind_ms"]["kernel"] for stream in gpus[0]["streams"])
    check(abs(launched["forward"] - kernel_ms) < 0.01,
          f"{launched['forward']} ms of GPU work launched in forward, the kernels ran "
          f"{kernel_ms:.3f} ms")
work = summary.get("gpu_work") or {}
check(work.get("class_ms", {}).get("matmul", 0) > 0 and work["class_ms"]["elementwise"] > 0,
      f"the kernels are matmul and elementwise by name: {work.get('class_ms')}")
check(work.get("matrix_ms_by_precision", {}).get("fp32", 0) > 0,
      "the sgemm kernels are fp32 matrix work")
check(all(kernel["grid_blocks"] == 264 and kernel["block_threads"] == 256
          for kernel in summary["kernels"]), "their launch shapes came through the collector")
if mode == "gpu-bound":
    bound = findings.get("gpu-bound")
    advice = [rec["knob"] for rec in (bound or {}).get("recommendations", [])]
    check("precision" in advice, f"gpu-bound advises mixed precision for fp32 work: {advice}")
    loss = findings.get("trace-data-loss")
    dropped = loss["evidence"].get("gpu_records_dropped") if loss else None
    check(dropped == 17, f"trace-data-loss says {dropped} GPU records dropped, the collector 17")
    codes = [warning["code"] for warning in summary["trace"]["warnings"]]
    check("gpu-records-dropped" in codes, f"the warnings say so ({codes})")
if mode == "input-bound":
    check(summary["verdict"] == "input-bound", f"verdict {summary['verdict']}, expected input-bound")
    idle = findings.get("gpu-idle")
    check(idle is not None, "a gpu-idle finding")
    if idle:
        causes = {key: value for key, value in idle["evidence"].items()
                  if key.endswith("_ms_per_step") and key != "idle_ms_per_step"}  # a total
        largest = max(causes, key=causes.get) if causes else None
        check(largest == "data_wait_ms_per_step",
              f"the gaps' largest cause is {largest} ({causes})")
if mode == "leak":
    growth = findings.get("gpu-memory-growth")
    check(growth is not None, "a gpu-memory-growth finding")
    if growth:
        slope = growth["evidence"].get("slope_bytes_per_step")
        check(slope is not None and abs(slope - 4 * 2**20) < 0.05 * 4 * 2**20,
              f"growth of {slope} bytes per step, the program leaks {4 * 2**20}")
sys.exit(1 if failures else 0)
