#!/usr/bin/env python3
"""copy_on_access_numpy: copy_on_access_list's data and loader with the 2 million strings
held in one numpy array of fixed-width bytes instead of a list of str. The workers read
elements without writing in the shared buffer, so their unique sets stay small. Expected: no
worker-copy-on-access and no host-memory-growth."""

import sys

import copy_on_access_list
import common

if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], copy_on_access_list.options,
                                  ["--storage", "numpy", *sys.argv[1:]])
    common.run_workload("copy_on_access_numpy", arguments.truth,
                        lambda truth: copy_on_access_list.train(arguments, truth))
