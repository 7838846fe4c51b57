"""check.py SCENARIO SUMMARY_JSON: checks the verdict and findings of one scenario."""
import json
import os
import sys

RANK = {"critical": 0, "warning": 1, "info": 2}


class Checker:
    def __init__(self, summary, path):
        self.summary = summary
        self.path = path
        self.failures = []

    def check(self, cond, text):
        print(("ok   " if cond else "FAIL ") + text)
        if not cond:
            self.failures.append(text)
        return cond

    def finding(self, fid):
        for f in self.summary["findings"]:
            if f["id"] == fid:
                return f
        return None

    def has(self, fid, min_severity="warning"):
        f = self.finding(fid)
        ok = f is not None and RANK[f["severity"]] <= RANK[min_severity]
        self.check(ok, f"{fid} fires at {min_severity} or above"
                   + (f" (got {f['severity']})" if f else " (absent)"))
        return f if ok else None

    def lacks(self, fid, below="warning"):
        f = self.finding(fid)
        self.check(f is None or RANK[f["severity"]] > RANK[below],
                   f"no {fid} at {below} or above" + (f" (got {f['severity']}: {f['summary']})" if f else ""))

    def verdict(self, expected):
        self.check(self.summary["verdict"] == expected,
                   f"verdict {self.summary['verdict']} == {expected}")

    def evidence(self, f, key, expected):
        value = f["evidence"].get(key) if f else None
        self.check(value == expected, f"{f['id'] if f else '?'}.{key} {value!r} == {expected!r}")

    def no_serious_findings(self):
        # Sporadic slow steps are the shared machine's noise, not the pipeline's.
        serious = [f"{f['id']} ({f['severity']})" for f in self.summary["findings"]
                   if RANK[f["severity"]] <= RANK["warning"]
                   and not (f["id"] == "step-outliers"
                            and f["evidence"].get("pattern") == "sporadic")]
        self.check(not serious, f"no finding at warning or above (sporadic step outliers "
                   f"aside): {serious}")


def withheld(r):
    """On a machine where other programs hold cores, a prediction that depends on the cores
    the program gets is withheld, and its effect says why (docs/rules.md, machine)."""
    return r is not None and r.get("predicted_step_ms") is None and \
        (r.get("effect") or "").startswith("not predicted: other programs used")


def gains(r, at_least=1.05, below=float("inf")):
    """A recommendation that predicts a speedup in (at_least, below), or withholds it."""
    return r is not None and (withheld(r) or at_least < (r["predicted_speedup"] or 0) < below)


def rec(f, knob):
    for r in (f or {}).get("recommendations", []):
        if r["knob"] == knob:
            return r
    return None


def main_loading(c):
    f = c.has("input-bound")
    c.evidence(f, "cause", "loading-in-main-process")
    r = rec(f, "num_workers")
    c.check(r is not None and (withheld(r) or
                               r["predicted_step_ms"] < c.summary["steps"]["mean_ms"]),
            f"num_workers recommended with a shorter predicted step (or withheld): {r}")
    c.verdict("input-bound")


def too_few_workers(c):
    f = c.has("input-bound", "critical")
    c.evidence(f, "cause", "too-few-workers")
    c.evidence(f, "stage", "load")
    n = f["evidence"].get("recommended_num_workers", 0) if f else 0
    c.check(n >= 3, f"recommended_num_workers {n} >= 3")
    c.verdict("input-bound")


def cpu_saturated(c):
    f = c.has("input-bound")
    c.evidence(f, "cause", "cpu-saturated")
    c.evidence(f, "stage", "preprocess")
    r = rec(f, "num_workers")
    c.check(r is None or not (r["predicted_speedup"] or 0) > 1.05,
            f"no gain promised from more workers: {r}")
    c.check(rec(f, "transform") is not None, "recommends cutting CPU per batch")
    c.verdict("input-bound")


def leak(c, role):
    f = c.has("host-memory-growth")
    c.evidence(f, "site_role", role)
    c.evidence(f, "label", "leak")
    c.has("unfreed-allocations", "warning")
    c.lacks("input-bound")
    c.lacks("gpu-memory-growth", "info")


def periodic_stall(c):
    f = c.has("gpu-idle")
    c.evidence(f, "cause", "checkpoint")
    o = c.has("step-outliers")
    c.evidence(o, "period_steps", 10)
    c.evidence(o, "cause", "checkpoint")
    c.lacks("input-bound")


def compute_bound(c):
    c.verdict("gpu-bound")
    c.no_serious_findings()


def balanced(c):
    # On a loaded 2-core machine the simulated host falls behind its own kernel launches
    # now and then, and the GPU really idles in >= 1 ms gaps during forward/backward: a
    # gpu-idle finding blaming host compute is then a true reading of the run. What must
    # not happen is a wrong diagnosis: input-bound, memory growth, or another verdict.
    # The simulated GPU sleeps for each of its 32 short kernels; a loaded machine stretches
    # every sleep (2-3x seen), and when that makes the GPU busy for most of the step, a
    # gpu-bound verdict is the true reading. The verdict must agree with the busy share.
    busy = (c.summary.get("steady") or {}).get("gpu_busy_pct") or 0
    if busy >= 75:
        c.check(c.summary["verdict"] in ("balanced", "gpu-bound"),
                f"verdict {c.summary['verdict']} is balanced or, with the GPU busy {busy}%"
                " of the steady steps, gpu-bound")
    else:
        c.verdict("balanced")
    for fid in ("input-bound", "host-memory-growth", "gpu-memory-growth", "trace-data-loss"):
        c.lacks(fid)
    f = c.finding("gpu-idle")
    c.check(f is None or f["evidence"]["cause"] in ("forward", "backward", "optimizer", "other"),
            "a gpu-idle finding, if any, blames host compute: "
            + (f"{f['evidence']['cause']} ({f['severity']})" if f else "none"))


def few_steps(c):
    c.verdict("unknown")
    c.lacks("input-bound", "info")


def lossy(c):
    trace = c.summary["trace"]
    lost = trace.get("discarded_events", 0) + trace.get("discarded_packets", 0)
    c.check(lost > 0, f"the small buffers lost events ({lost})")
    f = c.has("trace-data-loss", "info")
    others = [x["confidence"] for x in c.summary["findings"] if x["id"] != "trace-data-loss"]
    c.check(all(conf < 1.0 for conf in others), f"other findings carry less confidence: {others}")


def cpu_contention(c):
    f = c.has("cpu-contention")
    ev = f["evidence"] if f else {}
    c.check(ev.get("loop_cpu_share_pct", 100) <= 85,
            f"the loop gets at most 85% of a core: {ev.get('loop_cpu_share_pct')}")
    c.check(ev.get("demand_cores", 0) >= 0.9 * ev.get("cpu_count", 1),
            f"demand {ev.get('demand_cores')} fills the {ev.get('cpu_count')} cores")
    n = ev.get("recommended_num_workers", 0)
    c.check(1 <= n <= ev.get("num_workers", 0),
            f"recommended_num_workers {n} is at most the current {ev.get('num_workers')}")
    busy = any(w["code"] == "busy-machine" for w in c.summary["trace"].get("warnings", []))
    c.check((ev.get("predicted_speedup") or 0) >= 1.0 or
            (busy and ev.get("predicted_speedup") is None),
            f"predicted speedup {ev.get('predicted_speedup')} >= 1 (withheld on a busy machine)")
    r = rec(f, "transform")
    c.check(gains(r), f"moving CPU work off the loop's cores is predicted to help: {r}")
    c.check(rec(f, "threads") is not None, "names torch.set_num_threads / OMP_NUM_THREADS")
    html = open(os.path.join(os.path.dirname(c.path), "index.html"), encoding="utf-8").read()
    if c.summary["verdict"] == "input-bound":
        # A busier machine also slows the workers until the loop waits for their batches:
        # the input-bound finding must then blame the same saturated cores.
        c.evidence(c.finding("input-bound"), "cause", "cpu-saturated")
    else:
        c.verdict("host-bound")
        c.check("Here the training loop waits for CPU held by" in html,
                "the report's verdict names the loader workers")
        c.check("waits for CPU held by" in (c.summary.get("verdict_reason") or ""),
                f"summary.json says why: {c.summary.get('verdict_reason')!r}")
    c.check("The training loop waits for CPU held by the loader workers" in html,
            "the report titles the finding")


def cpu_contention_control(c):
    c.lacks("cpu-contention", "info")
    c.lacks("input-bound")
    c.verdict("host-bound")
    c.check(c.summary.get("verdict_reason") is None, "summary.json gives no reason")
    html = open(os.path.join(os.path.dirname(c.path), "index.html"), encoding="utf-8").read()
    c.check("waits for CPU held by" not in html, "the report blames no loader workers")


def handoff(c):
    f = c.has("loader-handoff")
    ev = f["evidence"] if f else {}
    c.check(3.5 <= (ev.get("handoff_ms_per_step") or 0) <= 9,
            f"hand-off about 5 ms per step: {ev.get('handoff_ms_per_step')}")
    c.lacks("input-bound", "info")
    c.check(c.summary["verdict"] != "input-bound", f"verdict {c.summary['verdict']} is not "
            "input-bound")
    c.check((c.summary["breakdown_ms"].get("handoff") or 0) >= 3.5,
            f"breakdown has the hand-off: {c.summary['breakdown_ms'].get('handoff')}")


def respawning_workers(c):
    f = c.has("worker-restart")
    ev = f["evidence"] if f else {}
    c.check(ev.get("worker_generations") == 8, f"8 sets of workers: {ev.get('worker_generations')}")
    c.check(ev.get("num_workers") == 2, f"2 workers at once: {ev.get('num_workers')}")
    c.check(70 <= (ev.get("restart_ms_per_epoch") or 0) <= 200,
            f"about 80 ms lost per epoch start: {ev.get('restart_ms_per_epoch')}")
    r = rec(f, "persistent_workers")
    c.check(gains(r, 1, 2),
            f"persistent_workers=True predicted to help, bounded: {r and r['predicted_speedup']}")
    c.lacks("host-memory-growth", "info")
    c.lacks("cpu-contention", "info")


def killed_workers(c):
    c.lacks("trace-data-loss", "info")
    c.check(c.summary["trace"]["open_at_end"] > 0,
            f"the killed workers' loads are open at the end: {c.summary['trace']['open_at_end']}")
    c.check(c.summary["run"]["ending"] == "clean", f"run ending {c.summary['run']['ending']}")
    codes = [w["code"] for w in c.summary["trace"].get("warnings", [])]
    c.check("open-at-end" in codes and "unmatched-spans" not in codes, f"warnings {codes}")


def change_at(c):
    config = c.summary["run"]["config"]
    c.check(config.get("sim.change-at") == "60" and config.get("sim.after.load-ms") == "60.000",
            f"the change is in the run's configuration: change-at {config.get('sim.change-at')},"
            f" after load-ms {config.get('sim.after.load-ms')}")
    steps = c.summary["step_series"]
    before = [s for s in steps if 5 <= s["index"] < 58]
    after = [s for s in steps if s["index"] >= 64]
    if not before or not after:
        c.check(False, f"steps before and after the change ({len(before)}, {len(after)})")
        return

    def mean(rows, key):
        return sum(r[key] for r in rows) / len(rows)

    wall_before, wall_after = mean(before, "wall_ms"), mean(after, "wall_ms")
    c.check(wall_after > 2.5 * wall_before,
            f"steps after the change are slower: {wall_after:.2f} ms against {wall_before:.2f}")
    load_before = mean([s for s in before if s["load_ms"] is not None], "load_ms")
    load_after = mean([s for s in after if s["load_ms"] is not None], "load_ms")
    c.check(load_before < 10 < 50 < load_after,
            f"the batches' load time follows the change: {load_before:.1f} ms, then "
            f"{load_after:.1f} ms")
    rss = [(s["index"], s["rss_bytes"]) for s in steps if s["rss_bytes"] is not None]
    early = [b for i, b in rss if 5 <= i < 58]
    late = [b for i, b in rss if i >= 64]
    c.check(max(early) - min(early) < 4 << 20 and late[-1] - late[0] > 10 << 20,
            f"memory grows after the change only: {(max(early) - min(early)) >> 10} KiB "
            f"before, {(late[-1] - late[0]) >> 10} KiB after")
    # A change in the run, reported as one: when, and what moved (the loop now waits, once
    # the 4 batches the 2 workers had ready are used up).
    shift = c.has("level-shift", "info")
    if shift:
        c.check(60 <= shift["evidence"]["step"] <= 67,
                f"level-shift at step {shift['evidence']['step']} (the change is at 60, "
                f"4 batches were ready)")
        c.evidence(shift, "category", "data_wait")
    c.verdict("input-bound")


def gpu_bound(c, recommended, absent):
    """The gpu-bound finding, with the advice the kernels call for and none other."""
    c.verdict("gpu-bound")
    f = c.has("gpu-bound", "info")
    for knob in recommended:
        r = rec(f, knob)
        c.check(r is not None and (r["predicted_speedup"] or 0) > 1.05,
                f"gpu-bound recommends {knob} with a gain: {r}")
    for knob in absent:
        c.check(rec(f, knob) is None, f"gpu-bound does not recommend {knob}")
    c.lacks("launch-bound", "info")
    c.lacks("input-bound")


def gpu_bound_fp32(c):
    gpu_bound(c, ["precision", "tf32"], ["channels_last", "batch_size"])
    f = c.finding("gpu-bound")
    c.evidence(f, "matrix_precision", "fp32")
    c.check(c.summary["gpu_work"]["matrix_ms_by_precision"]["fp32"] > 20,
            f"gpu_work: fp32 matrix time per step {c.summary['gpu_work']['matrix_ms_by_precision']}")


def gpu_bound_bf16(c):
    gpu_bound(c, [], ["precision", "tf32", "channels_last", "batch_size"])
    c.check(c.finding("gpu-bound") is not None and c.finding("gpu-bound")["severity"] == "info",
            "with nothing to advise, gpu-bound is information")


def launch_bound(c):
    c.verdict("host-bound")
    f = c.has("launch-bound")
    c.check(rec(f, "cuda_graphs") is not None and
            (rec(f, "cuda_graphs")["predicted_speedup"] or 0) > 1.2,
            f"launch-bound recommends CUDA graphs with a gain: {rec(f, 'cuda_graphs')}")
    c.check(rec(f, "batch_size") is not None, f"and a larger batch: {rec(f, 'batch_size')}")
    c.check(rec(f, "precision") is None, "no mixed precision: the GPU waits for launches")
    c.check("launches" in (c.summary.get("verdict_reason") or ""),
            f"summary.json says why: {c.summary.get('verdict_reason')!r}")
    c.lacks("gpu-bound", "info")


def launch_bound_graphs(c):
    c.lacks("launch-bound", "info")
    c.check(c.summary["gpu_work"]["graph_kernel_pct"] > 90,
            f"kernels from graphs: {c.summary['gpu_work']['graph_kernel_pct']}%")


SCENARIOS = {
    "gpu-bound-fp32": gpu_bound_fp32,
    "gpu-bound-bf16": gpu_bound_bf16,
    "gpu-bound-layout": lambda c: gpu_bound(c, ["channels_last"], ["precision", "batch_size"]),
    "gpu-bound-small": lambda c: gpu_bound(c, ["batch_size"], ["precision", "channels_last"]),
    "gpu-bound-small-nofit": lambda c: gpu_bound(c, [], ["batch_size"]),
    "launch-bound": launch_bound,
    "launch-bound-graphs": launch_bound_graphs,
    "change-at": change_at,
    "handoff": handoff,
    "respawning-workers": respawning_workers,
    "killed-workers": killed_workers,
    "main-loading": main_loading,
    "too-few-workers": too_few_workers,
    "cpu-saturated": cpu_saturated,
    "leak-worker": lambda c: leak(c, "worker"),
    "leak-main": lambda c: leak(c, "main"),
    "periodic-stall": periodic_stall,
    "compute-bound": compute_bound,
    "balanced": balanced,
    "few-steps": few_steps,
    "lossy": lossy,
    "cpu-contention": cpu_contention,
    "cpu-contention-control": cpu_contention_control,
}


def main():
    name, path = sys.argv[1], sys.argv[2]
    summary = json.load(open(path))
    checker = Checker(summary, path)
    print(f"scenario {name}: verdict {summary['verdict']}, findings "
          + ", ".join(f"{f['id']}:{f['severity']}" for f in summary["findings"]))
    SCENARIOS[name](checker)
    if checker.failures:
        for f in summary["findings"]:
            print(f"  {f['id']} {f['severity']}: {f['summary']}")
            print(f"    evidence {json.dumps(f['evidence'], sort_keys=True)}")
    sys.exit(1 if checker.failures else 0)


if __name__ == "__main__":
    main()
