"""Datasets, samplers and functions for test_invisible.py. They live in an importable
module because DataLoader workers started with 'spawn' or 'forkserver' unpickle them.

Every sample says what user code saw: the dataset object PyTorch's get_worker_info()
returned, the worker, and numbers drawn from torch, random and numpy (when installed)
inside the worker, so that any difference the instrumentation makes shows in the data."""

import math
import random

import torch
from torch.utils.data import Dataset, IterableDataset, Sampler, get_worker_info

try:
    import numpy
except ImportError:
    numpy = None


def draws():
    """Numbers from every random stream a worker seeds."""
    drawn = [round(torch.rand(1).item(), 12), round(random.random(), 12)]
    if numpy is not None:
        drawn.append(round(float(numpy.random.rand()), 12))
    return drawn


def seen():
    """Who is asking, as user code inside a DataLoader sees it."""
    info = get_worker_info()
    if info is None:
        return "main"
    return f"worker {info.id}/{info.num_workers} {type(info.dataset).__name__}"


class Scale:
    """A transform the user may inspect: its type is part of each sample."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, value):
        return value * self.factor


class Numbers(Dataset):
    """Map-style: sample i is i + offset, transformed; offset is what worker_init_fn may
    set per worker through get_worker_info().dataset. fail_at raises ValueError there."""

    def __init__(self, size, fail_at=None):
        self.size = size
        self.offset = 0
        self.fail_at = fail_at
        self.transform = Scale(3)
        self.init_seen = "none"  # what worker_init_fn found, set by it

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if index == self.fail_at:
            raise ValueError(f"bad sample {index}")
        info = get_worker_info()
        own = info is None or info.dataset is self
        return {"index": index, "value": self.transform(index + self.offset), "own": own,
                "seen": seen(), "init": self.init_seen, "draws": draws()}


class BatchedNumbers(Numbers):
    """A map-style dataset that fetches whole batches (__getitems__)."""

    def __getitems__(self, indexes):
        return [self[index] for index in indexes] + [{"batched": type(indexes).__name__}]


class ShardedRange(IterableDataset):
    """The IterableDataset of PyTorch's documentation: worker_init_fn splits
    [start, end) between the workers through get_worker_info().dataset."""

    def __init__(self, start, end, fail_at=None):
        self.start = start
        self.end = end
        self.fail_at = fail_at

    def __iter__(self):
        for value in range(self.start, self.end):
            if value == self.fail_at:
                raise ValueError(f"bad value {value}")
            yield {"value": value, "seen": seen(), "draws": draws()}


class Unsized(IterableDataset):
    """An iterable dataset without __len__."""

    def __iter__(self):
        return iter(range(5))


def shard_range(worker_id):
    """worker_init_fn of PyTorch's documentation for ShardedRange."""
    info = get_worker_info()
    dataset = info.dataset
    overall_start, overall_end = dataset.start, dataset.end
    per_worker = int(math.ceil((overall_end - overall_start) / float(info.num_workers)))
    dataset.start = overall_start + worker_id * per_worker
    dataset.end = min(dataset.start + per_worker, overall_end)


def set_offset(worker_id):
    """worker_init_fn configuring a map-style dataset per worker; records what it saw."""
    info = get_worker_info()
    dataset = info.dataset
    dataset.offset = 1000 * (worker_id + 1)
    dataset.init_seen = (f"id {worker_id}=={info.id} {type(dataset).__name__} "
                         f"transform {type(dataset.transform).__name__} {draws()}")


def fail_init(worker_id):
    raise RuntimeError(f"init failed in worker {worker_id}")


def describe_collate(samples):
    """A custom collate_fn: what it received, and a draw of its own."""
    return {"types": [type(sample).__name__ for sample in samples], "samples": samples,
            "draws": draws()}


def fail_collate(samples):
    raise TypeError(f"cannot collate {len(samples)} samples")


class EagerBatches(Sampler):
    """A batch sampler drawing its permutation from the global torch RNG in __iter__
    itself (not lazily), before the DataLoader draws its base seed."""

    def __init__(self, size, batch_size):
        self.size = size
        self.batch_size = batch_size

    def __iter__(self):
        order = torch.randperm(self.size).tolist()
        return iter([order[i:i + self.batch_size] for i in range(0, self.size,
                                                                    self.batch_size)])

    def __len__(self):
        return (self.size + self.batch_size - 1) // self.batch_size


class FailingSampler(Sampler):
    """A sampler that raises after two indexes."""

    def __init__(self):
        pass

    def __iter__(self):
        yield 0
        yield 1
        raise IndexError("sampler exhausted its source")

    def __len__(self):
        return 4
