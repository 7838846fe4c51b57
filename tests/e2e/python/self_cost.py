"""A small training loop for self_cost.sh: a DataLoader with one worker over random images,
a small CNN, STEPS steps with the module's loader, model and optimizer hooks. --spin-ms
makes each step's own hook burn that much CPU time (a test-only knob of profopt._cost),
so that the module's cost is a visible share of the step."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

import profopt
from profopt import _cost


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--spin-ms", type=float, default=0)
    args = parser.parse_args()
    torch.manual_seed(1)
    torch.set_num_threads(1)
    _cost.Meter.test_spin_ns = int(args.spin_ms * 1e6)
    data = TensorDataset(torch.randn(args.steps * 8, 3, 32, 32),
                         torch.randint(0, 10, (args.steps * 8,)))
    loader = profopt.instrument(DataLoader(data, batch_size=8, num_workers=1))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(16 * 30 * 30, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for images, labels in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
