#!/usr/bin/env python3
"""data_wait_only: a loop that marks its steps with `with profopt.step():` and its data
wait with `with profopt.span("data_wait"):` around next(), and nothing else: the
DataLoader (two workers whose samples each wait 4 ms on I/O) is not instrumented and no
profopt.run records its configuration. The loop waits for data most of each step, but
what the loader does meanwhile is not in the trace. Expected: input-bound with the cause
loader-not-traced, and no predicted step time (a batch's making time is unknown, so any
prediction would be made up)."""

import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--read-ms", type=float, default=4.0)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, sleep_ms=args.read_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers)
    model = common.make_model(256)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       read_ms_per_sample=args.read_ms)
    truth.begin_loop()
    truth.epochs = 1
    batches = iter(loader)
    for _ in range(len(loader)):
        begin = time.perf_counter()
        with profopt.step(epoch=0, batch_size=args.batch_size):
            with profopt.span("data_wait"):
                features, labels = next(batches)
            ready = time.perf_counter()
            common.train_step(model, optimizer, features, labels)
            truth.add_step(0, begin, ready)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("data_wait_only", arguments.truth,
                        lambda truth: train(arguments, truth))
