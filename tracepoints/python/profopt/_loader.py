"""profopt.instrument(): follows each batch of a PyTorch DataLoader from the worker that
loads it to the training step that consumes it, without changing what the program sees.

Invisible to the program: the instrumented loader is a second DataLoader over the user's
own dataset object, sampler objects, collate function, worker_init_fn, generator and
options. get_worker_info().dataset is the user's dataset (its copy in the worker),
worker_init_fn gets the same worker id, collate_fn the same samples, the samplers are
iterated at the same moments (so they draw the same random numbers), and whatever user
code raises reaches the loop unchanged. What profopt adds lives where user code does not
look: PyTorch builds a fetcher in the process that fetches (a worker, after
worker_init_fn; the main process with num_workers=0) through _DatasetKind.create_fetcher,
and profopt wraps the fetchers of its own loaders (those whose collate function is
profopt's) to record the load spans and to carry the batch index.

How batch indexes are known:
- Map-style datasets: the batch sampler (or, without batching, the sampler) is wrapped in
  the main process so that it yields (batch, indexes) pairs; batch counts up across
  epochs. The fetcher unpacks the pair in whichever process fetches and hands the user's
  indexes to PyTorch's own fetcher, so load, preprocess and collate carry the exact index
  whatever worker PyTorch picks.
- Iterable datasets: PyTorch gives no index to workers, so each worker numbers its own
  batches: batch = epoch_base + k * num_workers + worker_id for its k-th batch, which is
  PyTorch's round-robin order while every worker still has data.
In both cases the index travels with the batch (collate returns it beside the data), so
the main loop's data wait carries the exact index even when the order differs.
"""

import multiprocessing.util
import time
import warnings
import weakref

from torch.utils.data import DataLoader, IterableDataset, get_worker_info
from torch.utils.data import dataloader as _torch_dataloader

from . import _api, _cost, _gc, _pymem
from ._api import LIB, SPANS, STATE, Stage, UNKNOWN
from ._cost import hooks_since, sample_since, sample_start, thread_ns

_LOAD = int(Stage.LOAD)
_PREPROCESS = int(Stage.PREPROCESS)
_COLLATE = int(Stage.COLLATE)
_DATA_WAIT = int(Stage.DATA_WAIT)
_EMPTY = b""
_TRANSFORM_ATTRIBUTES = ("transform", "transforms", "target_transform")
_NESTING_DEPTH = 3  # datasets wrapped in datasets (Subset, ConcatDataset) searched


class _OpenLoad:
    """The sample being fetched on this process's fetching thread: (batch, sample) or
    None, and whether its load span is still open. A worker fetches on one thread; with
    num_workers=0 the main thread does."""

    current = None
    load_open = False


class _LoaderState:
    """Numbering shared by the collate function and the fetchers of one instrumented
    loader. A worker has its own copy (in its copy of the collate function)."""

    def __init__(self, iterable):
        self.iterable = iterable
        self.fetch_batch = UNKNOWN  # the batch this process is fetching
        self.epoch_base = 0         # iterable: first index of this epoch's numbering
        self.collated = 0           # iterable: batches collated by this process


def _iterable_label(state):
    info = get_worker_info()
    if info is None:
        return state.epoch_base + state.collated
    return state.epoch_base + state.collated * info.num_workers + info.id


def _open_load(batch, sample):
    _OpenLoad.current = (batch, sample)
    _OpenLoad.load_open = True
    LIB.profopt_stage_begin(_LOAD, _EMPTY, batch, sample)


def _close_load():
    """Ends the open load span, if any: at the next sample, at collate, at an error."""
    current = _OpenLoad.current
    _OpenLoad.current = None
    if _OpenLoad.load_open:
        _OpenLoad.load_open = False
        LIB.profopt_stage_end(_LOAD, _EMPTY, current[0], current[1])


def _sample_of(index):
    return index if type(index) is int else UNKNOWN


class _TracedTransform:
    """A dataset's transform, recorded as a preprocess span that ends the load span of
    its sample, so load and preprocess times do not overlap. What __getitem__ does after
    its transform is in no span: a load span costs two reads of the thread CPU clock."""

    def __init__(self, inner):
        self.inner = inner  # the user's transform (owned by the dataset)

    def __call__(self, *args, **kwargs):
        open_load = _OpenLoad.current
        if open_load is None:
            return self.inner(*args, **kwargs)
        started = sample_start()
        batch, sample = open_load
        if _OpenLoad.load_open:
            LIB.profopt_stage_end(_LOAD, _EMPTY, batch, sample)
            _OpenLoad.load_open = False
        LIB.profopt_stage_begin(_PREPROCESS, _EMPTY, batch, sample)
        _OpenLoad.current = None
        sample_since(started)
        try:
            return self.inner(*args, **kwargs)
        finally:
            started = sample_start()
            _OpenLoad.current = open_load
            LIB.profopt_stage_end(_PREPROCESS, _EMPTY, batch, sample)
            sample_since(started)

    def __getattr__(self, name):
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self):
        return repr(self.inner)


def _instance_attributes(value):
    """The instance dictionary of value, or None (no __dict__, or a class's read-only
    mapping)."""
    try:
        attributes = vars(value)
    except TypeError:
        return None
    return attributes if type(attributes) is dict else None


def _swap_in_transforms(dataset, swapped, depth=0):
    """For the time of one fetch, puts a _TracedTransform in place of each transform
    attribute of dataset and of the datasets it wraps (.dataset, .datasets), appending
    (attributes, name, original, wrapper) to swapped. Only plain instance attributes are
    swapped, in the instance dictionary itself, so no property, __getattr__ or
    __setattr__ of the user's runs; at any other time the attributes are the user's."""
    attributes = _instance_attributes(dataset)
    if attributes is None or depth > _NESTING_DEPTH:
        return
    for name in _TRANSFORM_ATTRIBUTES:
        original = attributes.get(name)
        if original is None or not callable(original) or type(original) is _TracedTransform:
            continue
        wrapper = _TracedTransform(original)
        attributes[name] = wrapper
        swapped.append((attributes, name, original, wrapper))
    _swap_in_transforms(attributes.get("dataset"), swapped, depth + 1)
    inner = attributes.get("datasets")
    if type(inner) in (list, tuple):
        for each in inner:
            _swap_in_transforms(each, swapped, depth + 1)


def _restore_transforms(swapped):
    """Puts the user's transforms back, unless user code replaced them meanwhile."""
    for attributes, name, original, wrapper in reversed(swapped):
        if attributes.get(name) is wrapper:
            attributes[name] = original


def _traced_indexes(batch, indexes):
    """The user's indexes of one batch, as PyTorch's map-style fetcher iterates them to
    call dataset[index]: each index is in a load span from the moment it is handed out
    until the fetcher asks for the next one (or collate begins)."""
    for index in indexes:
        started = sample_start()
        _open_load(batch, _sample_of(index))
        sample_since(started)
        yield index
        started = sample_start()
        _close_load()
        sample_since(started)


class _TracedIterable:
    """What PyTorch's iterable fetcher iterates instead of the dataset: iter(dataset) is
    called where PyTorch calls it (in a load span of the first batch, as work done there
    is loading), and each next() on the user's iterator is a load span."""

    def __init__(self, dataset, state):
        self.dataset = dataset  # the user's dataset (weak: the user's)
        self.state = state      # the loader state of this process (weak)

    def __iter__(self):
        _open_load(_iterable_label(self.state), UNKNOWN)
        try:
            return _TracedIterator(iter(self.dataset), self.state)
        finally:
            _close_load()


class _TracedIterator:
    """The user's iterator; a class, not a generator, so that StopIteration and every
    other exception pass through as they are."""

    def __init__(self, inner, state):
        self.inner = inner
        self.state = state

    def __iter__(self):
        return self

    def __next__(self):
        _open_load(self.state.fetch_batch, UNKNOWN)
        try:
            return next(self.inner)
        finally:
            _close_load()


def _has_getitems(dataset):
    """PyTorch's own test for a dataset that fetches whole batches."""
    return bool(hasattr(dataset, "__getitems__") and dataset.__getitems__)


class _TracedFetcher:
    """PyTorch's fetcher for one iteration of an instrumented loader, in the process that
    fetches: it sets the index of the batch being fetched, hands the user's indexes to
    PyTorch's fetcher, puts the dataset's transforms in preprocess spans for the time of
    the fetch, and ends a load span left open by an exception."""

    def __init__(self, create, kind, dataset, auto_collation, collate, drop_last):
        self.state = collate.state   # this process's (weak: owned by collate)
        self.dataset = dataset       # the user's (weak)
        self.auto_collation = auto_collation
        self.per_index = auto_collation and not _has_getitems(dataset)
        source = _TracedIterable(dataset, self.state) if self.state.iterable else dataset
        self.inner = create(kind, source, auto_collation, collate, drop_last)  # owned

    def fetch(self, request):
        started = thread_ns()
        swapped = []
        _swap_in_transforms(self.dataset, swapped)
        try:
            indexes = self._indexes(request)
            hooks_since(started)
            return self.inner.fetch(indexes)
        finally:
            started = thread_ns()
            _close_load()
            _restore_transforms(swapped)
            hooks_since(started)

    def _indexes(self, request):
        """The user's indexes for PyTorch's fetcher; opens the load span PyTorch's
        fetcher does not let profopt open per sample."""
        state = self.state
        if state.iterable:
            state.fetch_batch = _iterable_label(state)
            return request
        batch, indexes = request
        state.fetch_batch = batch
        if self.per_index:
            return _traced_indexes(batch, indexes)
        _open_load(batch, UNKNOWN if self.auto_collation else _sample_of(indexes))
        return indexes


class _Collate:
    """The user's collate function as a collate span; returns (batch index, batch). Its
    presence marks the fetchers that profopt wraps."""

    def __init__(self, inner, state):
        self.inner = inner  # the loader's collate_fn (weak: the user's)
        self.state = state  # owned; each worker has its own copy

    def __call__(self, samples):
        started = thread_ns()
        state = self.state
        batch = state.fetch_batch
        _close_load()
        LIB.profopt_stage_begin(_COLLATE, _EMPTY, batch, UNKNOWN)
        hooks_since(started)
        try:
            data = self.inner(samples)
        finally:
            started = thread_ns()
            LIB.profopt_stage_end(_COLLATE, _EMPTY, batch, UNKNOWN)
        if state.iterable:
            state.collated += 1
        LIB.profopt_batch_ready(batch, UNKNOWN)
        _pymem.on_batch_ready()
        hooks_since(started)
        _cost.maybe_report()
        return (batch, data)


def _create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    """Replaces _DatasetKind.create_fetcher: a traced fetcher for profopt's loaders,
    PyTorch's own for every other loader."""
    create = _create_fetcher.original
    if type(collate_fn) is _Collate:
        return _TracedFetcher(create, kind, dataset, auto_collation, collate_fn, drop_last)
    return create(kind, dataset, auto_collation, collate_fn, drop_last)


def _install_fetch_hook():
    """Installs _create_fetcher, once per process (also in each spawned worker, which
    imports this module to unpickle profopt's collate function before fetching). False
    when this version of PyTorch has no such factory."""
    kind = getattr(_torch_dataloader, "_DatasetKind", None)
    current = getattr(kind, "create_fetcher", None)
    if current is None:
        return False
    if getattr(current, "original", None) is None:
        _create_fetcher.original = current
        kind.create_fetcher = staticmethod(_create_fetcher)
    else:
        _create_fetcher.original = current.original  # this module was loaded again
    return True


_FETCH_HOOK = _install_fetch_hook()


def _worker_exit(worker_id):
    """A worker's last events: what profopt cost in it, then its end."""
    _cost.report()
    LIB.profopt_worker_end(worker_id)


class _WorkerInit:
    """Announces a worker (worker_begin, worker_end at its exit), then runs the user's
    worker_init_fn."""

    def __init__(self, inner):
        self.inner = inner  # the user's worker_init_fn or None

    def __call__(self, worker_id):
        LIB.profopt_worker_begin(worker_id)
        multiprocessing.util.Finalize(None, _worker_exit, args=(worker_id,),
                                      exitpriority=100)
        _pymem.on_worker_start()
        _gc.install()
        if self.inner is not None:
            self.inner(worker_id)


class _BatchTagger:
    """The loader's batch sampler (or sampler), yielding (batch, indexes) pairs. Runs in
    the main process; batch counts up across epochs. iter() on it calls iter() on the
    user's sampler at once, as PyTorch does, so a sampler that draws random numbers in
    __iter__ draws them before the loader draws its worker seed."""

    def __init__(self, inner):
        self.inner = inner      # the user's sampler object (weak: the user's)
        self.next_batch = 0
        self.epoch_base = 0     # first batch index of the latest iteration

    def __len__(self):
        return len(self.inner)

    def __iter__(self):
        self.epoch_base = self.next_batch
        return self._generate(iter(self.inner))

    def _generate(self, source):
        for indexes in source:
            batch = self.next_batch
            self.next_batch = batch + 1
            yield (batch, indexes)


def _common_arguments(loader, collate, worker_init):
    arguments = {
        "num_workers": loader.num_workers,
        "collate_fn": collate,
        "pin_memory": loader.pin_memory,
        "timeout": loader.timeout,
        "worker_init_fn": worker_init,
        "multiprocessing_context": loader.multiprocessing_context,
        "generator": loader.generator,
        "persistent_workers": loader.persistent_workers,
    }
    if loader.num_workers > 0 and loader.prefetch_factor is not None:
        arguments["prefetch_factor"] = loader.prefetch_factor
    if getattr(loader, "pin_memory_device", ""):
        arguments["pin_memory_device"] = loader.pin_memory_device
    return arguments


def _traced_loader(loader, state):
    """The DataLoader profopt iterates: the user's objects, profopt's collate and
    worker_init_fn around the user's, and for map-style datasets the batch tagger."""
    collate = _Collate(loader.collate_fn, state)
    arguments = _common_arguments(loader, collate, _WorkerInit(loader.worker_init_fn))
    if state.iterable:
        return DataLoader(loader.dataset, batch_size=loader.batch_size,
                          drop_last=loader.drop_last, **arguments), None
    if loader.batch_sampler is not None:
        tagger = _BatchTagger(loader.batch_sampler)
        return DataLoader(loader.dataset, batch_sampler=tagger, **arguments), tagger
    tagger = _BatchTagger(loader.sampler)
    return DataLoader(loader.dataset, batch_size=None, sampler=tagger, **arguments), tagger


def nominal_batch_size(loader):
    if loader.batch_size is not None:
        return loader.batch_size
    return getattr(loader.batch_sampler, "batch_size", UNKNOWN) or UNKNOWN


def _length(loader):
    """len(loader), or None when it has none (or its dataset's __len__ fails)."""
    try:
        return len(loader)
    except Exception:
        return None


class _Epoch:
    """The iterator of one epoch: the instrumented batches, and len() as PyTorch's
    iterator answers it."""

    def __init__(self, batches, source):
        self.batches = batches  # owned generator
        self.source = source    # PyTorch's iterator (owned by batches)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.batches)

    def __len__(self):
        return len(self.source)


class _Recorder:
    """What instrument() keeps for one DataLoader as long as that loader lives: profopt's
    DataLoader (and so its persistent workers) and the numbering of epochs, steps and
    batches. It does not refer to the user's DataLoader, so the table that holds it,
    keyed weakly by that loader, frees it (and shuts its workers down) with the loader,
    as PyTorch would free the loader's own."""

    def __init__(self, loader, steps):
        self.steps = steps
        self.batch_size = nominal_batch_size(loader)
        self.epoch = -1
        self.next_step = 0
        self.state = _LoaderState(isinstance(loader.dataset, IterableDataset))
        self.wrapped, self.tagger = None, None  # owned; None without the fetch hook
        if _FETCH_HOOK:
            self.wrapped, self.tagger = _traced_loader(loader, self.state)
        else:
            warnings.warn("profopt.instrument: this PyTorch has no DataLoader fetcher "
                          "factory; batches are recorded without their loading spans",
                          RuntimeWarning, stacklevel=4)
        self.next_label = 0  # the index after the highest one received
        self.step_empty = False  # no loop body ran in the open step (see _end_step)
        self.bodies = _api.LoopBodies()  # how long the loop bodies take
        self.resumed_ns = 0  # thread CPU clock when profopt's code got the thread back
        self.front = None  # weak reference to the InstrumentedLoader handed out last

    def epoch_iterator(self, loader):
        """The iterator of the next epoch of loader."""
        self.epoch += 1
        if self.wrapped is None:
            return self._untraced_epoch(loader)
        if self.state.iterable:
            self.state.epoch_base = self.next_label
            self.state.collated = 0
        length = _length(self.wrapped)
        self._mirror_length_call(loader)
        source = iter(self.wrapped)
        expected = self.tagger.epoch_base if self.tagger else self.state.epoch_base
        return _Epoch(self._batches(source, expected, length), source)

    def _mirror_length_call(self, loader):
        """PyTorch warns when an iterable dataset yields more than len(loader) said, if
        the program asked; profopt's own len() call must not make it warn."""
        called = "_IterableDataset_len_called"
        if hasattr(self.wrapped, called):
            setattr(self.wrapped, called, getattr(loader, called, None))

    def _untraced_epoch(self, loader):
        """Without the fetch hook: steps and data waits numbered in the main process."""
        source = iter(loader)
        expected = self.next_label
        return _Epoch(self._batches(enumerate(source, expected), expected,
                                    _length(loader)), source)

    def _batches(self, source, expected, length):
        self.resumed_ns = thread_ns()
        epoch = self.epoch
        LIB.profopt_epoch_begin(epoch)
        consumed = 0
        try:
            while True:
                if length is not None and consumed >= length:
                    item = self._next_unmarked(source)
                else:
                    item = self._next_marked(source, expected)
                if item is None:
                    return
                batch, data = item
                expected = batch + 1
                self.next_label = max(self.next_label, expected)
                consumed += 1
                handed, spans = time.perf_counter(), SPANS.begun
                hooks_since(self.resumed_ns)
                try:
                    yield data
                except GeneratorExit:  # the loop was left during this step
                    self.resumed_ns = thread_ns()
                    self.step_empty = SPANS.begun == spans and \
                        self.bodies.did_nothing(time.perf_counter() - handed)
                    raise
                self.resumed_ns = thread_ns()
                self.bodies.ran(time.perf_counter() - handed)
                self._end_step()
        finally:
            self._end_step()
            LIB.profopt_epoch_end(epoch)

    def _begin_step(self):
        if not self.steps or STATE.loader_step is not None:
            return
        LIB.profopt_step_begin(self.next_step, self.epoch, self.batch_size)
        STATE.loader_step = self

    def _end_step(self):
        if STATE.loader_step is not self:
            return
        STATE.loader_step = None
        if self.step_empty:  # no loop body ran: batch size 0 (not a step), its number free
            self.step_empty = False
            LIB.profopt_step_end(self.next_step, self.epoch, 0)
            return
        _api.record_memory_counters()
        LIB.profopt_step_end(self.next_step, self.epoch, self.batch_size)
        _api.after_step_end()
        _cost.spin_for_tests()
        _cost.maybe_report()
        self.next_step += 1

    def _next_marked(self, source, expected):
        """The next (batch, data) inside a new step and a data wait; None at the end,
        when the step opened for it is closed as a step of no batch."""
        self._begin_step()
        LIB.profopt_stage_begin(_DATA_WAIT, _EMPTY, expected, UNKNOWN)
        hooks_since(self.resumed_ns)
        try:
            item = next(source)
        except StopIteration:
            self.resumed_ns = thread_ns()
            LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, UNKNOWN, UNKNOWN)
            self.step_empty = True
            return None
        except BaseException:
            self.resumed_ns = thread_ns()
            LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, UNKNOWN, UNKNOWN)
            raise
        self.resumed_ns = thread_ns()
        LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, item[0], UNKNOWN)
        return item

    def _next_unmarked(self, source):
        """After the announced number of batches: confirms the end without a step."""
        hooks_since(self.resumed_ns)
        try:
            item = next(source)
        except StopIteration:
            self.resumed_ns = thread_ns()
            return None
        self.resumed_ns = thread_ns()
        self._begin_step()
        return item


class InstrumentedLoader:
    """Iterates like the DataLoader it wraps; each batch is a step (unless steps=False)
    whose data wait is recorded with the batch's index. Every other attribute is the
    original loader's."""

    def __init__(self, loader, recorder):
        self.loader = loader      # the user's DataLoader (owned by the user)
        self.recorder = recorder  # shared by every InstrumentedLoader of this loader

    @property
    def steps(self):
        return self.recorder.steps

    def __getattr__(self, name):
        if name in ("loader", "recorder"):
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        return self.recorder.epoch_iterator(self.loader)


_RECORDERS = weakref.WeakKeyDictionary()  # user's DataLoader -> its _Recorder


def instrument(loader, steps=True):
    """The instrumented iterable of a DataLoader; the same one for the same loader, so
    it may be called in every epoch and persistent workers are kept (and the steps keep
    their numbering even when the previous one was dropped)."""
    if isinstance(loader, InstrumentedLoader):
        return loader
    if not isinstance(loader, DataLoader):
        raise TypeError(f"profopt.instrument: expected a torch DataLoader, got "
                        f"{type(loader).__name__}")
    recorder = _RECORDERS.get(loader)
    if recorder is None or recorder.steps != steps:
        recorder = _Recorder(loader, steps)
        _RECORDERS[loader] = recorder
    front = recorder.front() if recorder.front is not None else None
    if front is None:
        front = InstrumentedLoader(loader, recorder)
        recorder.front = weakref.ref(front)
    return front
