#!/usr/bin/env python3
"""ddp_balanced: ddp_straggler with the same work on both ranks and loaders that keep up:
every forward takes a designed 20 ms (a sleep), every batch loads at once, so the ranks
arrive at the all-reduce together, within the machine's scheduling jitter. Expected: no
straggler. (Ranks that are all input-bound at the same nominal rate are not balanced in
this sense: the slower of their loaders paces the job, and the other rank, whose batches
are prefetched, arrives early at every all-reduce.)"""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--compute-ms", "20", "--load-ms", "0", "--slow-load-ms", "0"]
    ddp_straggler.main()
