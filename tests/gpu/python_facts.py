"""python_facts.py: what tests/gpu/device_checks.sh needs to know of the machine's Python:
"VERSIONS python torch cuda", "CUPTI_DIR" (where torch's own libcupti is, when a wheel
brought one) and "LIBTORCH_CUDA" (its path), one per line."""

import glob
import os
import site
import sys

import torch

print("VERSIONS", sys.version.split()[0], torch.__version__, torch.version.cuda)
for base in site.getsitepackages():
    found = sorted(glob.glob(os.path.join(base, "nvidia", "**", "libcupti.so*"), recursive=True))
    if found:
        print("CUPTI_DIR", os.path.dirname(found[0]))
        break
print("LIBTORCH_CUDA", os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))
