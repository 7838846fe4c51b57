"""profopt.instrument(): follows each batch of a PyTorch DataLoader from the worker that
loads it to the training step that consumes it.

How batch indexes are known:
- Map-style datasets: the batch sampler (or, without batching, the sampler) is wrapped in
  the main process so that it yields (batch, index) pairs; batch counts up across epochs.
  The dataset wrapper unpacks the pair in whichever process runs the fetch, so load,
  preprocess and collate carry the exact index whatever worker PyTorch picks.
- Iterable datasets: PyTorch gives no index to workers, so each worker numbers its own
  batches: batch = epoch_base + k * num_workers + worker_id for its k-th batch, which is
  PyTorch's round-robin order while every worker still has data. The index travels with
  the batch (collate returns it beside the data), so the main loop's data wait carries
  the exact index even when the order differs.
The data, its order and the random number streams are those of the original loader: the
same sampler objects, collate function and worker seeds are used.
"""

import multiprocessing.util
import weakref

from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

from . import _api
from ._api import LIB, STATE, Stage, UNKNOWN

_LOAD = int(Stage.LOAD)
_PREPROCESS = int(Stage.PREPROCESS)
_COLLATE = int(Stage.COLLATE)
_DATA_WAIT = int(Stage.DATA_WAIT)
_EMPTY = b""
_TRANSFORM_ATTRIBUTES = ("transform", "transforms", "target_transform")


class _OpenLoad:
    """The sample being fetched on this process's fetching thread: (batch, sample) or
    None, and whether its load span is still open. A worker fetches on one thread; with
    num_workers=0 the main thread does."""

    current = None
    load_open = False


class _LoaderState:
    """Numbering shared by the wrappers of one instrumented loader. In a forked worker
    this is the worker's own copy."""

    def __init__(self, iterable):
        self.iterable = iterable
        self.fetch_batch = UNKNOWN  # map-style: the batch the current fetch belongs to
        self.epoch_base = 0         # iterable: first index of this epoch's numbering
        self.collated = 0           # iterable: batches collated by this process


def _local_state(state):
    """The state of the loader in this process: a spawned worker's dataset copy holds
    its own, which the separately pickled collate and init functions must share."""
    info = get_worker_info()
    if info is not None and isinstance(info.dataset, (_MapDataset, _IterDataset)):
        return info.dataset.profopt_state
    return state


def _iterable_label(state):
    info = get_worker_info()
    if info is None:
        return state.epoch_base + state.collated
    return state.epoch_base + state.collated * info.num_workers + info.id


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
        batch, sample = open_load
        if _OpenLoad.load_open:
            LIB.profopt_stage_end(_LOAD, _EMPTY, batch, sample)
            _OpenLoad.load_open = False
        LIB.profopt_stage_begin(_PREPROCESS, _EMPTY, batch, sample)
        _OpenLoad.current = None
        try:
            return self.inner(*args, **kwargs)
        finally:
            _OpenLoad.current = open_load
            LIB.profopt_stage_end(_PREPROCESS, _EMPTY, batch, sample)

    def __getattr__(self, name):
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self):
        return repr(self.inner)


def _trace_transforms(dataset, depth=0):
    """Wraps the transform attributes of dataset and of the datasets it wraps (Subset,
    ConcatDataset), once."""
    if dataset is None or depth > 3:
        return
    for name in _TRANSFORM_ATTRIBUTES:
        current = getattr(dataset, name, None)
        if current is None or not callable(current) or isinstance(current, _TracedTransform):
            continue
        try:
            setattr(dataset, name, _TracedTransform(current))
        except Exception:
            pass  # a read-only attribute: its time stays inside load
    _trace_transforms(getattr(dataset, "dataset", None), depth + 1)
    for inner in getattr(dataset, "datasets", None) or ():
        _trace_transforms(inner, depth + 1)


def _open_load(batch, sample):
    _OpenLoad.current = (batch, sample)
    _OpenLoad.load_open = True
    LIB.profopt_stage_begin(_LOAD, _EMPTY, batch, sample)


def _close_load(batch, sample):
    _OpenLoad.current = None
    if _OpenLoad.load_open:
        _OpenLoad.load_open = False
        LIB.profopt_stage_end(_LOAD, _EMPTY, batch, sample)


def _traced_get(dataset, batch, index):
    sample = index if type(index) is int else UNKNOWN
    _open_load(batch, sample)
    try:
        return dataset[index]
    finally:
        _close_load(batch, sample)


class _MapDataset(Dataset):
    """The user's map-style dataset, indexed by (batch, index) pairs."""

    def __init__(self, inner, state):
        self.inner = inner                # the user's dataset (weak: the user's)
        self.profopt_state = state        # shared with the loader's other wrappers

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, tagged):
        batch, index = tagged
        self.profopt_state.fetch_batch = batch
        return _traced_get(self.inner, batch, index)


class _MapDatasetBatched(_MapDataset):
    """A map-style dataset with __getitems__: the whole batch is one load span."""

    def __getitems__(self, tagged):
        batch = tagged[0][0] if tagged else UNKNOWN
        self.profopt_state.fetch_batch = batch
        _open_load(batch, UNKNOWN)
        try:
            return self.inner.__getitems__([index for _, index in tagged])
        finally:
            _close_load(batch, UNKNOWN)


class _IterDataset(IterableDataset):
    """The user's iterable dataset; each next() on it is a load span."""

    def __init__(self, inner, state):
        self.inner = inner
        self.profopt_state = state

    def __iter__(self):
        state = self.profopt_state
        source = iter(self.inner)
        while True:
            batch = _iterable_label(state)
            _open_load(batch, UNKNOWN)
            try:
                item = next(source)
            except StopIteration:
                return
            finally:
                _close_load(batch, UNKNOWN)
            yield item


class _Collate:
    """The user's collate function as a collate span; returns (batch index, batch)."""

    def __init__(self, inner, state):
        self.inner = inner  # the loader's collate_fn
        self.state = state

    def __call__(self, samples):
        state = _local_state(self.state)
        batch = _iterable_label(state) if state.iterable else state.fetch_batch
        LIB.profopt_stage_begin(_COLLATE, _EMPTY, batch, UNKNOWN)
        try:
            data = self.inner(samples)
        finally:
            LIB.profopt_stage_end(_COLLATE, _EMPTY, batch, UNKNOWN)
        if state.iterable:
            state.collated += 1
        LIB.profopt_batch_ready(batch, UNKNOWN)
        return (batch, data)


class _WorkerInit:
    """Announces a worker (worker_begin, worker_end at its exit), then runs the user's
    worker_init_fn."""

    def __init__(self, inner):
        self.inner = inner  # the user's worker_init_fn or None

    def __call__(self, worker_id):
        LIB.profopt_worker_begin(worker_id)
        multiprocessing.util.Finalize(None, LIB.profopt_worker_end, args=(worker_id,),
                                      exitpriority=100)
        if self.inner is not None:
            self.inner(worker_id)


class _BatchTagger:
    """The loader's batch sampler (or sampler), yielding (batch, index) pairs. Runs in
    the main process; batch counts up across epochs."""

    def __init__(self, inner, batched):
        self.inner = inner      # the user's sampler object (shared, so the same RNG use)
        self.batched = batched
        self.next_batch = 0
        self.epoch_base = 0     # first batch index of the latest iteration

    def __len__(self):
        return len(self.inner)

    def __iter__(self):
        self.epoch_base = self.next_batch
        return self._generate()

    def _generate(self):
        for item in self.inner:
            batch = self.next_batch
            self.next_batch = batch + 1
            if self.batched:
                yield [(batch, index) for index in item]
            else:
                yield (batch, item)


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


def nominal_batch_size(loader):
    if loader.batch_size is not None:
        return loader.batch_size
    return getattr(loader.batch_sampler, "batch_size", UNKNOWN) or UNKNOWN


class InstrumentedLoader:
    """Iterates like the DataLoader it wraps; each batch is a step (unless steps=False)
    whose data wait is recorded with the batch's index. Other attributes are the
    original loader's."""

    def __init__(self, loader, steps=True):
        self.loader = loader  # the user's DataLoader (owned by the user)
        self.steps = steps
        self.epoch = -1
        self.next_step = 0
        self.batch_size = nominal_batch_size(loader)
        iterable = isinstance(loader.dataset, IterableDataset)
        self._state = _LoaderState(iterable)
        self._tagger = None
        self._next_label = 0  # iterable: the index after the highest one received
        self._step_empty = False  # the open step received no batch (end of the data)
        _trace_transforms(loader.dataset)
        collate = _Collate(loader.collate_fn, self._state)
        arguments = _common_arguments(loader, collate, _WorkerInit(loader.worker_init_fn))
        if iterable:
            dataset = _IterDataset(loader.dataset, self._state)
            self._wrapped = DataLoader(dataset, batch_size=loader.batch_size,
                                       drop_last=loader.drop_last, **arguments)
        else:
            self._wrapped = self._wrap_map_style(loader, arguments)

    def _wrap_map_style(self, loader, arguments):
        batched = loader.batch_sampler is not None
        wrapper = _MapDatasetBatched if getattr(loader.dataset, "__getitems__", None) \
            else _MapDataset
        dataset = wrapper(loader.dataset, self._state)
        if batched:
            self._tagger = _BatchTagger(loader.batch_sampler, True)
            return DataLoader(dataset, batch_sampler=self._tagger, **arguments)
        self._tagger = _BatchTagger(loader.sampler, False)
        return DataLoader(dataset, batch_size=None, sampler=self._tagger, **arguments)

    def __getattr__(self, name):
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __len__(self):
        return len(self.loader)

    def _known_length(self):
        try:
            return len(self._wrapped)
        except TypeError:
            return None

    def __iter__(self):
        self.epoch += 1
        if self._state.iterable:
            self._state.epoch_base = self._next_label
            self._state.collated = 0
        source = iter(self._wrapped)
        expected = self._tagger.epoch_base if self._tagger else self._state.epoch_base
        return self._batches(source, expected, self._known_length())

    def _batches(self, source, expected, length):
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
                self._next_label = max(self._next_label, expected)
                consumed += 1
                yield data
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
        _api.record_memory_counters()
        size = 0 if self._step_empty else self.batch_size
        LIB.profopt_step_end(self.next_step, self.epoch, size)
        self._step_empty = False
        self.next_step += 1

    def _next_marked(self, source, expected):
        """The next (batch, data) inside a new step and a data wait; None at the end,
        when the step opened for it is closed as a step of no batch."""
        self._begin_step()
        LIB.profopt_stage_begin(_DATA_WAIT, _EMPTY, expected, UNKNOWN)
        try:
            item = next(source)
        except StopIteration:
            LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, UNKNOWN, UNKNOWN)
            self._step_empty = True
            return None
        except BaseException:
            LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, UNKNOWN, UNKNOWN)
            raise
        LIB.profopt_stage_end(_DATA_WAIT, _EMPTY, item[0], UNKNOWN)
        return item

    def _next_unmarked(self, source):
        """After the announced number of batches: confirms the end without a step."""
        try:
            item = next(source)
        except StopIteration:
            return None
        self._begin_step()
        return item


_INSTRUMENTED = weakref.WeakKeyDictionary()


def instrument(loader, steps=True):
    """The instrumented iterable of a DataLoader; the same one for the same loader, so
    it may be called in every epoch and persistent workers are kept."""
    if isinstance(loader, InstrumentedLoader):
        return loader
    if not isinstance(loader, DataLoader):
        raise TypeError(f"profopt.instrument: expected a torch DataLoader, got "
                        f"{type(loader).__name__}")
    existing = _INSTRUMENTED.get(loader)
    if existing is None or existing.steps != steps:
        existing = InstrumentedLoader(loader, steps)
        _INSTRUMENTED[loader] = existing
    return existing
