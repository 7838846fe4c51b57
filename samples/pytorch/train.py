#!/usr/bin/env python3
"""A real PyTorch training loop on the CPU, instrumented with profopt.

A synthetic image dataset (deterministic from --seed), transforms written with torch
ops, a small CNN and SGD. Flags make the input pipeline slow in chosen ways so that
profopt-analyze has something to find:

    --slow-transform-ms N   each sample's transform burns N ms of CPU (preprocess)
    --slow-read-ms N        each sample's read waits N ms, like slow storage (load)
    --leak                  keeps a 4 MiB tensor alive per step (host memory growth)

The profopt part is three lines (marked "profopt" below); --no-profopt runs without them.
Run it under a recording:  profopt-record -o trace -- python3 train.py --workers 2
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, IterableDataset

IMAGE_SIZE = 32
CLASSES = 10
LEAK_BYTES = 4 << 20


def make_image(seed, index):
    """A deterministic 3x32x32 image whose pattern depends on its class."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + index)
    label = index % CLASSES
    image = torch.rand(3, IMAGE_SIZE, IMAGE_SIZE, generator=generator) * 0.5
    row = (label * 3) % IMAGE_SIZE
    image[label % 3, row:row + 3, :] += 0.25
    return image, label


def burn_cpu(milliseconds):
    """Really costs milliseconds of CPU time, on a throwaway tensor."""
    if milliseconds <= 0:
        return
    deadline = time.thread_time() + milliseconds / 1000.0
    scratch = torch.ones(64, 64)
    while time.thread_time() < deadline:
        scratch = torch.tanh(scratch @ scratch * 0.01)


class Augment:
    """Per-sample transforms with torch ops: flip chosen by the index, normalisation."""

    def __init__(self, slow_ms):
        self.slow_ms = slow_ms
        self.mean = torch.tensor([0.5, 0.5, 0.5]).view(3, 1, 1)
        self.std = torch.tensor([0.3, 0.3, 0.3]).view(3, 1, 1)

    def __call__(self, image, index):
        burn_cpu(self.slow_ms)
        if index % 2:
            image = torch.flip(image, dims=[2])
        return (image - self.mean) / self.std


class SyntheticImages(Dataset):
    """Map-style: sample i is the same image for a given seed, whatever the process."""

    def __init__(self, size, seed, slow_read_ms, slow_transform_ms):
        self.size = size
        self.seed = seed
        self.slow_read_ms = slow_read_ms
        self.transform = Augment(slow_transform_ms)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.slow_read_ms > 0:
            time.sleep(self.slow_read_ms / 1000.0)
        image, label = make_image(self.seed, index)
        return self.transform(image, index), label


class SyntheticImageStream(IterableDataset):
    """Iterable: the same samples as SyntheticImages, split between the workers."""

    def __init__(self, size, seed, slow_read_ms, slow_transform_ms):
        self.dataset = SyntheticImages(size, seed, slow_read_ms, slow_transform_ms)
        self.transform = None

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        first, stride = (0, 1) if info is None else (info.id, info.num_workers)
        for index in range(first, len(self.dataset), stride):
            yield self.dataset[index]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def stack_batch(samples):
    """A collate function of the user's own (the same result as default_collate)."""
    images, labels = zip(*samples)
    return torch.stack(images), torch.tensor(labels)


def one_thread_per_worker(worker_id):
    torch.set_num_threads(1)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--samples", type=int, default=512, help="dataset size")
    parser.add_argument("--slow-transform-ms", type=float, default=0.0)
    parser.add_argument("--slow-read-ms", type=float, default=0.0)
    parser.add_argument("--leak", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterable", action="store_true", help="iterable-style dataset")
    parser.add_argument("--persistent-workers", action="store_true")
    parser.add_argument("--custom-collate", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--no-profopt", action="store_true", help="run uninstrumented")
    parser.add_argument("--print-losses", action="store_true")
    return parser.parse_args(argv)


def make_loader(args):
    kind = SyntheticImageStream if args.iterable else SyntheticImages
    dataset = kind(args.samples, args.seed, args.slow_read_ms, args.slow_transform_ms)
    options = {}
    if not args.iterable:
        options["shuffle"] = True
        options["generator"] = torch.Generator().manual_seed(args.seed)
    if args.custom_collate:
        options["collate_fn"] = stack_batch
    return DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                      worker_init_fn=one_thread_per_worker,
                      persistent_workers=args.persistent_workers and args.workers > 0,
                      **options)


def train(args, loader, model, optimizer):
    leaked = []
    step = 0
    while step < args.steps:
        for images, labels in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            if args.leak:
                leaked.append(torch.empty(LEAK_BYTES // 4).fill_(step))
            if args.print_losses:
                print(f"step {step} loss {loss.item():.8f}", flush=True)
            step += 1
            if step >= args.steps:
                break
    return step


def import_profopt():
    try:
        import profopt
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "tracepoints", "python"))
        import profopt
    return profopt


def main(argv):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    loader = make_loader(args)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    started = time.monotonic()
    if args.no_profopt:
        steps = train(args, loader, model, optimizer)
    else:
        profopt = import_profopt()                                       # profopt (1)
        loader = profopt.instrument(loader)                              # profopt (2)
        with profopt.run(loader=loader, model=model, optimizer=optimizer):  # profopt (3)
            steps = train(args, loader, model, optimizer)
    elapsed = time.monotonic() - started
    print(f"trained {steps} steps in {elapsed:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
