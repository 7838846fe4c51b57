#!/usr/bin/env python3
"""python_start.py: run under profopt-record on a machine without a CUDA driver, a training
script's start of the GPU collector (profopt._gpu.start, which profopt.run calls for CUDA
runs) returns False, says why once on stderr, and the script goes on."""
import profopt
from profopt import _gpu

print(f"tracing {bool(profopt.tracing_enabled())}")
print(f"started {_gpu.start()}")
print(f"again {_gpu.start()}")
print("script done")
