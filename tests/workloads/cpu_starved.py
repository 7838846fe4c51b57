#!/usr/bin/env python3
"""cpu_starved: 4 DataLoader workers on a 2-core machine, each sample decoded with 8 ms
of CPU (zlib inflate), so the workers and the loop compete for the cores. Expected:
the decoding is CPU work (never "io-like"), and the recommendations agree with each
other (no "set num_workers=6" beside "keep 4"); more workers cannot help when the
cores are saturated."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--decode-ms", type=float, default=8.0)


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
    common.run_workload("cpu_starved", arguments.truth, lambda truth: train(arguments, truth))
