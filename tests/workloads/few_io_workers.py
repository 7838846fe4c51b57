#!/usr/bin/env python3
"""few_io_workers: one DataLoader worker whose samples each wait 5 ms on I/O (sleep), so
a batch takes far longer to load than the ~8 ms training step. Expected: input-bound
with too few workers, the loading I/O-like, and a what-if recommending more workers;
the harness reruns this script with the recommended --workers and compares the step
time it measures with the predicted one."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--read-ms", type=float, default=5.0)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, sleep_ms=args.read_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(768)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       read_ms_per_sample=args.read_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("few_io_workers", arguments.truth,
                        lambda truth: train(arguments, truth))
