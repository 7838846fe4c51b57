#!/usr/bin/env python3
"""unbalanced_loader: two DataLoader workers, of which worker 1 reads five times slower
than worker 0 (its samples each wait 5 x 4 ms on I/O, under the span label
"slow_shard"), so the loop, which takes its batches in order, waits for worker 1 every
other step. Expected: a loader-imbalance finding naming worker 1, its stage (load) and
label, the time the loop loses per step, and a predicted step that a rerun with both
workers equally fast (--slow-factor 1) measures."""

import time

import torch
from torch.utils.data import DataLoader, get_worker_info

import common

profopt = common.import_profopt()


class Shards(common.Samples):
    """Samples that wait read_ms on I/O, slow_factor times longer in worker slow_worker."""

    def __init__(self, size, read_ms, slow_factor, slow_worker):
        super().__init__(size)
        self.read_ms = read_ms
        self.slow_factor = slow_factor
        self.slow_worker = slow_worker

    def __getitem__(self, index):
        info = get_worker_info()
        slow = info is not None and info.id == self.slow_worker and self.slow_factor != 1
        with profopt.span("load", "slow_shard" if slow else "shard"):
            time.sleep(self.read_ms * (self.slow_factor if slow else 1) / 1000.0)
        return super().__getitem__(index)


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--read-ms", type=float, default=4.0)
    parser.add_argument("--slow-factor", type=float, default=5.0)
    parser.add_argument("--slow-worker", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=1024)


def train(args, truth):
    torch.manual_seed(1)
    dataset = Shards(args.steps * args.batch_size, args.read_ms, args.slow_factor,
                     args.slow_worker)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers)
    model = common.make_model(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       slow_worker=args.slow_worker, slow_factor=args.slow_factor,
                       slow_label="slow_shard")
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("unbalanced_loader", arguments.truth,
                        lambda truth: train(arguments, truth))
