#!/usr/bin/env python3
"""ddp_compute_accumulate: ddp_compute with gradient accumulation: 4 steps per all-reduce,
the first 3 under model.no_sync(). Rank 1's forward takes a designed 30 ms, rank 0's 5 ms,
so rank 1 arrives about 100 ms late at every fourth step's all-reduce. Expected: rank 1 the
straggler, cause compute, its loss judged per synchronising step (4 steps), and the job's
step at the others' pace never shorter than the work rank 0 still does in those 4 steps
(issue 36: "139-155% of each step", a predicted step of -14.0 ms)."""

import sys

import ddp_straggler

if __name__ == "__main__":
    sys.argv[1:1] = ["--compute-ms", "5", "--slow-compute-ms", "30", "--load-ms", "0",
                     "--slow-load-ms", "0", "--accumulate", "4", "--steps", "64"]
    ddp_straggler.main()
