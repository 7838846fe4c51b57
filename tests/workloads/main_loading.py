#!/usr/bin/env python3
"""main_loading: the DataLoader's default num_workers=0, with a slow per-sample read
(3 ms of sleep, like slow storage), so every batch is loaded in the main process inside
the loop. Expected: input-bound, cause loading in the main process; the harness reruns it
with the num_workers the what-if recommends (--workers) and compares the step times."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--read-ms", type=float, default=3.0)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, sleep_ms=args.read_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       read_ms_per_sample=args.read_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("main_loading", arguments.truth, lambda truth: train(arguments, truth))
