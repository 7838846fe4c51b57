#!/usr/bin/env python3
"""leak_worker_cache: the dataset decodes each sample once and keeps the result in a dict
that is never bounded (`self.cache[index] = self.decode(index)`), inside 2 DataLoader
workers over one epoch: each worker's memory grows by 32 KiB per sample it reads (256 KiB
per batch of 8, both workers together). Recorded with python_memory=True. Expected:
host-memory-growth in the workers at the /proc slope, naming the line that stores into the
cache (where the samples are kept) and the line in decode() that made them."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

CACHED_BYTES = 32 << 10


class CachedSamples(common.Samples):
    """Samples decoded once and kept: a cache with no bound."""

    def __init__(self, size):
        super().__init__(size)
        self.cache = {}  # filled in whichever process reads: here, the workers

    def decode(self, index):
        return torch.full((CACHED_BYTES // 4,), float(index))

    def __getitem__(self, index):
        features, label = super().__getitem__(index)
        if index not in self.cache:
            self.cache[index] = self.decode(index)
        return features + self.cache[index][:features.numel()] * 0, label


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = CachedSamples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=True)
    model = common.make_model(256)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(
        num_workers=args.workers, batch_size=args.batch_size,
        leak_bytes_per_step=CACHED_BYTES * args.batch_size,
        store_line=common.source_line(__file__, "self.cache[index] = self.decode(index)"),
        decode_line=common.source_line(__file__, "return torch.full("))
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer, python_memory=True):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("leak_worker_cache", arguments.truth,
                        lambda truth: train(arguments, truth))
