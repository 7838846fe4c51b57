#!/usr/bin/env python3
"""level_shift: fine-tuning that unfreezes the backbone two thirds in (a common recipe):
for the first 200 steps only the head trains, then the backbone's gradients are computed
too, so every later step is slower, in backward. 2 workers, 300 steps. Expected: a
level-shift finding at step 200, from the median step before to the median step after as
the script measures them over the same steps, in backward; the 100 later steps are not
reported as slow steps at irregular intervals."""


import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--unfreeze-at", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--width", type=int, default=512)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    backbone = nn.Sequential(nn.Linear(common.FEATURES, args.width), nn.ReLU(),
                             nn.Linear(args.width, args.width), nn.ReLU(),
                             nn.Linear(args.width, args.width), nn.ReLU())
    model = nn.Sequential(backbone, nn.Linear(args.width, common.CLASSES))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    backbone.requires_grad_(False)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       shift_step=args.unfreeze_at, shift_category="backward")
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for step, (features, labels) in enumerate(truth.timed(loader, epoch=0)):
            if step == args.unfreeze_at:
                backbone.requires_grad_(True)
            optimizer.zero_grad()
            F.cross_entropy(model(features), labels).backward()
            optimizer.step()


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("level_shift", arguments.truth, lambda truth: train(arguments, truth))
