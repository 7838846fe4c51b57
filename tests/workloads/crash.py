#!/usr/bin/env python3
"""crash: an exception ends the training at step 60 of 100 (like a NaN check or a bad
sample), so the program exits with status 1 and its last step never ends. The tracer
discards nothing. Expected: the run is reported as ended by an exception, and no finding
claims the tracer lost data or advises larger trace buffers."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--crash-at", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, sleep_ms=0.5)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       crash_at_step=args.crash_at)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for step, (features, labels) in enumerate(truth.timed(loader, epoch=0)):
            loss = common.train_step(model, optimizer, features, labels)
            if step == args.crash_at:
                raise FloatingPointError(f"loss {loss.item():.4f} at step {step}: "
                                         "stopping (a simulated divergence)")


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("crash", arguments.truth, lambda truth: train(arguments, truth))
