#!/usr/bin/python3
"""slow_loading.py STEPS CHANGE_STEP: a real PyTorch training loop for the live view
(live.sh real_change). An MLP trains on one intra-op thread (10 to 60 ms a step on 2
cores, quiet to busy) from 2 DataLoader workers whose samples take 0.5 ms of waiting each
(16 per batch: 8 ms a batch, 4 ms a step with two workers: the loop never waits). From
the samples of step CHANGE_STEP on, a sample waits 20 ms (a remote read that slowed
down): 320 ms a batch, 160 ms a step with two workers, and the loop waits for its data
most of each step, even when other programs slow the model to 60 ms a step. The change is at a known step whatever the prefetching: the samples
know which step they are for."""

import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

import profopt

BATCH = 16


class Remote(Dataset):
    def __init__(self, count, change_sample):
        self.count = count
        self.change_sample = change_sample

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        time.sleep(0.020 if index >= self.change_sample else 0.0005)
        features = torch.full((64,), float(index % 7))
        return features, index % 4


def main():
    steps, change_step = int(sys.argv[1]), int(sys.argv[2])
    torch.manual_seed(1)
    torch.set_num_threads(1)
    loader = profopt.instrument(DataLoader(Remote(steps * BATCH, change_step * BATCH),
                                           batch_size=BATCH, num_workers=2,
                                           persistent_workers=True))
    model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(features.repeat(4, 1)),
                                                     labels.repeat(4))
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
