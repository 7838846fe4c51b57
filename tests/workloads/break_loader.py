#!/usr/bin/env python3
"""break_loader: an instrumented DataLoader left early with `break`, as scripts that cap
the steps of an epoch do. Epoch 0 checks the cap at the top of the loop body, so the batch
fetched last is never trained on; epoch 1 checks it at the bottom, after the step. 2
workers, 1 ms of I/O per sample. Expected: the steps counted are the loop bodies that
trained, in both epochs."""

import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=150, help="steps per epoch")
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(2 * args.steps * args.batch_size, sleep_ms=1.0)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=True)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       steps_per_epoch=args.steps)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        truth.begin_loop()
        truth.epochs = 2
        # Epoch 0: the cap is checked first; the batch fetched last is not trained on.
        began = time.perf_counter()
        for step, (features, labels) in enumerate(loader):
            ready = time.perf_counter()
            if step == args.steps:
                break
            common.train_step(model, optimizer, features, labels)
            truth.add_step(0, began, ready)
            began = time.perf_counter()
        # Epoch 1: the cap is checked after the step.
        began = time.perf_counter()
        for step, (features, labels) in enumerate(loader):
            ready = time.perf_counter()
            common.train_step(model, optimizer, features, labels)
            truth.add_step(1, began, ready)
            if step == args.steps - 1:
                break
            began = time.perf_counter()


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("break_loader", arguments.truth,
                        lambda truth: train(arguments, truth))
