#!/usr/bin/env python3
"""hotspots_threads: a training loop fed by a prefetch thread of its own (no DataLoader
workers): the thread prepares each batch in a "preprocess" span, calling three functions
that spend 60%, 30% and 10% of its CPU time (each spins to a deadline of the thread's own
CPU clock), while the main thread trains. Recorded with --stacks (100 Hz). Expected: the
training process's preprocess stage, which only that thread runs, names the three
functions with self shares within 5 points of the design: every thread that runs Python
is sampled on its own CPU clock (docs/sampling.md)."""

import queue
import threading
import time

import torch

import common
import hotspots_workers

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--depth", type=int, default=4, help="batches the thread keeps ready")


def prepare(index, batch_size, records):
    """One batch, made by calling each of the records module's COSTS_MS functions in turn
    on every sample (hotspots_workers': 11 ms of CPU per sample)."""
    values = []
    for sample in range(index * batch_size, (index + 1) * batch_size):
        value = sample
        for name, ms in records.COSTS_MS.items():
            value = getattr(records, name)(value, ms)
        values.append(value)
    features = torch.stack([torch.full((common.FEATURES,), float(v % 7)) for v in values])
    labels = torch.tensor([v % common.CLASSES for v in values])
    return features, labels


def prefetch(batches, steps, batch_size, records):
    for index in range(steps):
        with profopt.span("preprocess", label="prefetch_thread", batch=index):
            batch = prepare(index, batch_size, records)
        batches.put(batch)


def train(args, truth, records=hotspots_workers):
    torch.manual_seed(1)
    torch.set_num_threads(1)
    model = common.make_model(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    costs = records.COSTS_MS
    total_ms = sum(costs.values())
    truth.facts.update(num_workers=0, batch_size=args.batch_size, prefetch_thread=True,
                       designed_self_pct={name: 100.0 * ms / total_ms
                                          for name, ms in costs.items()},
                       dominant_function=max(costs, key=costs.get))
    batches = queue.Queue(maxsize=args.depth)
    with profopt.run(model=model, optimizer=optimizer):
        truth.begin_loop()
        thread = threading.Thread(target=prefetch, name="prefetch",
                                  args=(batches, args.steps, args.batch_size, records))
        thread.start()
        for step in range(args.steps):
            begin = time.perf_counter()
            with profopt.step(step, epoch=0, batch_size=args.batch_size):
                with profopt.span("data_wait"):
                    features, labels = batches.get()
                ready = time.perf_counter()
                common.train_step(model, optimizer, features, labels)
                truth.add_step(0, begin, ready)
        thread.join()


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("hotspots_threads", arguments.truth,
                        lambda truth: train(arguments, truth))
