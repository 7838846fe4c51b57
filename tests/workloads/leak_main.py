#!/usr/bin/env python3
"""leak_main: the training loop keeps a 1 MiB tensor alive per step (a history of
per-step outputs that is never cleared), so the main process's memory grows by a known
number of bytes per step. 2 DataLoader workers feed it. Expected: host-memory-growth,
attributed to the main process, at the slope the script measures in /proc."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

LEAK_BYTES = 1 << 20


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       leak_bytes_per_step=LEAK_BYTES)
    history = []  # the leak: one tensor per step, never released
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            loss = common.train_step(model, optimizer, features, labels)
            history.append(torch.full((LEAK_BYTES // 4,), float(loss.item())))


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("leak_main", arguments.truth, lambda truth: train(arguments, truth))
