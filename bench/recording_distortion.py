#!/usr/bin/python3
"""recording_distortion.py [--build DIR] [--rounds N] [--seed S] [--json FILE] [WORKLOAD...]:
does recording change the step time it measures, and by how much, with what certainty? For
each real workload of tests/workloads (default: few_io_workers main_loading
compute_bound_idle_workers), N rounds (default 8), each round running the script once in
each mode, in an order that rotates from round to round:

  plain         the script without profopt's lines (PROFOPT_WORKLOAD_PLAIN=1)
  instrumented  with them, nothing recording
  recorded      under profopt-record, as users record (sampler every 20 ms)
  no-sampler    under profopt-record --sample-ms 0

Each run gives its median steady step (the script's own clock, the truth file). For each
mode the script prints the median over the rounds with a 95% bootstrap interval (rounds
resampled) and the spread of the rounds ((max - min) / median). For each mode other than
plain it prints the paired figure: per round, the mode's step against plain's of the same
round, in % (the runs of a round are close in time, so the machine's slower swings
cancel), their median with a 95% bootstrap interval, and a two-sided sign test of "no
difference" (how many rounds were slower; with fewer than 6 rounds no result can reach
p < 0.05). The recorded runs are analysed too: what profopt says it cost
(summary.json's trace.self_cost.share_pct), beside what it measurably cost.

A benchmark, not a test: run it on a quiet machine, next to nothing else (README, "Costs of
the tracepoints"; docs/accuracy.md, "What a recording costs")."""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = os.path.join(ROOT, "tests", "workloads")
MODES = ("plain", "instrumented", "recorded", "no-sampler")
RECORDED = ("recorded", "no-sampler")
BOOTSTRAP_DRAWS = 4000


def steady_median_ms(truth_path):
    """The median wall time of the steps that are not the first of their epoch."""
    with open(truth_path) as f:
        truth = json.load(f)
    seen, walls = set(), []
    for step in truth["steps"]:
        if step["epoch"] in seen:
            walls.append(step["wall_ms"])
        seen.add(step["epoch"])
    return statistics.median(walls)


def self_cost_pct(build, trace, work):
    """What the analysis of a recorded trace says profopt cost, in % of the step; None."""
    report = trace + "-report"
    done = subprocess.run([os.path.join(build, "bin", "profopt-analyze"), "--json-only",
                           "-o", report, trace], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=600)
    if done.returncode != 0:
        return None
    with open(os.path.join(report, "summary.json")) as f:
        cost = json.load(f)["trace"].get("self_cost")
    return cost.get("share_pct") if cost else None


def run(mode, workload, build, work, extra):
    """One run: its median steady step in ms, and for a recorded run its stated cost."""
    truth = os.path.join(work, f"{workload}-{mode}.json")
    trace = os.path.join(work, f"{workload}-{mode}-trace")
    env = dict(os.environ, PROFOPT_LIBRARY=os.path.join(build, "lib", "libprofopt.so"))
    script = [sys.executable, os.path.join(WORKLOADS, workload + ".py"), "--truth", truth,
              *extra]
    if mode == "plain":
        env["PROFOPT_WORKLOAD_PLAIN"] = "1"
        command = script
    elif mode == "instrumented":
        command = script
    else:
        command = [os.path.join(ROOT, "tests", "lib", "with-sessiond.sh"),
                   os.path.join(build, "bin", "profopt-record"), "-o", trace,
                   *(["--sample-ms", "0"] if mode == "no-sampler" else []), "--", *script]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
    stated = self_cost_pct(build, trace, work) if mode in RECORDED else None
    subprocess.run(["rm", "-rf", trace, trace + "-report"])
    return steady_median_ms(truth), stated


def bootstrap_median(values, rng):
    """The median of values and its 95% percentile bootstrap interval."""
    draws = sorted(statistics.median(rng.choices(values, k=len(values)))
                   for _ in range(BOOTSTRAP_DRAWS))
    return (statistics.median(values), draws[int(0.025 * BOOTSTRAP_DRAWS)],
            draws[int(0.975 * BOOTSTRAP_DRAWS) - 1])


def sign_test(differences):
    """Rounds slower, rounds counted (ties left out), two-sided exact p of no difference."""
    slower = sum(d > 0 for d in differences)
    counted = sum(d != 0 for d in differences)
    tail = min(slower, counted - slower)
    p = sum(math.comb(counted, k) for k in range(tail + 1)) / 2 ** counted if counted else 1
    return slower, counted, min(1.0, 2 * p)


def summarize(workload, times, stated, rng):
    """The figures of one workload, as a dict (printed and written with --json)."""
    result = {"workload": workload, "rounds": len(times["plain"]), "modes": {},
              "against_plain": {}}
    for mode in MODES:
        median, low, high = bootstrap_median(times[mode], rng)
        spread = 100 * (max(times[mode]) - min(times[mode])) / median
        result["modes"][mode] = {"median_ms": median, "ci95_ms": [low, high],
                                 "spread_pct": spread, "rounds_ms": times[mode]}
    for mode in MODES[1:]:
        paired = [100 * (mine / plain - 1) for mine, plain in zip(times[mode], times["plain"])]
        median, low, high = bootstrap_median(paired, rng)
        slower, counted, p = sign_test(paired)
        figure = {"median_pct": median, "ci95_pct": [low, high], "rounds_pct": paired,
                  "slower_rounds": slower, "counted_rounds": counted, "sign_test_p": p}
        if mode in RECORDED:
            shares = [s for s in stated[mode] if s is not None]
            figure["stated_cost_pct"] = statistics.median(shares) if shares else None
        result["against_plain"][mode] = figure
    return result


def print_result(result):
    print(f"{result['workload']}: {result['rounds']} alternated rounds; median steady step, "
          f"ms [95% bootstrap interval], spread of the rounds")
    for mode, figure in result["modes"].items():
        low, high = figure["ci95_ms"]
        print(f"  {mode:<12} {figure['median_ms']:7.2f} [{low:.2f}, {high:.2f}], "
              f"spread {figure['spread_pct']:.1f}%")
    print("  against plain, paired by round: median [95% bootstrap interval]; sign test")
    for mode, figure in result["against_plain"].items():
        low, high = figure["ci95_pct"]
        stated = figure.get("stated_cost_pct")
        print(f"  {mode:<12} {figure['median_pct']:+6.1f}% [{low:+.1f}, {high:+.1f}]; "
              f"slower in {figure['slower_rounds']} of {figure['counted_rounds']} rounds, "
              f"p = {figure['sign_test_p']:.3f}" +
              (f"; profopt's own cost as the report states it {stated:.2f}%"
               if stated is not None else ""))
    print("  every round: " + "; ".join(
        f"{mode} " + " ".join(f"{t:.1f}" for t in figure["rounds_ms"])
        for mode, figure in result["modes"].items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1, help="of the bootstrap draws")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--workload-args", default="",
                        help="passed to every workload script, e.g. '--steps 60'")
    parser.add_argument("workloads", nargs="*",
                        default=["few_io_workers", "main_loading", "compute_bound_idle_workers"])
    args = parser.parse_args()
    rng = random.Random(args.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="profopt-distortion.") as work:
        for workload in args.workloads:
            times = {mode: [] for mode in MODES}
            stated = {mode: [] for mode in RECORDED}
            for round_ in range(args.rounds):
                order = MODES[round_ % len(MODES):] + MODES[:round_ % len(MODES)]
                for mode in order:
                    step_ms, share = run(mode, workload, args.build, work,
                                         args.workload_args.split())
                    times[mode].append(step_ms)
                    if mode in RECORDED:
                        stated[mode].append(share)
            results.append(summarize(workload, times, stated, rng))
            print_result(results[-1])
            sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
