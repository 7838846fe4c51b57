#!/usr/bin/env python3
"""nonpersistent_many_epochs: 2 DataLoader workers with PyTorch's default
persistent_workers=False over 10 short epochs of 8 batches, so the workers exit at the
end of every epoch and 2 new ones start. Expected: no host-memory growth (the RSS of
exited workers is gone), no more workers or CPU than were alive at once. With
--persistent the same training keeps its workers; the harness reruns it so to measure
what restarting the workers costs per epoch."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batches", type=int, default=8, help="batches per epoch")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--read-ms", type=float, default=2.0)
    parser.add_argument("--persistent", action="store_true",
                        help="persistent_workers=True (the rerun)")


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.batches * args.batch_size, sleep_ms=args.read_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=args.persistent)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       persistent_workers=args.persistent,
                       batches_per_epoch=args.batches)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for epoch in range(args.epochs):
            for features, labels in truth.timed(loader, epoch):
                common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("nonpersistent_many_epochs", arguments.truth,
                        lambda truth: train(arguments, truth))
