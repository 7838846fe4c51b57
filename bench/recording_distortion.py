#!/usr/bin/python3
"""recording_distortion.py [--build DIR] [--rounds N] [WORKLOAD...]: does recording change
the step time it measures? For each real workload of tests/workloads (default:
few_io_workers main_loading compute_bound_idle_workers), N rounds (default 5), each round
running the script once in each mode, in an order that rotates from round to round:

  plain         the script without profopt's lines (PROFOPT_WORKLOAD_PLAIN=1)
  instrumented  with them, nothing recording
  recorded      under profopt-record, as users record (sampler every 20 ms)
  no-sampler    under profopt-record --sample-ms 0

It prints each mode's median steady step (the script's own clock, the truth file) over
the rounds, recorded against plain and instrumented in %, and the median over the rounds
of recorded against plain within the same round (the runs of a round are close in time,
so the machine's slower swings cancel). A benchmark, not a test: run
it on a quiet machine, next to nothing else (README, "Costs of the tracepoints")."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = os.path.join(ROOT, "tests", "workloads")
MODES = ("plain", "instrumented", "recorded", "no-sampler")


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


def run(mode, workload, build, work):
    truth = os.path.join(work, f"{workload}-{mode}.json")
    env = dict(os.environ, PROFOPT_LIBRARY=os.path.join(build, "lib", "libprofopt.so"))
    script = [sys.executable, os.path.join(WORKLOADS, workload + ".py"), "--truth", truth]
    if mode == "plain":
        env["PROFOPT_WORKLOAD_PLAIN"] = "1"
        command = script
    elif mode == "instrumented":
        command = script
    else:
        trace = os.path.join(work, f"{workload}-{mode}-trace")
        command = [os.path.join(ROOT, "tests", "lib", "with-sessiond.sh"),
                   os.path.join(build, "bin", "profopt-record"), "-o", trace,
                   *(["--sample-ms", "0"] if mode == "no-sampler" else []), "--", *script]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
    subprocess.run(["rm", "-rf", os.path.join(work, f"{workload}-{mode}-trace")])
    return steady_median_ms(truth)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("workloads", nargs="*",
                        default=["few_io_workers", "main_loading", "compute_bound_idle_workers"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="profopt-distortion.") as work:
        for workload in args.workloads:
            times = {mode: [] for mode in MODES}
            for round_ in range(args.rounds):
                order = MODES[round_ % len(MODES):] + MODES[:round_ % len(MODES)]
                for mode in order:
                    times[mode].append(run(mode, workload, args.build, work))
            median = {mode: statistics.median(times[mode]) for mode in MODES}
            print(f"{workload}: median steady step over {args.rounds} rounds, ms: " +
                  ", ".join(f"{mode} {median[mode]:.2f}" for mode in MODES))
            for mode in ("recorded", "no-sampler"):
                # runs of one round are minutes apart at most: their ratio cancels the
                # machine's slower drift (on a shared VM whole rounds run 20% apart)
                paired = statistics.median(
                    100 * (mine / plain - 1) for mine, plain in zip(times[mode], times["plain"]))
                print(f"  {mode} against plain {100 * (median[mode] / median['plain'] - 1):+.1f}%,"
                      f" against instrumented "
                      f"{100 * (median[mode] / median['instrumented'] - 1):+.1f}%; "
                      f"within each round against plain, median {paired:+.1f}%")
            print("  every round: " + "; ".join(
                f"{mode} " + " ".join(f"{t:.1f}" for t in times[mode]) for mode in MODES))


if __name__ == "__main__":
    main()
