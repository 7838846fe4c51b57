#!/usr/bin/env python3
"""step_api_only: a loop marked only with `with profopt.step():` around its body (no
profopt.instrument, no profopt.run). Loading (PyTorch's default num_workers=0, 1 ms of
I/O per sample) happens outside the steps, and a long evaluation pass without steps
follows every epoch, so most of the run's wall time is outside steps. Expected: the
reported throughput is the one the script measures over its whole loop, and the share
of the run inside steps is reported as such."""

import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40, help="batches per epoch")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--read-ms", type=float, default=1.0)
    parser.add_argument("--eval-batches", type=int, default=60)


def evaluate(model, batches, batch_size):
    """A validation pass: forward only, over batches of fresh samples."""
    dataset = common.Samples(batches * batch_size, sleep_ms=0.5, seed=2)
    with torch.no_grad():
        for features, labels in DataLoader(dataset, batch_size=batch_size):
            model(features).argmax(1).eq(labels).sum()


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.batches * args.batch_size, sleep_ms=args.read_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    eval_s = []
    truth.facts.update(num_workers=0, batch_size=args.batch_size, eval_s=eval_s)
    truth.begin_loop()
    for epoch in range(args.epochs):
        truth.epochs = epoch + 1
        batches = iter(loader)
        while True:
            try:
                features, labels = next(batches)  # outside the step
            except StopIteration:
                break
            begin = time.perf_counter()
            with profopt.step(epoch=epoch, batch_size=args.batch_size):
                common.train_step(model, optimizer, features, labels)
                truth.add_step(epoch, begin, begin)
        began = time.perf_counter()
        evaluate(model, args.eval_batches, args.batch_size)
        eval_s.append(round(time.perf_counter() - began, 6))


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("step_api_only", arguments.truth,
                        lambda truth: train(arguments, truth))
