#!/usr/bin/env python3
"""ddp_straggler_4: ddp_straggler with four ranks, each with its DataLoader worker: rank 3's
batches take 40 ms to load, the others' load at once. Expected: rank 3 named the chronic
straggler, cause input, and each rank's wait per step as the script measures it."""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--ranks", "4", "--slow-rank", "3", "--steps", "30"]
    ddp_straggler.main()
