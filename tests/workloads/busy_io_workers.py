#!/usr/bin/env python3
"""busy_io_workers: few_io_workers (one DataLoader worker whose samples each wait 5 ms on
I/O) on a machine where other programs hold most of the cores: the harness starts two busy
loops outside the recording before it records this and its reruns (run_workload.py,
BACKGROUND). Waiting on I/O needs no core, so the loader is short of workers, not of
cores. Expected: input-bound with too few workers, the loading I/O-like (never "waits for
a core"), a recommendation of more workers that predicts the rerun (--workers) within 15%
or says why it cannot, and the busy machine said."""

import common
import few_io_workers

if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], few_io_workers.options)
    common.run_workload("busy_io_workers", arguments.truth,
                        lambda truth: few_io_workers.train(arguments, truth))
