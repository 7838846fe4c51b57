"""The Python face of profopt.h: enums, thin wrappers, and the run/step/span markers."""

import enum
import functools
import os
import sys
import threading
import time

from ._lib import LIB, GpuKernelShape, GpuRecord

UNKNOWN = -1
DEVICE_HOST = -1
DEVICE_PINNED = -2  # host memory pinned for the devices (PROFOPT_DEVICE_PINNED)
FREE_MEMORY_PERIOD_S = 1.0  # the device's free memory is read at most this often
# A loop body shorter than both of these did not train: it only left the loop (see
# LoopBodies). A body that trains runs torch operators, tens of microseconds each.
EMPTY_BODY_SHARE = 0.1  # of the shortest body before it
EMPTY_BODY_MAX_S = 0.001


class Stage(enum.IntEnum):
    """Pipeline stages (enum profopt_stage); values are part of the trace format."""

    DATA_WAIT = 0
    LOAD = 1
    PREPROCESS = 2
    COLLATE = 3
    H2D_COPY = 4
    FORWARD = 5
    BACKWARD = 6
    OPTIMIZER = 7
    EVAL = 8
    CHECKPOINT = 9
    CUSTOM = 10
    GC = 11  # the garbage collector (recorded by profopt itself: profopt._gc)


class Counter(enum.IntEnum):
    """Counter kinds (enum profopt_counter)."""

    QUEUE_DEPTH = 0
    HOST_RSS = 1
    GPU_MEM_USED = 2
    PROCESS_CPU = 3
    GPU_MEM_RESERVED = 4
    PROCESS_RUNQ_WAIT = 5
    GPU_RECORDS_DROPPED = 6
    GPU_MEM_PEAK = 7
    GPU_MEM_FREE = 8
    MACHINE_CPU = 9
    HOST_PSS = 10
    HOST_USS = 11
    MACHINE_MEMORY = 12
    GC_COLLECTED = 13
    GC_UNCOLLECTABLE = 14


class GpuKind(enum.IntEnum):
    """Kinds of GPU activity records (enum profopt_gpu_kind)."""

    KERNEL = 0
    MEMCPY_H2D = 1
    MEMCPY_D2H = 2
    MEMCPY_D2D = 3
    MEMSET = 4


_STAGE_BY_NAME = {stage.name.lower(): stage for stage in Stage}


def encode(text):
    """Text as the NUL-terminated UTF-8 bytes C expects; None stays NULL. Never raises."""
    if text is None or isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:
            text = "?"
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeError:
        data = text.encode("utf-8", "replace")
    return data.replace(b"\0", b"?")


def resolve_stage(stage, label=""):
    """(stage value, label) for a Stage, an int or a name; an unknown name is a custom
    stage labelled with that name."""
    if isinstance(stage, str):
        known = _STAGE_BY_NAME.get(stage.strip().lower())
        if known is None:
            return int(Stage.CUSTOM), (label or stage)
        return int(known), label
    value = int(stage)
    if not 0 <= value <= int(Stage.CUSTOM):
        raise ValueError(f"profopt: unknown stage value {value}")
    return value, label


# Thin wrappers, one per function of profopt.h.

def version():
    raw = LIB.profopt_version()
    return raw.decode() if raw else None


def tracing_enabled():
    return bool(LIB.profopt_tracing_enabled())


def library_path():
    """Path of the loaded libprofopt, or None when instrumentation is off."""
    return getattr(LIB, "path", None)


def run_begin(framework="pytorch"):
    LIB.profopt_run_begin(encode(framework))


def run_config(key, value):
    LIB.profopt_run_config(encode(key), encode(value))


def run_end():
    LIB.profopt_run_end()


def worker_begin(worker_id):
    LIB.profopt_worker_begin(worker_id)


def worker_end(worker_id):
    LIB.profopt_worker_end(worker_id)


def epoch_begin(epoch):
    LIB.profopt_epoch_begin(epoch)


def epoch_end(epoch):
    LIB.profopt_epoch_end(epoch)


def step_begin(step, epoch=UNKNOWN, batch_size=UNKNOWN):
    LIB.profopt_step_begin(step, epoch, batch_size)


def step_end(step, epoch=UNKNOWN, batch_size=UNKNOWN):
    LIB.profopt_step_end(step, epoch, batch_size)


class _Spans(threading.local):
    """Stage spans this thread began (model, optimizer and user spans): a step body that
    began one trained or waited, whatever its length (LoopBodies)."""

    begun = 0


SPANS = _Spans()


def stage_begin(stage, label="", batch=UNKNOWN, sample=UNKNOWN):
    value, label = resolve_stage(stage, label)
    SPANS.begun += 1
    LIB.profopt_stage_begin(value, encode(label), batch, sample)


def stage_end(stage, label="", batch=UNKNOWN, sample=UNKNOWN):
    value, label = resolve_stage(stage, label)
    LIB.profopt_stage_end(value, encode(label), batch, sample)


def batch_ready(batch, queue_depth=UNKNOWN):
    LIB.profopt_batch_ready(batch, queue_depth)


def counter(kind, value, device=UNKNOWN):
    LIB.profopt_counter(int(kind), device, int(value))


def mem_alloc(addr, nbytes, device=DEVICE_HOST, label=""):
    LIB.profopt_mem_alloc(addr, nbytes, device, encode(label))


def mem_free(addr, nbytes, device=DEVICE_HOST, label=""):
    LIB.profopt_mem_free(addr, nbytes, device, encode(label))


def gpu_launch(device, stream, correlation_id, name=""):
    LIB.profopt_gpu_launch(device, stream, correlation_id, encode(name))


def gpu_activity(device, stream, kind, name, nbytes, start_ns, end_ns, correlation_id=0):
    record = GpuRecord(device, stream, int(kind), encode(name), nbytes, start_ns, end_ns,
                       correlation_id)
    LIB.profopt_gpu_activity(record)


def gpu_kernel(device, stream, name, start_ns, end_ns, correlation_id=0, grid=(0, 0, 0),
               block=(0, 0, 0), registers_per_thread=0, shared_bytes=0):
    """A completed kernel with its launch shape (grid and block as (x, y, z))."""
    record = GpuRecord(device, stream, int(GpuKind.KERNEL), encode(name), 0, start_ns, end_ns,
                       correlation_id)
    shape = GpuKernelShape(*grid, *block, registers_per_thread, shared_bytes)
    LIB.profopt_gpu_kernel(record, shape)


def gpu_device(device, name, memory_bytes, multiprocessors=UNKNOWN, capability=(UNKNOWN,
                                                                                UNKNOWN)):
    """What a device is: name, memory, multiprocessors, compute capability (major, minor)."""
    LIB.profopt_gpu_device(device, encode(name), int(memory_bytes), int(multiprocessors),
                           int(capability[0]), int(capability[1]))


def gpu_sync_begin(device, stream=UNKNOWN):
    LIB.profopt_gpu_sync_begin(device, stream)


def gpu_sync_end(device, stream=UNKNOWN):
    LIB.profopt_gpu_sync_end(device, stream)


def sampler_start(period_ms):
    """Starts the RSS/CPU sampler thread; True on success."""
    return LIB.profopt_sampler_start(int(period_ms)) == 0


def sampler_stop():
    LIB.profopt_sampler_stop()


def now_ns():
    return LIB.profopt_now_ns()


class _Marker:
    """Base of the markers usable both as a context manager and as a decorator."""

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self._copy():
                return function(*args, **kwargs)
        return wrapper

    def _copy(self):
        return self


class span(_Marker):
    """A stage span: `with profopt.span("forward"):` or `@profopt.span(Stage.EVAL)`.

    stage is a Stage, its value or its name ("data_wait", "load", ...); another name is
    recorded as a custom stage labelled with it. batch and sample are the indexes the work
    belongs to, -1 when unknown.
    """

    __slots__ = ("_stage", "_label", "_batch", "_sample")

    def __init__(self, stage, label="", batch=UNKNOWN, sample=UNKNOWN):
        value, label = resolve_stage(stage, label)
        self._stage = value
        self._label = encode(label)
        self._batch = batch
        self._sample = sample

    def __enter__(self):
        SPANS.begun += 1
        LIB.profopt_stage_begin(self._stage, self._label, self._batch, self._sample)
        return self

    def __exit__(self, *exc):
        LIB.profopt_stage_end(self._stage, self._label, self._batch, self._sample)
        return False


class LoopBodies:
    """How long a loop's bodies take, to tell a body that trained from one that only left
    the loop: with `if step == N: break` at the top of the body, the batch fetched last is
    handed over and never trained on. Such a body takes microseconds, a tenth of the
    shortest body before it or less, and begins no stage span (forward, backward, the
    optimizer, a data wait: a short body that began one trained, on a batch that was
    ready); its step consumed no batch and ends with batch size 0, which profopt-analyze
    does not count as a step (docs/model.md)."""

    __slots__ = ("shortest_s",)

    def __init__(self):
        self.shortest_s = None  # the shortest body that trained; None before the first

    def ran(self, seconds):
        """A body that trained took seconds."""
        if self.shortest_s is None or seconds < self.shortest_s:
            self.shortest_s = seconds

    def did_nothing(self, seconds):
        """Whether a body that took seconds did nothing but leave (or skip) the loop."""
        shortest = self.shortest_s
        return shortest is not None and seconds < EMPTY_BODY_MAX_S and \
            seconds < EMPTY_BODY_SHARE * shortest


class _State:
    """What the markers of this process share: the open run and the loop's open step."""

    def __init__(self):
        self.batch_size = UNKNOWN  # of the run's loader, for steps that do not say
        self.cuda = False          # record device memory counters at step end
        self.loader_step = None    # the step an instrumented loader opened (weak), or None
        self.next_step = 0         # auto-numbering of step() without an index
        self.sampler_started = False
        self.python_memory = False  # tracemalloc sites are sampled at step ends
        self.step_bodies = LoopBodies()  # of the steps step() marks
        self.free_sampled = float("-inf")  # when the device's free memory was last read


STATE = _State()


def after_step_end():
    """Just after a step ended: the Python allocation sites, when
    profopt.run(python_memory=True) traces them. Outside the step, so that the snapshot's
    own time is not charged to the program's steps."""
    if STATE.python_memory:
        from . import _pymem
        _pymem.on_step_end()


def record_memory_counters():
    """Device memory counters, when CUDA is in use: what the caching allocator has in use,
    holds, and has had in use at most (its peak since the start: profopt never resets the
    program's peak statistics), and what the device has free."""
    if not STATE.cuda:
        return
    torch = sys.modules.get("torch")
    try:
        device = torch.cuda.current_device()
        LIB.profopt_counter(int(Counter.GPU_MEM_USED), device,
                            torch.cuda.memory_allocated(device))
        LIB.profopt_counter(int(Counter.GPU_MEM_RESERVED), device,
                            torch.cuda.memory_reserved(device))
        LIB.profopt_counter(int(Counter.GPU_MEM_PEAK), device,
                            torch.cuda.max_memory_allocated(device))
        now = time.monotonic()
        if now - STATE.free_sampled >= FREE_MEMORY_PERIOD_S:  # a driver call: once a second
            STATE.free_sampled = now
            LIB.profopt_counter(int(Counter.GPU_MEM_FREE), device,
                                torch.cuda.mem_get_info(device)[0])
    except Exception:
        STATE.cuda = False


def describe_cuda_device():
    """The run's CUDA device (profopt_gpu_device), from torch's device properties."""
    torch = sys.modules.get("torch")
    try:
        device = torch.cuda.current_device()
        properties = torch.cuda.get_device_properties(device)
        gpu_device(device, properties.name, properties.total_memory,
                   properties.multi_processor_count, (properties.major, properties.minor))
    except Exception:
        pass


class step(_Marker):
    """A training step: `with profopt.step(i, epoch=e):` or as a decorator.

    index None numbers steps from 0 in this process. Inside a step opened by an
    instrumented loader (profopt.instrument), this marker records nothing: the loader's
    step already covers the data wait and the loop body.
    """

    def __init__(self, index=None, epoch=UNKNOWN, batch_size=None):
        self._index = index
        self._epoch = epoch
        self._batch_size = batch_size
        self._open = None  # (index, epoch, batch size) recorded at enter
        self._began = 0.0  # perf_counter() at enter
        self._spans = 0    # SPANS.begun at enter

    def _copy(self):
        return step(self._index, self._epoch, self._batch_size)

    def __enter__(self):
        if STATE.loader_step is not None:
            return self
        index = self._index
        if index is None:
            index = STATE.next_step
        STATE.next_step = index + 1
        size = STATE.batch_size if self._batch_size is None else self._batch_size
        self._open = (index, self._epoch, size)
        LIB.profopt_step_begin(*self._open)
        self._spans = SPANS.begun
        self._began = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, traceback):
        if self._open is None:
            return False
        index, epoch, size = self._open
        self._open = None
        took = time.perf_counter() - self._began
        if exc_type is None and SPANS.begun == self._spans and \
                STATE.step_bodies.did_nothing(took):
            LIB.profopt_step_end(index, epoch, 0)  # not a step: its number is free
            if self._index is None:
                STATE.next_step = index
            return False
        if exc_type is None:
            STATE.step_bodies.ran(took)
        record_memory_counters()
        LIB.profopt_step_end(index, epoch, size)
        after_step_end()
        return False


def start_host_sampler(period_ms):
    """Starts the RSS/CPU sampler unless PROFOPT_SAMPLE_MS or this module already did."""
    if STATE.sampler_started or os.environ.get("PROFOPT_SAMPLE_MS"):
        return
    STATE.sampler_started = sampler_start(period_ms)


def stop_host_sampler():
    if STATE.sampler_started:
        sampler_stop()
        STATE.sampler_started = False
