#!/usr/bin/env python3
"""periodic_checkpoint: every 25th step also saves a checkpoint inside
profopt.span("checkpoint"): torch.save of the model and optimizer state to a BytesIO,
then 40 ms of waiting (a slow disk's fsync). Expected: a step-outliers finding with
period 25, caused by the checkpoint."""

import io
import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--period", type=int, default=25)
    parser.add_argument("--sync-ms", type=float, default=40.0)


def save_checkpoint(model, optimizer, sync_ms):
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    time.sleep(sync_ms / 1000.0)
    return buffer.tell()


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    checkpoint_steps, checkpoint_ms = [], []
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       checkpoint_period=args.period, checkpoint_steps=checkpoint_steps,
                       checkpoint_ms=checkpoint_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for step, (features, labels) in enumerate(truth.timed(loader, epoch=0)):
            common.train_step(model, optimizer, features, labels)
            if step % args.period == args.period - 1:
                began = time.perf_counter()
                with profopt.span("checkpoint"):
                    save_checkpoint(model, optimizer, args.sync_ms)
                checkpoint_steps.append(step)
                checkpoint_ms.append(round((time.perf_counter() - began) * 1e3, 4))


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("periodic_checkpoint", arguments.truth,
                        lambda truth: train(arguments, truth))
