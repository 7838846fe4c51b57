#!/usr/bin/python3
"""profopt.instrument() is invisible to the program: for every documented DataLoader
pattern, the instrumented loader and the plain one give user code the same objects
(get_worker_info().dataset, worker ids, collate inputs, samplers), the same data in the
same order, the same random streams (in the workers and in the main process) and the
same exceptions. Runs without a recording session."""

import multiprocessing
import os
import random
import subprocess
import sys
import warnings
import weakref

import torch
from torch.utils.data import (ConcatDataset, DataLoader, RandomSampler, SequentialSampler,
                              Subset, WeightedRandomSampler)
from torch.utils.data.datapipes.iter import IterableWrapper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))
sys.path.insert(0, HERE)

import profopt  # noqa: E402
from profopt import _loader  # noqa: E402
import invisible_datasets as data  # noqa: E402

RESULTS = {"passed": 0, "failed": 0}


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + text, flush=True)
    RESULTS["passed" if condition else "failed"] += 1


def seed_everything():
    torch.manual_seed(7)
    random.seed(7)
    if data.numpy is not None:
        data.numpy.random.seed(7)


def plain(value):
    """Batches as comparable Python values."""
    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), value.tolist())
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [plain(item) for item in value]
    return value


def error_text(error):
    """The exception's type and message, without the traceback lines that PyTorch quotes
    from a worker: they list the frames, profopt's fetcher among them when instrumented."""
    lines = [line for line in str(error).splitlines() if not line.startswith("  ")]
    return type(error).__name__, "\n".join(lines)


def rng_states(generator):
    states = [torch.get_rng_state().tolist(), random.getstate()]
    if data.numpy is not None:
        states.append(repr(data.numpy.random.get_state()))
    if generator is not None:
        states.append(generator.get_state().tolist())
    return states


def outcome(loader, iterable, epochs):
    """What a loop over iterable sees: batches, the exception that ended it, and the
    random states left in the main process."""
    batches, error = [], None
    try:
        for _ in range(epochs):
            for batch in iterable:
                batches.append(plain(batch))
    except Exception as caught:  # the comparison is the check
        error = error_text(caught)
        # PyTorch re-raises a worker's exception from a frame that the exception refers
        # to; the loader's iterator in that cycle, left to the garbage collector, takes
        # 10 s to stop its workers (with or without profopt). Break the cycle.
        caught.__traceback__ = None
    return batches, error, rng_states(loader.generator)


def compare(name, make, epochs=2, error=False):
    """Runs make()'s loader plainly and instrumented, from the same seeds."""
    seed_everything()
    loader = make()
    expected = outcome(loader, loader, epochs)
    seed_everything()
    loader = make()
    got = outcome(loader, profopt.instrument(loader), epochs)
    exercised = expected[1] is not None if error else expected[0] and expected[1] is None
    detail = "" if got == expected else f": expected {expected[:2]}, got {got[:2]}"
    check(bool(exercised) and got == expected,
          f"{name}: {len(expected[0])} batches{', ' + expected[1][0] if expected[1] else ''}"
          f"{detail[:600]}")


def numbers(size=12, generator_seed=None, **options):
    """A factory of loaders over Numbers; each has its own generator when seeded."""
    def make():
        if generator_seed is not None:
            options["generator"] = torch.Generator().manual_seed(generator_seed)
        return DataLoader(data.Numbers(size), **options)
    return make


def test_worker_init():
    for workers in (1, 2):
        for persistent in (False, True):
            compare(f"map-style, worker_init_fn sets get_worker_info().dataset.offset, "
                    f"{workers} worker(s), persistent={persistent}",
                    numbers(batch_size=3, shuffle=True, num_workers=workers,
                            worker_init_fn=data.set_offset, persistent_workers=persistent))
    for workers in (0, 1, 2):
        compare(f"IterableDataset sharded by worker_init_fn (start/end), {workers} worker(s)",
                lambda: DataLoader(data.ShardedRange(3, 14), batch_size=2,
                                   num_workers=workers,
                                   worker_init_fn=data.shard_range if workers else None))
    compare("IterableDataset sharded, persistent workers, 3 epochs",
            lambda: DataLoader(data.ShardedRange(0, 9), batch_size=2, num_workers=2,
                               worker_init_fn=data.shard_range, persistent_workers=True),
            epochs=3)


def with_sampler(sampler_of, workers, **options):
    def make():
        dataset = data.Numbers(10)
        return DataLoader(dataset, sampler=sampler_of(dataset), num_workers=workers,
                          **options)
    return make


def test_samplers():
    for workers in (0, 2):
        compare(f"RandomSampler with a generator, {workers} workers",
                with_sampler(lambda d: RandomSampler(d, generator=torch.Generator()
                                                     .manual_seed(3)), workers, batch_size=3))
        compare(f"SequentialSampler, {workers} workers",
                with_sampler(SequentialSampler, workers, batch_size=4))
        compare(f"WeightedRandomSampler, {workers} workers",
                with_sampler(lambda d: WeightedRandomSampler(
                    [1.0 + (i % 3) for i in range(len(d))], 15), workers, batch_size=4))
        compare(f"custom batch_sampler drawing in __iter__, {workers} workers",
                lambda: DataLoader(data.Numbers(11), batch_sampler=data.EagerBatches(11, 3),
                                   num_workers=workers))
        compare(f"shuffle with the loader's generator=, {workers} workers",
                numbers(batch_size=5, shuffle=True, num_workers=workers,
                        generator_seed=5))
        compare(f"no automatic batching (batch_size=None), {workers} workers",
                numbers(size=5, batch_size=None, shuffle=True, num_workers=workers))


def test_options():
    for workers in (0, 2):
        compare(f"custom collate_fn, {workers} workers",
                numbers(batch_size=4, shuffle=True, num_workers=workers,
                        collate_fn=data.describe_collate))
        compare(f"drop_last, map-style, {workers} workers",
                numbers(size=11, batch_size=4, drop_last=True, num_workers=workers))
        compare(f"drop_last, iterable, {workers} workers",
                lambda: DataLoader(data.ShardedRange(0, 11), batch_size=4, drop_last=True,
                                   num_workers=workers))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no CUDA: pin_memory is ignored, with a warning
            compare(f"pin_memory=True, {workers} workers",
                    numbers(batch_size=4, shuffle=True, num_workers=workers, pin_memory=True))
    for persistent in (False, True):
        compare(f"persistent_workers={persistent}, 3 epochs",
                numbers(size=10, batch_size=3, shuffle=True, num_workers=2,
                        persistent_workers=persistent, worker_init_fn=data.set_offset),
                epochs=3)


def test_start_methods():
    compare("multiprocessing_context='fork', worker_init_fn",
            numbers(size=8, batch_size=3, shuffle=True, num_workers=2,
                    multiprocessing_context="fork", worker_init_fn=data.set_offset))
    compare("multiprocessing_context='spawn', worker_init_fn, custom collate_fn",
            numbers(size=8, batch_size=3, shuffle=True, num_workers=2,
                    multiprocessing_context="spawn", worker_init_fn=data.set_offset,
                    collate_fn=data.describe_collate), epochs=1)
    compare("multiprocessing_context='forkserver', IterableDataset sharded",
            lambda: DataLoader(data.ShardedRange(0, 7), batch_size=2, num_workers=2,
                               multiprocessing_context="forkserver",
                               worker_init_fn=data.shard_range), epochs=1)
    compare("multiprocessing_context='spawn', IterableDataset sharded, persistent workers",
            lambda: DataLoader(data.ShardedRange(0, 7), batch_size=2, num_workers=2,
                               multiprocessing_context="spawn", persistent_workers=True,
                               worker_init_fn=data.shard_range), epochs=2)


def test_datasets():
    for workers in (0, 2):
        compare(f"a dataset with __getitems__, {workers} workers",
                lambda: DataLoader(data.BatchedNumbers(10), batch_size=4, shuffle=True,
                                   num_workers=workers, collate_fn=data.describe_collate))
        compare(f"Subset and ConcatDataset of datasets with transforms, {workers} workers",
                lambda: DataLoader(ConcatDataset([Subset(data.Numbers(9), [1, 3, 5, 7]),
                                                  data.Numbers(4)]),
                                   batch_size=3, shuffle=True, num_workers=workers))
    compare("IterDataPipe with shuffle and sharding_filter, 2 workers",
            lambda: DataLoader(IterableWrapper(range(10)).shuffle().sharding_filter(),
                               batch_size=2, shuffle=True, num_workers=2))


def test_without_fetch_hook():
    """A PyTorch without the fetcher factory: the batches still are the loader's."""
    saved = getattr(_loader, "_FETCH_HOOK", None)
    if saved is None:
        check(False, "the loader module says whether it wraps PyTorch's fetchers")
        return
    _loader._FETCH_HOOK = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compare("without the fetch hook, worker_init_fn, 2 workers",
                    numbers(batch_size=3, shuffle=True, num_workers=2,
                            worker_init_fn=data.set_offset))
    finally:
        _loader._FETCH_HOOK = saved
    check(len([w for w in caught if "fetcher" in str(w.message)]) == 1,
          "without the fetch hook, one warning says so")


def test_exceptions():
    for workers in (0, 2):
        compare(f"ValueError in __getitem__, {workers} workers",
                lambda: DataLoader(data.Numbers(12, fail_at=7), batch_size=3,
                                   num_workers=workers), error=True)
        compare(f"ValueError in an IterableDataset's __iter__, {workers} workers",
                lambda: DataLoader(data.ShardedRange(0, 12, fail_at=5), batch_size=2,
                                   num_workers=workers), error=True)
        compare(f"TypeError in collate_fn, {workers} workers",
                numbers(batch_size=3, num_workers=workers, collate_fn=data.fail_collate),
                error=True)
        compare(f"IndexError in the sampler, {workers} workers",
                lambda: DataLoader(data.Numbers(4), sampler=data.FailingSampler(),
                                   num_workers=workers), error=True)
    compare("RuntimeError in worker_init_fn, 2 workers",
            numbers(batch_size=3, num_workers=2, worker_init_fn=data.fail_init), error=True)


def exception_of(function):
    try:
        function()
    except Exception as error:
        return error_text(error)
    return None


def test_lengths_and_objects():
    loader = DataLoader(data.Numbers(10), batch_size=3, num_workers=2)
    instrumented = profopt.instrument(loader)
    check(len(instrumented) == len(loader) == 4, f"len() of the loader ({len(instrumented)})")
    iterator, expected = iter(instrumented), iter(loader)
    got = exception_of(lambda: len(iterator)) or len(iterator)
    check(got == len(expected) == 4, f"len() of the loader's iterator ({got})")
    list(iterator)
    check(exception_of(lambda: next(iterator)) == ("StopIteration", ""),
          "next() after the end raises StopIteration")
    unsized = DataLoader(data.Unsized(), batch_size=2)
    got = exception_of(lambda: len(profopt.instrument(unsized)))
    check(got == exception_of(lambda: len(unsized)) and got[0] == "TypeError",
          f"len() of an unsized iterable dataset raises the same TypeError ({got})")
    check([b.tolist() for b in profopt.instrument(unsized)] == [[0, 1], [2, 3], [4]],
          "an unsized iterable dataset yields its batches")
    dataset = data.Numbers(6)
    transform = dataset.transform
    loader = DataLoader(dataset, batch_size=2, num_workers=0)
    instrumented = profopt.instrument(loader)
    list(instrumented)
    check(dataset.transform is transform and type(vars(dataset)["transform"]) is data.Scale,
          "the dataset keeps its own transform object")
    check(instrumented.dataset is dataset and instrumented.sampler is loader.sampler
          and instrumented.batch_sampler is loader.batch_sampler
          and instrumented.collate_fn is loader.collate_fn,
          "the dataset, samplers and collate_fn are the user's objects")


def test_lifetime():
    """Dropping an instrumented loader frees the loader and stops its persistent
    workers at once, as dropping the plain loader does."""
    before = set(multiprocessing.active_children())
    loader = DataLoader(data.Numbers(8), batch_size=4, num_workers=2,
                        persistent_workers=True)
    alive = weakref.ref(loader)
    loader = profopt.instrument(loader)
    for _ in range(2):
        for _ in profopt.instrument(loader):
            pass
    workers = len(set(multiprocessing.active_children()) - before)
    del loader
    left = len(set(multiprocessing.active_children()) - before)
    check(alive() is None and workers == 2 and left == 0,
          f"a dropped instrumented loader is freed with its {workers} persistent workers "
          f"({left} left)")


IMPORT_PROBE = """
import sys
started = []
sys.addaudithook(lambda event, args: started.append(event) if event in (
    "subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec", "os.system") else None)
import profopt
print(profopt.library_path() is not None, started)
"""


def test_import():
    """Importing profopt starts no process: it once ran ldconfig, gcc and ld to look for
    the library (a program's children are its own; under a recording with per-process
    buffers each one also waited for its buffers)."""
    probe = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True,
                           text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                               [os.path.join(ROOT, "tracepoints", "python")]
                               + os.environ.get("PYTHONPATH", "").split(os.pathsep))))
    check(probe.stdout.strip() == "True []",
          f"import profopt loads the library and starts no process "
          f"({probe.stdout.strip()}{probe.stderr.strip()[-300:]})")


def main():
    test_import()
    test_worker_init()
    test_samplers()
    test_options()
    test_datasets()
    test_without_fetch_hook()
    test_exceptions()
    test_lengths_and_objects()
    test_lifetime()
    test_start_methods()
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
