#!/usr/bin/env python3
"""ddp_balanced_shared: ddp_balanced beside two busy loops that the harness starts (other
programs' load on the 2 cores, run_workload.py's BACKGROUND): the ranks do the same work,
but each waits for a core by turns, so one or the other arrives milliseconds late at every
all-reduce and neither is late on average. Expected: no straggler, though the job loses
a share of its step to the spread (issue 36: 5.5 ms of a 30.6 ms step was called a
straggler in 1 of 13 recordings)."""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--compute-ms", "20", "--load-ms", "0", "--slow-load-ms", "0",
                     "--steps", "60"]
    ddp_straggler.main()
