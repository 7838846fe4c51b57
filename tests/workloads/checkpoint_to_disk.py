#!/usr/bin/env python3
"""checkpoint_to_disk: every 25th step saves the model and optimizer state to a file with
torch.save and fsync, as training scripts do, with no profopt span around it: profopt sees
only slower steps. 2 workers, 200 steps. Expected: a periodic step-outliers finding, period
25, whose slow steps are the checkpoint steps (as many, at the time per stall the script
measures), in every run."""

import os
import tempfile
import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--period", type=int, default=25)


def save_checkpoint(model, optimizer, path):
    with open(path, "wb") as out:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, out)
        out.flush()
        os.fsync(out.fileno())


def train(args, truth, directory):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(768)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    checkpoint_steps, checkpoint_ms = [], []
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       checkpoint_period=args.period, checkpoint_steps=checkpoint_steps,
                       checkpoint_ms=checkpoint_ms)
    path = os.path.join(directory, "checkpoint.pt")
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for step, (features, labels) in enumerate(truth.timed(loader, epoch=0)):
            common.train_step(model, optimizer, features, labels)
            if step % args.period == args.period - 1:
                began = time.perf_counter()
                save_checkpoint(model, optimizer, path)
                checkpoint_steps.append(step)
                checkpoint_ms.append(round((time.perf_counter() - began) * 1e3, 4))


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    with tempfile.TemporaryDirectory(prefix="profopt-checkpoint.") as scratch:
        common.run_workload("checkpoint_to_disk", arguments.truth,
                            lambda truth: train(arguments, truth, scratch))
