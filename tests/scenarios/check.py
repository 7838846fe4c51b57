"""check.py SCENARIO SUMMARY_JSON: checks the verdict and findings of one scenario."""
import json
import sys

RANK = {"critical": 0, "warning": 1, "info": 2}


class Checker:
    def __init__(self, summary):
        self.summary = summary
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


def rec(f, knob):
    for r in (f or {}).get("recommendations", []):
        if r["knob"] == knob:
            return r
    return None


def main_loading(c):
    f = c.has("input-bound")
    c.evidence(f, "cause", "loading-in-main-process")
    r = rec(f, "num_workers")
    c.check(r is not None and r["predicted_step_ms"] < c.summary["steps"]["mean_ms"],
            f"num_workers recommended with a shorter predicted step: {r}")
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


SCENARIOS = {
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
}


def main():
    name, path = sys.argv[1], sys.argv[2]
    summary = json.load(open(path))
    checker = Checker(summary)
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
