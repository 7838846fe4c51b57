#!/usr/bin/env python3
"""busy_compute_bound: a loop whose step is its own computation (~8 ms on a quiet core)
fed by 2 DataLoader workers whose samples are cheap, on a machine where other programs
hold most of the cores: the harness starts two busy loops outside the recording before it
records this (run_workload.py, BACKGROUND), and the script measures what they used from
/proc/stat. The loop receives batches that were ready long before it asked for them, slowly
because it waits for a core. Expected: host-bound, never input-bound; the trace quality and
the verdict say what other programs used, within a quarter of a core of the script's
measure."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=16)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("busy_compute_bound", arguments.truth,
                        lambda truth: train(arguments, truth))
