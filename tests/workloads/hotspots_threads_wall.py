#!/usr/bin/env python3
"""hotspots_threads_wall: hotspots_threads' prefetch thread, whose batches are made by
hotspots_wall's three functions (a remote read that waits in time.sleep, 4.4 ms a sample,
then a decode and an augment that spin to deadlines of the wall clock, 4.4 and 2.2 ms),
recorded with --stacks --stacks-clock=wall. Per second of wall time the three take 40%,
40% and 20% of the thread's preprocessing. Expected: the training process's preprocess
stage, which only that thread runs, names the three with total shares within 5 points of
the design: on wall time every thread that runs Python has a timer of its own, so the
thread's waiting shows as its CPU does (docs/sampling.md); the module's handler would see
the main thread only."""

import common
import hotspots_threads
import hotspots_wall

if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], hotspots_threads.options)
    common.run_workload("hotspots_threads_wall", arguments.truth,
                        lambda truth: hotspots_threads.train(arguments, truth, hotspots_wall))
