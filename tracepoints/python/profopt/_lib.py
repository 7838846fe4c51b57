"""Finds libprofopt and binds every function of profopt.h with ctypes.

The library is looked up in this order: the PROFOPT_LIBRARY environment variable, the
path recorded at install or build time (_location.py, next to this file), a build tree of
the source repository (build*/lib/libprofopt.so, newest first), then the system linker
path (by its soname). Candidates are tried one at a time and the search stops at the
first that loads: the system lookup is dlopen's own, not ctypes.util.find_library, which
runs ldconfig, gcc and ld, each of them a new process that a recording with per-process
buffers holds for its buffers (that search was most of the cost of importing profopt).
When none loads, every function becomes a no-op and one warning is issued, so an
instrumented program still runs.
"""

import ctypes
import glob
import os
import time
import warnings

# Stage, counter and GPU kinds share the C enums' values (part of the trace format).
_c_int64 = ctypes.c_int64
_c_int32 = ctypes.c_int32
_c_uint64 = ctypes.c_uint64
_c_int = ctypes.c_int
_c_str = ctypes.c_char_p


class GpuRecord(ctypes.Structure):
    """struct profopt_gpu_record: one completed piece of GPU work."""

    _fields_ = [
        ("device", ctypes.c_int32),
        ("stream", ctypes.c_int32),
        ("kind", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("bytes", ctypes.c_uint64),
        ("start_ns", ctypes.c_int64),
        ("end_ns", ctypes.c_int64),
        ("correlation_id", ctypes.c_uint64),
    ]


class GpuKernelShape(ctypes.Structure):
    """struct profopt_gpu_kernel_shape: how a kernel was launched."""

    _fields_ = [(name, ctypes.c_uint32) for name in (
        "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
        "registers_per_thread", "shared_bytes")]


# name: (restype, argtypes). Every function of tracepoints/include/profopt.h.
SIGNATURES = {
    "profopt_version": (_c_str, []),
    "profopt_tracing_enabled": (_c_int, []),
    "profopt_run_begin": (None, [_c_str]),
    "profopt_run_config": (None, [_c_str, _c_str]),
    "profopt_run_end": (None, []),
    "profopt_worker_begin": (None, [_c_int64]),
    "profopt_worker_end": (None, [_c_int64]),
    "profopt_epoch_begin": (None, [_c_int64]),
    "profopt_epoch_end": (None, [_c_int64]),
    "profopt_step_begin": (None, [_c_int64, _c_int64, _c_int64]),
    "profopt_step_end": (None, [_c_int64, _c_int64, _c_int64]),
    "profopt_stage_begin": (None, [_c_int, _c_str, _c_int64, _c_int64]),
    "profopt_stage_end": (None, [_c_int, _c_str, _c_int64, _c_int64]),
    "profopt_batch_ready": (None, [_c_int64, _c_int64]),
    "profopt_counter": (None, [_c_int, _c_int32, _c_int64]),
    "profopt_self_cost": (None, [_c_int64, _c_int64]),
    "profopt_mem_alloc": (None, [_c_uint64, _c_uint64, _c_int32, _c_str]),
    "profopt_mem_free": (None, [_c_uint64, _c_uint64, _c_int32, _c_str]),
    "profopt_gpu_launch": (None, [_c_int32, _c_int32, _c_uint64, _c_str]),
    "profopt_gpu_activity": (None, [ctypes.POINTER(GpuRecord)]),
    "profopt_gpu_kernel": (None, [ctypes.POINTER(GpuRecord), ctypes.POINTER(GpuKernelShape)]),
    "profopt_gpu_device": (None, [_c_int32, _c_str, _c_uint64, _c_int32, _c_int32, _c_int32]),
    "profopt_gpu_sync_begin": (None, [_c_int32, _c_int32]),
    "profopt_gpu_sync_end": (None, [_c_int32, _c_int32]),
    "profopt_rank": (None, [_c_int32, _c_int32, _c_int32, _c_str]),
    "profopt_collective_begin": (None, [_c_int32, _c_int, _c_uint64, _c_int64, _c_int32]),
    "profopt_collective_end": (None, [_c_int32, _c_int, _c_uint64, _c_int64, _c_int32]),
    "profopt_sampler_start": (_c_int, [ctypes.c_uint]),
    "profopt_sampler_stop": (None, []),
    "profopt_signal_timer_start": (_c_int, [_c_int, ctypes.c_uint32]),
    "profopt_signal_timer_overrun": (_c_int, []),
    "profopt_signal_timer_stop": (None, []),
    "profopt_signal_cpu_timer_start": (_c_int, [_c_int, ctypes.c_uint32]),
    "profopt_signal_counter_start": (_c_int, [_c_int, ctypes.c_uint32]),
    "profopt_signal_counter_stop": (None, []),
    "profopt_native_frames": (_c_int, [_c_int]),
    "profopt_stacks_start": (_c_int, [ctypes.c_uint32, _c_int]),
    "profopt_stacks_stop": (None, []),
    "profopt_stacks_python": (_c_int, []),
    "profopt_stacks_python_error": (_c_str, []),
    "profopt_stacks_taken": (_c_uint64, [ctypes.POINTER(_c_int64)]),
    "profopt_stacks_counters": (_c_int, []),
    "profopt_stacks_hz": (ctypes.c_uint32, []),
    "profopt_now_ns": (_c_int64, []),
    "profopt_code": (None, [ctypes.c_uint32, _c_str, _c_str, _c_int32]),
    "profopt_stack_sample": (None, [_c_int32, _c_int64, ctypes.POINTER(ctypes.c_uint32),
                                    ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32]),
}


def _noop(*args):
    return None


class _NoLibrary:
    """Stands in for the library when none loads: every call does nothing."""

    def __init__(self, reason):
        self.reason = reason  # why no library could be loaded, for the warning
        self.path = None
        for name in SIGNATURES:
            setattr(self, name, _noop)
        self.profopt_version = lambda: None
        self.profopt_tracing_enabled = lambda: 0
        self.profopt_sampler_start = lambda period_ms: -1
        self.profopt_signal_timer_start = lambda signo, period_us: -1
        self.profopt_signal_timer_overrun = lambda: 0
        self.profopt_signal_cpu_timer_start = lambda signo, period_us: -1
        self.profopt_signal_counter_start = lambda signo, period_us: -1
        self.profopt_stacks_python = lambda: -1
        self.profopt_stacks_taken = lambda weight_ns: 0
        self.profopt_stacks_counters = lambda: -1
        self.profopt_stacks_hz = lambda: 0
        self.profopt_now_ns = time.monotonic_ns


def _recorded_paths():
    try:
        from . import _location
    except ImportError:
        return []
    return [path for path in getattr(_location, "LIBRARY_PATHS", []) if path]


def _build_tree_paths():
    # tracepoints/python/profopt/_lib.py -> the repository root is three levels up; only
    # when this file is that checkout's (a copy of the module elsewhere has no build tree,
    # and must not pick up build*/ directories that happen to lie three levels up).
    here = os.path.abspath(__file__)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    own = os.path.join(root, "tracepoints", "python", "profopt", "_lib.py")
    try:
        if not os.path.samefile(own, here):
            return []
    except OSError:
        return []
    found = glob.glob(os.path.join(root, "build*", "lib", "libprofopt.so"))
    return sorted(found, key=lambda path: os.path.getmtime(path), reverse=True)


# Names dlopen resolves through the system linker path (ld.so.cache, LD_LIBRARY_PATH).
SYSTEM_NAMES = ("libprofopt.so.0", "libprofopt.so")


def candidate_paths():
    """The library paths to try, in order of preference, each computed only when the
    ones before it did not load."""
    env = os.environ.get("PROFOPT_LIBRARY")
    if env:
        yield env
    yield from _recorded_paths()
    yield from _build_tree_paths()
    yield from SYSTEM_NAMES


def _bind(cdll):
    for name, (restype, argtypes) in SIGNATURES.items():
        function = getattr(cdll, name)
        function.restype = restype
        function.argtypes = argtypes
    return cdll


def load():
    """Returns the bound library, or a no-op stand-in after one warning."""
    errors = []
    for path in candidate_paths():
        try:
            cdll = _bind(ctypes.CDLL(path))
        except (OSError, AttributeError) as error:
            errors.append(f"{path}: {error}")
            continue
        cdll.path = path
        return cdll
    reason = "; ".join(errors) if errors else "no libprofopt.so found"
    warnings.warn(f"profopt: libprofopt is not loaded, instrumentation is off ({reason}); "
                  "set PROFOPT_LIBRARY to its path", RuntimeWarning, stacklevel=3)
    note_for_recorder("libprofopt-not-loaded", reason)
    return _NoLibrary(reason)


def note_for_recorder(code, text):
    """Tells profopt-record (through the file it names in PROFOPT_RECORD_NOTES) what kept
    this process from recording, so that the recording says it too. One line per note:
    code, pid and text, tab-separated. Never raises."""
    path = os.environ.get("PROFOPT_RECORD_NOTES")
    if not path:
        return
    line = f"{code}\t{os.getpid()}\t{text}".replace("\n", " ")[:1000] + "\n"
    try:
        with open(path, "a", encoding="utf-8", errors="replace") as notes:
            notes.write(line)
    except OSError:
        pass


LIB = load()
