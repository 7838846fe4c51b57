"""The GPU collector, libprofopt-cupti: profopt.run starts it when the run uses CUDA and a
recording is on, so that kernels, copies, host waits and device memory are recorded
(docs/gpu.md). It is looked for at $PROFOPT_CUPTI_LIBRARY, next to the libprofopt this
module loaded, then by the linker's search. PROFOPT_GPU=0 leaves it off. When it cannot be
loaded or cannot record (no driver, another tool holds CUPTI), one line says why and the
training goes on; it never raises."""

import ctypes
import os
import sys

from . import _api
from ._lib import LIB, note_for_recorder

_STARTED = None  # None: not tried; True/False: the outcome of the one try


def _candidates():
    chosen = os.environ.get("PROFOPT_CUPTI_LIBRARY")
    if chosen:
        yield chosen
        return
    path = getattr(LIB, "path", None)
    if path and os.sep in path:
        yield os.path.join(os.path.dirname(path), "libprofopt-cupti.so.0")
    yield "libprofopt-cupti.so.0"


def start():
    """Starts the collector once per process; True when it records GPU activity."""
    global _STARTED
    if _STARTED is not None:
        return _STARTED
    _STARTED = False
    if os.environ.get("PROFOPT_GPU", "") == "0" or not _api.tracing_enabled():
        return False
    errors = []
    for path in _candidates():
        try:
            library = ctypes.CDLL(path)
            begin = library.profopt_cupti_start
        except (OSError, AttributeError) as error:
            errors.append(f"{path}: {error}")
            continue
        begin.restype = ctypes.c_int
        begin.argtypes = []
        _STARTED = begin() == 0  # the collector says on stderr why it does not record
        return _STARTED
    reason = "; ".join(errors)
    print(f"profopt: GPU activity is not recorded: the GPU collector is not loaded ({reason})",
          file=sys.stderr)
    note_for_recorder("gpu-collector-not-loaded", reason)
    return False
