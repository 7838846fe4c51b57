#!/usr/bin/env python3
"""memory_plateau: the dataset keeps every sample it decodes (32 KiB each) in a cache, and
the sampler goes over its 2080 samples more than once (3200 draws, in order, batch 8,
num_workers=0): the main process grows by 65 MiB over the first 260 steps, while the cache
fills, and then stays for the last 140, which the cache serves. A cache of a dataset that
fits is not a leak. Its rise is large (a fifth of the process) and a straight line through
the whole run fits it well (R^2 about 0.9), which is what resident-set thresholds saw.
Expected: no host-memory-growth."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

CACHED_BYTES = 32 << 10


class CachedSamples(common.Samples):
    """Samples decoded once and kept: all of them fit."""

    def __init__(self, size):
        super().__init__(size)
        self.cache = {}

    def __getitem__(self, index):
        if index not in self.cache:
            features, label = super().__getitem__(index)
            self.cache[index] = (features, label, torch.full((CACHED_BYTES // 4,), 1.0))
        features, label, _ = self.cache[index]
        return features, label


def options(parser):
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--distinct", type=int, default=260,
                        help="batches of distinct samples (the cache's size)")
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    samples = args.distinct * args.batch_size
    dataset = CachedSamples(samples)
    order = [draw % samples for draw in range(args.steps * args.batch_size)]
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=order, num_workers=0)
    model = common.make_model(256)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=0, batch_size=args.batch_size,
                       cache_full_step=args.distinct, cached_bytes_per_step=CACHED_BYTES *
                       args.batch_size)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("memory_plateau", arguments.truth,
                        lambda truth: train(arguments, truth))
