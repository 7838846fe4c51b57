#!/usr/bin/env python3
"""large_collate: each sample is 8 small tensors (a variable-length record) and a
custom collate keeps them as lists, so a batch of 16 is 128 tensors. Each tensor goes
from the worker to the main process through its own shared-memory handle (PyTorch's
default file-descriptor sharing), so receiving a batch that is already collated costs
the loop milliseconds, while the 2 workers' loading and collating take about 1 ms per
batch. Expected: the hand-off is measured as such, not blamed on a worker stage.

Ground truth of the hand-off: the collate function stamps each batch with
time.perf_counter() (CLOCK_MONOTONIC, the same clock in every process) when it is
collated; the part of a step's data wait after both the loop asked for the batch and
the batch was collated is the hand-off."""

import time
from array import array

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def collate_records(samples):
    """Keeps each sample's tensors as a list (no stacking), stamped when collated."""
    parts, labels = zip(*samples)
    return list(parts), torch.tensor(labels), time.perf_counter()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--pieces", type=int, default=8, help="tensors per sample")


def production_ms(dataset, batch_size):
    """What loading and collating one batch costs, measured here before training (the
    median of 5 batches): the workers' own work per batch."""
    times = []
    for batch in range(5):
        began = time.perf_counter()
        collate_records([dataset[batch * batch_size + i] for i in range(batch_size)])
        times.append((time.perf_counter() - began) * 1e3)
    return sorted(times)[2]


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, pieces=args.pieces)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, collate_fn=collate_records)
    model = common.make_model(1024)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    handoff_ms = array("d")  # per step, preallocated growth only (no objects)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       tensors_per_batch=args.pieces * args.batch_size,
                       production_ms_per_batch=round(production_ms(dataset,
                                                                   args.batch_size), 4),
                       handoff_ms=handoff_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for parts, labels, collated_at in truth.timed(loader, epoch=0):
            waited = truth.received - max(truth.asked, collated_at)
            handoff_ms.append(max(0.0, waited) * 1e3)
            features = torch.stack([torch.cat(record)[:common.FEATURES] for record in parts])
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("large_collate", arguments.truth,
                        lambda truth: train(arguments, truth))
