#!/usr/bin/env python3
"""busy_compute_bound: a loop whose step is its own computation (~8 ms on a quiet core)
fed by 2 DataLoader workers whose samples are cheap, on a machine where other programs
hold most of the cores: the harness starts two busy loops outside the recording before it
records this (run_workload.py, BACKGROUND), and the script measures what they used from
/proc/stat. The loop receives batches that were ready long before it asked for them, slowly
because it waits for a core. Expected: host-bound, never input-bound; the trace quality and
the verdict say what other programs used, within a quarter of a core of the script's
measure. The loop is compute_bound_idle_workers's, with a narrower model."""

import common
import compute_bound_idle_workers


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=512, help="the model's width")


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("busy_compute_bound", arguments.truth,
                        lambda truth: compute_bound_idle_workers.train(arguments, truth))
