"""profopt: marks what a PyTorch training loop is doing as LTTng-UST events of the
"profopt" provider (through libprofopt, with ctypes), for profopt-analyze.

    import profopt
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for images, labels in loader:
            ...

Where a `with` block would mean re-indenting a long loop, the same run starts and stops
with two calls (profopt.start returns the run; profopt.stop ends it; a run still open at
interpreter exit is ended then):

    profopt.start(loader=loader, model=model, optimizer=optimizer)
    for epoch in range(epochs):
        ...
    profopt.stop()

Without libprofopt every call is a no-op (after one warning); without a recording
session the events cost a ctypes call each.
"""

import atexit
import os
import sys

from ._api import (DEVICE_HOST, DEVICE_PINNED, UNKNOWN, Counter, GpuKind, Stage, batch_ready, counter,
                   epoch_begin, epoch_end, gpu_activity, gpu_device, gpu_kernel,
                   gpu_launch, gpu_sync_begin,
                   gpu_sync_end, library_path, mem_alloc, mem_free, now_ns, run_begin,
                   run_config, run_end, sampler_start, sampler_stop, span, stage_begin,
                   stage_end, step, step_begin, step_end, tracing_enabled, version,
                   worker_begin, worker_end)
from . import _api
from ._lib import GpuKernelShape, GpuRecord
from ._dist import Collective, collective, record_rank as rank

__version__ = "0.1.0"

__all__ = [
    "Collective", "Counter", "DEVICE_HOST", "DEVICE_PINNED", "GpuKernelShape", "GpuKind", "GpuRecord", "Stage", "UNKNOWN",
    "batch_ready", "collective", "counter", "epoch_begin", "epoch_end", "gpu_activity", "gpu_device",
    "gpu_kernel", "gpu_launch", "gpu_sync_begin",
    "gpu_sync_end", "instrument", "instrument_model", "instrument_optimizer",
    "library_path", "loader_config", "mem_alloc", "mem_free", "now_ns", "rank", "run", "run_begin",
    "run_config", "run_end", "sampler_start", "sampler_stop", "span", "stage_begin",
    "stage_end", "start", "step", "step_begin", "step_end", "stop", "tracing_enabled", "version",
    "worker_begin", "worker_end",
]


def instrument(loader, steps=True):
    """Wraps a torch DataLoader: see profopt._loader."""
    from ._loader import instrument as _instrument
    return _instrument(loader, steps)


def instrument_model(model, label=None):
    """Forward and backward spans for a torch.nn.Module: see profopt._model."""
    from ._model import instrument_model as _instrument_model
    return _instrument_model(model, label)


def instrument_optimizer(optimizer, label=None):
    """An optimizer span around each optimizer.step()."""
    from ._model import instrument_optimizer as _instrument_optimizer
    return _instrument_optimizer(optimizer, label)


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def loader_config(loader):
    """The configuration of a DataLoader (or of an instrumented one), as strings."""
    loader = getattr(loader, "loader", loader)
    from torch.utils.data import IterableDataset
    from ._loader import nominal_batch_size
    workers = loader.num_workers
    return {
        "num_workers": _text(workers),
        "batch_size": _text(nominal_batch_size(loader)),
        "prefetch_factor": _text(loader.prefetch_factor if workers > 0 else 0),
        "pin_memory": _text(loader.pin_memory),
        "persistent_workers": _text(loader.persistent_workers),
        "drop_last": _text(loader.drop_last),
        "dataset_type": "iterable" if isinstance(loader.dataset, IterableDataset) else "map",
        "dataset": type(loader.dataset).__name__,
    }


def _torch_config(model):
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    # The training loop's intra-op threads: with loader workers they share the cores.
    config = {"torch_version": torch.__version__,
              "torch_num_threads": _text(torch.get_num_threads())}
    device = None
    if model is not None:
        parameter = next(iter(model.parameters()), None)
        device = parameter.device if parameter is not None else None
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    config["device"] = str(device)
    return config


class run:
    """The whole job, as a context manager: records run begin/end and the configuration
    (the loader's, torch's, then the pairs of config). model and optimizer, when given,
    are instrumented. Device memory is sampled at each step end when CUDA is available,
    otherwise the host RSS sampler runs every sample_ms while the run lasts (unless
    PROFOPT_SAMPLE_MS already started it); with CUDA the GPU collector records kernels,
    copies, host waits and device memory (profopt._gpu; PROFOPT_GPU=0 leaves it off).
    python_memory=True (default: the environment
    variable PROFOPT_PYTHON_MEMORY=1) traces the training process's Python allocations with
    tracemalloc and records the lines whose memory grew most (see profopt._pymem).
    In a distributed job the run first records the process's rank, and a
    DistributedDataParallel model gets a communication hook that times its all-reduce
    (profopt._dist, docs/distributed.md). stacks_hz=HZ samples the Python stacks of this
    process and of its DataLoader workers HZ times per CPU second (profopt._stacks,
    docs/sampling.md; default: PROFOPT_STACKS_HZ, which profopt-record --stacks sets);
    stacks_clock="wall" samples every thread HZ times per second of wall time instead, to
    see where they wait (default: PROFOPT_STACKS_CLOCK, else "cpu")."""

    def __init__(self, config=None, loader=None, framework="pytorch", *, model=None,
                 optimizer=None, sample_ms=50, python_memory=None, stacks_hz=None,
                 stacks_clock=None):
        self.stacks_hz = stacks_hz  # function samples per CPU second; None: the environment's
        self.stacks_clock = stacks_clock  # "cpu" or "wall"; None: the environment's
        self.stacks_started = False  # this run started the sampler, and stops it
        self.stacks_environment = None  # PROFOPT_STACKS_HZ before the run set it
        self.stacks_clock_environment = None  # PROFOPT_STACKS_CLOCK before the run set it
        self.config = dict(config or {})  # user's pairs, recorded after the derived ones
        self.loader = loader
        self.framework = framework
        self.model = model
        self.optimizer = optimizer
        self.sample_ms = sample_ms
        if python_memory is None:
            python_memory = os.environ.get("PROFOPT_PYTHON_MEMORY", "") not in ("", "0")
        self.python_memory = python_memory  # trace Python allocation sites (tracemalloc)

    def _pairs(self):
        pairs = {}
        if self.loader is not None:
            pairs.update(loader_config(self.loader))
        pairs.update(_torch_config(self.model))
        pairs.update({str(key): _text(value) for key, value in self.config.items()})
        return pairs

    def __enter__(self):
        from . import _dist, _gc
        _dist.record_rank()
        run_begin(self.framework)
        _gc.install()
        pairs = self._pairs()
        for key, value in pairs.items():
            run_config(key, value)
        if self.loader is not None:
            from ._loader import nominal_batch_size
            _api.STATE.batch_size = nominal_batch_size(getattr(self.loader, "loader",
                                                               self.loader))
        _api.STATE.cuda = pairs.get("device", "cpu").startswith("cuda")
        if not _api.STATE.cuda:
            _api.start_host_sampler(self.sample_ms)
        else:
            from . import _gpu
            _gpu.start()
            _api.describe_cuda_device()
        if self.model is not None:
            _dist.install_ddp_hook(self.model)
            instrument_model(self.model)
        if self.optimizer is not None:
            instrument_optimizer(self.optimizer)
        if self.python_memory:
            from . import _pymem
            _pymem.start()
            _api.STATE.python_memory = True
        self._start_stacks()
        from . import _stacks
        if _stacks._State.running and _stacks._State.native:
            # libprofopt's sampler wrote stacks_clock and stacks_timer; it reads every thread
            # on CPU time, the main thread and those that began a span on wall time
            run_config("stacks_threads", "spans" if _stacks._State.clock == "wall" else "all")
        elif _stacks._State.running:  # what the samples count, for the report's words
            run_config("stacks_clock", _stacks._State.clock)
            run_config("stacks_timer", "timer" if _stacks._State.clock == "wall"
                       else "counter" if _stacks._State.counter
                       else "cpu-timer" if _stacks._State.cpu_timer else "itimer")
            run_config("stacks_threads", "main")
        return self

    def _start_stacks(self):
        from . import _stacks
        if not self.stacks_hz or _stacks._State.running:
            return
        clock = self.stacks_clock or _stacks.clock_from_environment()
        self.stacks_started = _stacks.start(self.stacks_hz, clock)
        if self.stacks_started:  # for the workers it spawns, until the run ends
            self.stacks_environment = os.environ.get(_stacks.ENVIRONMENT)
            self.stacks_clock_environment = os.environ.get(_stacks.CLOCK_ENVIRONMENT)
            os.environ[_stacks.ENVIRONMENT] = str(int(self.stacks_hz))
            os.environ[_stacks.CLOCK_ENVIRONMENT] = clock

    def __exit__(self, exc_type, exc, traceback):
        from . import _gc
        _gc.uninstall()
        _api.stop_host_sampler()
        if self.stacks_started:
            from . import _stacks
            _stacks.stop()
            self.stacks_started = False
            for name, before in ((_stacks.ENVIRONMENT, self.stacks_environment),
                                 (_stacks.CLOCK_ENVIRONMENT, self.stacks_clock_environment)):
                if before is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = before
        if _api.STATE.python_memory:
            from . import _pymem
            _pymem.stop()
            _api.STATE.python_memory = False
        from . import _cost
        _cost.report()  # what profopt cost in this process, before the run's end
        ending = _run_ending(exc_type, exc)
        if ending:
            run_config("run_ending", ending)
        run_end()
        return False


def _run_ending(exc_type, exc):
    """The run_ending pair for a run left by an exception (None for a clean end):
    "signal: SIGINT" for KeyboardInterrupt, "exception: TYPE" otherwise; SystemExit with a
    zero or None code is a clean end."""
    if exc_type is None:
        return None
    if issubclass(exc_type, KeyboardInterrupt):
        return "signal: SIGINT (KeyboardInterrupt)"
    if issubclass(exc_type, SystemExit) and getattr(exc, "code", None) in (None, 0):
        return None
    return f"exception: {exc_type.__name__}"



# The run profopt.start opened and profopt.stop has not ended, and the exception type an
# uncaught exception reported for it (through the chained sys.excepthook) before exit.
_STARTED = None
_UNCAUGHT = None
_PREVIOUS_EXCEPTHOOK = None


def _excepthook(exc_type, exc, traceback):
    global _UNCAUGHT
    _UNCAUGHT = (exc_type, exc)
    (_PREVIOUS_EXCEPTHOOK or sys.__excepthook__)(exc_type, exc, traceback)


def _at_exit():
    if _STARTED is not None:
        exc_type, exc = _UNCAUGHT or (None, None)
        stop(exc_type=exc_type, exc=exc)


def start(config=None, loader=None, framework="pytorch", *, model=None, optimizer=None,
          sample_ms=50, python_memory=None, stacks_hz=None, stacks_clock=None):
    """Starts a run as `with profopt.run(...)` would, for programs where the training loop
    cannot be put inside a `with` block without re-indenting it; same arguments. Returns
    the run. profopt.stop() ends it; a run still open when the interpreter exits is ended
    then, with the uncaught exception (if one ended the program) as its run_ending. A
    second start before stop raises RuntimeError."""
    global _STARTED, _PREVIOUS_EXCEPTHOOK
    if _STARTED is not None:
        raise RuntimeError("profopt.start: a run is already started; call profopt.stop() "
                           "first")
    started = run(config, loader, framework, model=model, optimizer=optimizer,
                  sample_ms=sample_ms, python_memory=python_memory, stacks_hz=stacks_hz,
                  stacks_clock=stacks_clock)
    started.__enter__()
    _STARTED = started
    if sys.excepthook is not _excepthook:
        _PREVIOUS_EXCEPTHOOK = sys.excepthook
        sys.excepthook = _excepthook
    return started


def stop(*, exc_type=None, exc=None):
    """Ends the run profopt.start started (run_end, the samplers stopped); exc_type and exc
    say why the program is stopping when an exception ends it (as `with` would pass them).
    Without a started run it does nothing."""
    global _STARTED, _PREVIOUS_EXCEPTHOOK
    started, _STARTED = _STARTED, None
    if sys.excepthook is _excepthook:
        sys.excepthook = _PREVIOUS_EXCEPTHOOK or sys.__excepthook__
        _PREVIOUS_EXCEPTHOOK = None
    if started is not None:
        started.__exit__(exc_type, exc, None)


atexit.register(_at_exit)

from . import _stacks  # noqa: E402 (after the API it samples through)
_stacks.start_from_environment()
