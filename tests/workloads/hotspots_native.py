#!/usr/bin/env python3
"""hotspots_native: a loader whose __getitem__ decodes a JPEG with PIL (libjpeg under
Image.load) and then spends half as long in a Python function (hotspots_workers'
augment_record, spinning on its thread's CPU clock), in 2 forked
DataLoader workers, recorded with --stacks (100 Hz of CPU time). The script measures,
before training, how long a decode takes (its thread's CPU clock, the median of 20) and
sets the Python function's cost to half of it: two thirds of the loading is the decode.
Expected: the workers' load stage gives libjpeg itself (the native frame
"[native] libjpeg.so.62", under PIL's decode) a self share near the decode's (less what
PIL spends around libjpeg), the Python function the rest, and the input-bound finding
names libjpeg with the decoder's advice (docs/sampling.md, "Native frames")."""

import io
import statistics
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
    def __init__(self, size, data, caption_ms):
        self.size, self.data, self.caption_ms = size, data, caption_ms

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        value = decode_jpeg(self.data)
        value = hotspots_workers.augment_record(value + index, self.caption_ms)
        return torch.full((common.FEATURES,), float(value % 7)), index % common.CLASSES


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], hotspots_workers.options)
    data = make_jpeg()
    cost = decode_ms(data)
    costs = {"[native] libjpeg.so.62": cost, "augment_record": cost / 2}
    common.run_workload("hotspots_native", arguments.truth, lambda truth:
                        hotspots_workers.train_loading(
                            arguments, truth, Photos(arguments.steps * arguments.batch_size,
                                                     data, cost / 2), costs))
