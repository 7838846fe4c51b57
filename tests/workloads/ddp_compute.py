#!/usr/bin/env python3
"""ddp_compute: ddp_straggler where rank 1's forward takes a designed 30 ms (a sleep) and
rank 0's 5 ms, with loaders that keep up: rank 1 arrives late at every all-reduce because
of its compute. Expected: the straggler finding names rank 1, chronic, cause compute."""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--compute-ms", "5", "--slow-compute-ms", "30", "--load-ms", "0",
                     "--slow-load-ms", "0"]
    ddp_straggler.main()
