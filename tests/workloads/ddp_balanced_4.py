#!/usr/bin/env python3
"""ddp_balanced_4: ddp_balanced with four ranks: the same designed 20 ms forward (a sleep) on
every rank, loaders that keep up. Expected: no straggler."""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--ranks", "4", "--steps", "30", "--compute-ms", "20", "--load-ms", "0",
                     "--slow-load-ms", "0"]
    ddp_straggler.main()
