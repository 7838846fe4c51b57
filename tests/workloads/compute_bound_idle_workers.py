#!/usr/bin/env python3
"""compute_bound_idle_workers: a model heavy enough that the training step (~35 ms)
dominates, fed by 2 DataLoader workers whose samples are cheap, so the workers are idle
most of the time. Expected: not input-bound (host-bound: the loop computes)."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=1280, help="the model's width")


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("compute_bound_idle_workers", arguments.truth,
                        lambda truth: train(arguments, truth))
