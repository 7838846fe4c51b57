#!/usr/bin/env python3
"""busy_main_decode: num_workers=0 (PyTorch's default) with a CPU decode per sample (2 ms
of zlib inflate, as a PNG decoder spends), so every batch is decoded on the training thread,
on a machine where other programs hold most of the cores: the harness starts two busy loops
outside the recording before it records this and its reruns (run_workload.py, BACKGROUND).
The training thread's time off CPU is waiting for a core, not I/O. Expected: input-bound,
loading in the main process, cpu-bound with the core wait measured (the main thread's
run-queue wait); the recommended num_workers either predicts the rerun (--workers) within
15% or is not predicted, with the reason."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--decode-ms", type=float, default=2.0)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, decode_ms=args.decode_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       decode_cpu_ms_per_sample=args.decode_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("busy_main_decode", arguments.truth,
                        lambda truth: train(arguments, truth))
