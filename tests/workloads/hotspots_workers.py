#!/usr/bin/env python3
"""hotspots_workers: a loader whose __getitem__ calls three functions that spend 60%, 30%
and 10% of its CPU time (each spins to a deadline of its own thread's CPU clock: 6.6, 3.3
and 1.1 ms per sample), in 2 forked DataLoader workers, recorded with --stacks (100 Hz).
Expected: the workers' load stage names the three functions with self shares within 5
points of the design (docs/sampling.md). hotspots_main runs the same with num_workers=0:
the training loop's load stage then shows the same shares."""

import time

import torch
from torch.utils.data import DataLoader, Dataset

import common

profopt = common.import_profopt()

# Per-sample CPU cost of each function, in ms of the thread's CPU clock: 60/30/10%. The
# total (11 ms) is no multiple of the 10 ms sampling period, so samples do not alias. The
# three functions are alike on purpose: each spins in its own frame, so that its time is
# its self time (a shared helper would take it).
COSTS_MS = {"decode_record": 6.6, "augment_record": 3.3, "normalize_record": 1.1}


def decode_record(seed, ms):
    deadline = time.thread_time_ns() + int(ms * 1e6)
    value = seed
    while time.thread_time_ns() < deadline:
        for step in range(64):
            value = (value * 31 + step) & 0xFFFF
    return value


def augment_record(seed, ms):
    deadline = time.thread_time_ns() + int(ms * 1e6)
    value = seed
    while time.thread_time_ns() < deadline:
        for step in range(64):
            value = (value * 17 + step) & 0xFFFF
    return value


def normalize_record(seed, ms):
    deadline = time.thread_time_ns() + int(ms * 1e6)
    value = seed
    while time.thread_time_ns() < deadline:
        for step in range(64):
            value = (value * 13 + step) & 0xFFFF
    return value


class ThreeCosts(Dataset):
    """Samples whose loading costs 11 ms of CPU in three functions of designed shares."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        value = decode_record(index, COSTS_MS["decode_record"])
        value = augment_record(value, COSTS_MS["augment_record"])
        value = normalize_record(value, COSTS_MS["normalize_record"])
        return torch.full((common.FEATURES,), float(value % 7)), index % common.CLASSES


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)


def train_loading(args, truth, dataset, costs_ms):
    """Trains from dataset in args.workers workers; the truth: the designed shares of
    costs_ms (function name: ms per sample) and the largest."""
    torch.manual_seed(1)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers)
    model = common.make_model(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    total_ms = sum(costs_ms.values())
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       designed_self_pct={name: 100.0 * ms / total_ms
                                          for name, ms in costs_ms.items()},
                       dominant_function=max(costs_ms, key=costs_ms.get))
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


def train(args, truth):
    train_loading(args, truth, ThreeCosts(args.steps * args.batch_size), COSTS_MS)


def main(workers):
    description = __doc__.split("\n")[0]
    arguments = common.parse_args(description, options)
    if workers is not None:
        arguments.workers = workers
    name = "hotspots_workers" if arguments.workers else "hotspots_main"
    common.run_workload(name, arguments.truth, lambda truth: train(arguments, truth))


if __name__ == "__main__":
    main(None)
