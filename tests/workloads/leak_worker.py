#!/usr/bin/env python3
"""leak_worker: the dataset's __getitem__ keeps every decoded sample (64 KiB each) in a
cache that is never evicted, inside 2 persistent DataLoader workers, so the workers'
memory grows by 64 KiB per sample (512 KiB per batch of 8) over 3 epochs. Expected:
host-memory-growth attributed to a worker process."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

CACHED_BYTES = 64 << 10


class CachingSamples(common.Samples):
    """Samples whose decoded form is cached on every read, never evicted."""

    def __init__(self, size):
        super().__init__(size)
        self.cache = []  # grows in whichever process reads: here, the workers

    def __getitem__(self, index):
        features, label = super().__getitem__(index)
        self.cache.append(torch.full((CACHED_BYTES // 4,), float(index)))
        return features, label


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40, help="batches per epoch")
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = CachingSamples(args.batches * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=True)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       leak_bytes_per_step=CACHED_BYTES * args.batch_size)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for epoch in range(args.epochs):
            for features, labels in truth.timed(loader, epoch):
                common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("leak_worker", arguments.truth, lambda truth: train(arguments, truth))
