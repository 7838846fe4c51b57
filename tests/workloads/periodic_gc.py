#!/usr/bin/env python3
"""periodic_gc: the script turns Python's automatic garbage collection off and collects
every 50 steps (gc.disable() and gc.collect(), as long training jobs do), over about a
300,000 live objects, so each collection takes tens of milliseconds, with no profopt span.
2 workers, 400 steps. Expected: a periodic step-outliers finding, period 50, whose slow
steps are the 8 collections, at the time per stall the script measures, with the objects
each collection freed (each step leaves a list and a dict in a reference cycle: about 100
per collection, as gc.collect() counts them) and the gc.freeze() advice (few objects
freed: the time goes to walking live ones)."""

import gc
import time

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--period", type=int, default=50)
    parser.add_argument("--objects", type=int, default=150_000,
                        help="live objects the collector walks (each a list and a dict)")


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # A long-lived index of the kind a job keeps (vocabularies, metadata), made before
    # the workers start, so they share it.
    kept = [[index, {"id": index}] for index in range(args.objects)]
    checkpoint_steps, checkpoint_ms = [], []  # "checkpoint": the periodic stall
    found = []  # what each collection found unreachable (gc.collect()'s count)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       checkpoint_period=args.period, checkpoint_steps=checkpoint_steps,
                       checkpoint_ms=checkpoint_ms, live_objects=len(kept),
                       collections_found=found)
    gc.disable()
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for step, (features, labels) in enumerate(truth.timed(loader, epoch=0)):
            common.train_step(model, optimizer, features, labels)
            # a little garbage only the collector frees: a list and a dict in a cycle
            cycle = [step]
            cycle.append({"cycle": cycle})
            del cycle
            if step % args.period == args.period - 1:
                began = time.perf_counter()
                found.append(gc.collect())
                checkpoint_steps.append(step)
                checkpoint_ms.append(round((time.perf_counter() - began) * 1e3, 4))
    gc.enable()


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("periodic_gc", arguments.truth, lambda truth: train(arguments, truth))
