#!/usr/bin/env python3
"""leak_losses: the training loop keeps every step's loss tensor for a plot at the end
(`losses.append(loss)`, not `loss.item()`), so the main process grows by what each loss
keeps alive, about 22 KiB a step with this model: 9-12 MiB over 400 steps, a few percent
of the process. Recorded with python_memory=True. Expected: host-memory-growth in the main
process at the /proc slope, naming the line that appends (where the losses are kept) and
the line that computed them (where torch created them)."""

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=8)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(224)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       append_line=common.source_line(__file__, "losses.append(loss)"),
                       loss_line=common.source_line(__file__, "loss = F.cross_entropy"))
    losses = []  # for a plot after training
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer, python_memory=True):
        for features, labels in truth.timed(loader, epoch=0):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss)  # the leak: the tensor and what it holds, not loss.item()


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("leak_losses", arguments.truth, lambda truth: train(arguments, truth))
