#!/usr/bin/env python3
"""synth_partials.py OUTDIR RANKS [--steps N] [--ranks-per-host K] [--straggler R]
[--late-ms X] [--offset-ms O]: partial summaries (profopt.partial/1, as profopt-analyze
--partial writes them) of a designed job, for the merge's tests and benchmark.

Each host holds K ranks; host h's clock runs h * O ms ahead. Every step of P = 40 ms
each rank works, then enters one all-reduce; rank R enters it X ms after the others (its
data wait is X ms longer); everyone leaves it together, 1 ms after the last arrival. A
deterministic jitter of up to 0.05 ms is added to each arrival. Expected from a merge:
rank R the straggler, cause input, X ms lost per step, host h's offset h * O ms with a
residual under 0.05 ms.
"""

import argparse
import json
import os
import random

PERIOD_NS = 40_000_000
WORK_NS = 30_000_000
COLLECTIVE_NS = 1_000_000
CATEGORIES = ["backward", "checkpoint", "collate", "custom", "data_wait", "eval", "forward",
              "gc", "handoff", "h2d", "load", "optimizer", "other", "preprocess"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("ranks", type=int)
    parser.add_argument("--steps", type=int, default=1024)
    parser.add_argument("--ranks-per-host", type=int, default=1)
    parser.add_argument("--straggler", type=int, default=1)
    parser.add_argument("--late-ms", type=float, default=10.0)
    parser.add_argument("--offset-ms", type=float, default=7.0)
    args = parser.parse_args()
    late_ns = int(args.late_ms * 1e6)
    jitter = random.Random(7)
    hosts = (args.ranks + args.ranks_per_host - 1) // args.ranks_per_host
    origin = 1_000_000_000_000
    # the job's own schedule, in the reference clock
    arrivals = []
    for step in range(args.steps):
        start = step * PERIOD_NS
        row = [start + WORK_NS + jitter.randrange(50_000) +
               (late_ns if rank == args.straggler else 0) for rank in range(args.ranks)]
        arrivals.append((row, max(row) + COLLECTIVE_NS))
    os.makedirs(args.out, exist_ok=True)
    for host in range(hosts):
        offset = int(host * args.offset_ms * 1e6)
        ranks, collectives = [], []
        for rank in range(host * args.ranks_per_host,
                          min(args.ranks, (host + 1) * args.ranks_per_host)):
            wait = late_ns if rank == args.straggler else 0
            means = {name: 0.0 for name in CATEGORIES}
            means["forward"] = WORK_NS / 3
            means["backward"] = 2 * WORK_NS / 3 - wait
            means["data_wait"] = float(wait)
            ranks.append({"category_mean_ns": means, "host": "node%04d" % host,
                          "local_rank": rank - host * args.ranks_per_host,
                          "local_rank_inferred": False, "mean_step_ns": float(PERIOD_NS),
                          "p50_step_ns": PERIOD_NS, "pid": 1000 + rank, "rank": rank,
                          "recording": 0, "steady_steps": args.steps, "steps": args.steps,
                          "walls": [[step, PERIOD_NS] for step in range(args.steps)],
                          "world_size": args.ranks})
            for step, (row, end) in enumerate(arrivals):
                collectives.append([rank, 0, step, step, row[rank] + offset, end + offset])
        with open(os.path.join(args.out, "host%04d.json" % host), "w") as f:
            json.dump({"collectives": collectives, "origin_ns": str(origin), "ranks": ranks,
                       "sample_stride": 1, "schema": "profopt.partial/1",
                       "unpaired_ends": 0}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
