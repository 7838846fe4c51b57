#!/usr/bin/env python3
"""hotspots_native: a loader whose __getitem__ decodes a JPEG with PIL (libjpeg under
Image.load) and then spends half as long in a Python function (hotspots_workers'
augment_record, spinning on its thread's CPU clock), in 2 forked
DataLoader workers, recorded with --stacks (100 Hz of CPU time). The script measures,
before training, how long a decode takes (its thread's CPU clock, the median of 20) and
sets the Python function's cost to half of it: about two thirds of the loading is the
decode. The workers time each decode and augment on their CPU clock, and those sums are
the truth (under other programs' load a decode takes more CPU than before training).
Expected: the workers' load stage gives libjpeg (the native frame "[native] libjpeg.so.62",
under PIL's decode, with the functions named inside it) a total share near the decode's
(less what PIL spends around libjpeg), the Python function the rest, and the input-bound
finding names libjpeg with the decoder's advice (docs/sampling.md, "Native frames")."""

import io
import os
import statistics
import tempfile
import time

import torch
from PIL import Image
from torch.utils.data import Dataset

import common
import hotspots_workers

SIDE = 768  # pixels: a decode of some milliseconds, most of it in libjpeg


def make_jpeg():
    generator = torch.Generator().manual_seed(5)
    pixels = (torch.rand(SIDE, SIDE, 3, generator=generator) * 255).to(torch.uint8)
    image = Image.fromarray(pixels.numpy(), "RGB")
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90)
    return out.getvalue()


def decode_jpeg(data):
    image = Image.open(io.BytesIO(data))
    image.load()
    return image.size[0]


def decode_ms(data):
    costs = []
    for _ in range(20):
        began = time.thread_time_ns()
        decode_jpeg(data)
        costs.append((time.thread_time_ns() - began) / 1e6)
    return statistics.median(costs)


class Photos(Dataset):
    """Each sample's decode and augment, timed on the worker's CPU clock and appended to
    the costs file (one line per sample; small appends to an O_APPEND file do not mix)."""

    def __init__(self, size, data, caption_ms, costs_path):
        self.size, self.data, self.caption_ms = size, data, caption_ms
        self.costs_path = costs_path

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        began = time.thread_time_ns()
        value = decode_jpeg(self.data)
        decoded = time.thread_time_ns()
        value = hotspots_workers.augment_record(value + index, self.caption_ms)
        done = time.thread_time_ns()
        with open(self.costs_path, "a", encoding="utf-8") as costs:
            costs.write(f"{decoded - began} {done - decoded}\n")
        return torch.full((common.FEATURES,), float(value % 7)), index % common.CLASSES


def measured_shares(costs_path):
    """The decode's and the augment's shares of the loading CPU the workers measured: under
    other programs' load a decode takes more CPU than it did before training."""
    decode_ns = augment_ns = 0
    with open(costs_path, encoding="utf-8") as costs:
        for line in costs:
            decode, augment = line.split()
            decode_ns += int(decode)
            augment_ns += int(augment)
    total = decode_ns + augment_ns
    return {"[native] libjpeg.so.62": 100.0 * decode_ns / total,
            "augment_record": 100.0 * augment_ns / total}


def train(arguments, truth, data, cost):
    costs_path = tempfile.mktemp(prefix="profopt-native-costs.")
    try:
        hotspots_workers.train_loading(
            arguments, truth, Photos(arguments.steps * arguments.batch_size, data, cost / 2,
                                     costs_path),
            {"[native] libjpeg.so.62": cost, "augment_record": cost / 2})
        truth.facts["designed_self_pct"] = measured_shares(costs_path)
    finally:
        if os.path.exists(costs_path):
            os.unlink(costs_path)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], hotspots_workers.options)
    data = make_jpeg()
    cost = decode_ms(data)
    common.run_workload("hotspots_native", arguments.truth,
                        lambda truth: train(arguments, truth, data, cost))
