#!/usr/bin/env python3
"""break_step_api: a loop marked with `with profopt.step():` around its whole body (a
plain DataLoader, no profopt.instrument) that caps every epoch with `break` at the top of
the body, inside the step: the batch fetched last is never trained on. 3 epochs of 100
steps, num_workers=0. Expected: the steps counted are the loop bodies that trained (300),
not one more per epoch."""

import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100, help="steps per epoch")
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(2 * args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=0, batch_size=args.batch_size,
                       steps_per_epoch=args.steps)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        truth.begin_loop()
        for epoch in range(args.epochs):
            truth.epochs = epoch + 1
            for step, (features, labels) in enumerate(loader):
                begin = time.perf_counter()  # the step does not hold the data wait
                with profopt.step(epoch=epoch, batch_size=args.batch_size):
                    if step == args.steps:
                        break
                    common.train_step(model, optimizer, features, labels)
                    truth.add_step(epoch, begin, begin)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("break_step_api", arguments.truth,
                        lambda truth: train(arguments, truth))
