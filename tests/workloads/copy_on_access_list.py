#!/usr/bin/env python3
"""copy_on_access_list: the dataset is a Python list of 2 million strings, built in the main
process before 4 DataLoader workers fork; each worker reads a shuffled quarter of it. Reading
a string writes its reference count, so each page of strings a worker touches is copied into
the worker (copy-on-access, PyTorch issue 13246): each worker's unique set grows toward the
whole list's size while its resident set stays flat. Expected: worker-copy-on-access, stating
the workers' private growth within 15% of what the script measures from
/proc/PID/smaps_rollup (each worker's Private_Clean + Private_Dirty at its start, from its
worker_init_fn, and at the epoch's end, from the main process); no host-memory-growth.

--storage numpy holds the same strings in one numpy array of fixed-width bytes
(copy_on_access_numpy.py): reading an element copies it out and writes nothing in the
shared buffer, so the workers stay small and no finding is expected."""

import multiprocessing
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

import common

profopt = common.import_profopt()

ITEMS = 2_000_000
WIDTH = 32  # bytes of each item in the numpy storage
CHUNK = 100_000


def item_text(index):
    return f"{index:07d}:the quick brown fox"


def list_storage():
    """2 million distinct str objects, packed together in the main process's heap."""
    return [item_text(index) for index in range(ITEMS)]


def numpy_storage():
    """The same items as one array of fixed-width bytes, built a chunk at a time so that
    no list of all of them is ever alive."""
    return np.concatenate([
        np.array([item_text(index) for index in range(start, min(start + CHUNK, ITEMS))],
                 dtype=f"S{WIDTH}")
        for start in range(0, ITEMS, CHUNK)])


class Items(Dataset):
    """The length of each stored item, as a map-style dataset."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return len(self.items[index])


def private_bytes(pid="self"):
    """Private_Clean + Private_Dirty of /proc/PID/smaps_rollup: the pages only it maps."""
    total = 0
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                total += int(line.split()[1]) * 1024
    return total


class WorkerStart:
    """worker_init_fn: each worker's pid and unique set at its start, into shared arrays
    the main process reads (inherited across fork)."""

    def __init__(self, workers):
        self.pids = multiprocessing.Array("q", workers, lock=False)
        self.private = multiprocessing.Array("q", workers, lock=False)

    def __call__(self, worker_id):
        self.pids[worker_id] = os.getpid()
        self.private[worker_id] = private_bytes()


def options(parser):
    parser.add_argument("--storage", choices=("list", "numpy"), default="list")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1024)


def train(args, truth):
    torch.manual_seed(1)
    items = list_storage() if args.storage == "list" else numpy_storage()
    start = WorkerStart(args.workers)
    loader = DataLoader(Items(items), batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=True,
                        worker_init_fn=start)
    model = nn.Linear(16, common.CLASSES)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    basis = torch.linspace(0.0, 1.0, 16)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for lengths in truth.timed(loader, epoch=0):
            features = lengths.float().unsqueeze(1) * basis
            optimizer.zero_grad()
            F.cross_entropy(model(features), lengths % common.CLASSES).backward()
            optimizer.step()
        # The epoch is over and the persistent workers still live: their unique sets now.
        end = [private_bytes(pid) for pid in start.pids]
    growth = [after - before for before, after in zip(start.private, end)]
    truth.facts.update(
        storage=args.storage, num_workers=args.workers, items=ITEMS,
        worker_private_start_bytes=list(start.private), worker_private_end_bytes=end,
        private_growth_bytes=sum(growth),
        private_growth_per_worker_bytes=sum(growth) / args.workers)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload(f"copy_on_access_{arguments.storage}", arguments.truth,
                        lambda truth: train(arguments, truth))
