"""The GPU collector, libprofopt-cupti: profopt.run starts it when the run uses CUDA and a
recording is on, so that kernels, copies, host waits and device memory are recorded
(docs/gpu.md). It is looked for at $PROFOPT_CUPTI_LIBRARY, next to the libprofopt this
module loaded, then by the linker's search. PROFOPT_GPU=0 leaves it off. When it cannot be
loaded or cannot record (no driver, another tool holds CUPTI), one line says why and the
training goes on; it never raises.

CUPTI serves one tool at a time: while the collector records, torch.profiler gets no CUDA
activity (Kineto logs "CUPTI initialization failed"; seen on an H100 with PyTorch 2.11,
where profopt kept recording every kernel). When a torch.profiler.profile starts in a
process whose collector records, one line says so (PROFOPT_GPU=0 leaves CUPTI to it)."""

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


PROFILER_NOTE = ("profopt: torch.profiler starts while profopt's GPU collector holds CUPTI: "
                 "torch.profiler records no CUDA activity in this process "
                 "(PROFOPT_GPU=0 leaves CUPTI to torch.profiler)")
_WARNED = False


def watch_profiler():
    """Says once, when a torch.profiler.profile starts, that it gets no CUDA activity."""
    profiler = getattr(sys.modules.get("torch"), "profiler", None)
    profile = getattr(profiler, "profile", None)
    original = getattr(profile, "start", None)
    if original is None or getattr(original, "_profopt_watched", False):
        return

    def start(self, *args, **kwargs):
        global _WARNED
        if not _WARNED:
            _WARNED = True
            print(PROFILER_NOTE, file=sys.stderr)
            note_for_recorder("torch-profiler-beside-gpu-collector", "")
        return original(self, *args, **kwargs)

    start._profopt_watched = True
    profile.start = start


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
        if _STARTED:
            watch_profiler()
        return _STARTED
    reason = "; ".join(errors)
    print(f"profopt: GPU activity is not recorded: the GPU collector is not loaded ({reason})",
          file=sys.stderr)
    note_for_recorder("gpu-collector-not-loaded", reason)
    return False
