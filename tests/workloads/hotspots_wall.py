#!/usr/bin/env python3
"""hotspots_wall: a loader whose __getitem__ waits for a remote read (time.sleep, 4.4 ms),
then decodes and augments (each spinning to a deadline of the wall clock: 4.4 and 2.2 ms
per sample), in 2 forked DataLoader workers, recorded with --stacks --stacks-clock=wall.
Per second of wall time the three take 40%, 40% and 20% of the loading, whatever the
machine's load (a spin that loses its core still takes wall time, as the sleep does).
Expected: the workers' load stage names the three functions with self shares within 5
points of the design; CPU-time samples (hotspots_workers) would give the wait almost
nothing (docs/sampling.md)."""

import time

import torch
from torch.utils.data import Dataset

import common
import hotspots_workers

# Per-sample wall time of each function, in ms: 40/40/20%. The total (11 ms) is no
# multiple of the 10 ms sampling period, so samples do not alias.
COSTS_MS = {"fetch_remote": 4.4, "decode_record": 4.4, "augment_record": 2.2}


def fetch_remote(seed, ms):
    time.sleep(ms / 1000)  # blocked, as a read from remote storage is
    return seed


def decode_record(seed, ms):
    deadline = time.perf_counter_ns() + int(ms * 1e6)
    value = seed
    while time.perf_counter_ns() < deadline:
        for step in range(64):
            value = (value * 31 + step) & 0xFFFF
    return value


def augment_record(seed, ms):
    deadline = time.perf_counter_ns() + int(ms * 1e6)
    value = seed
    while time.perf_counter_ns() < deadline:
        for step in range(64):
            value = (value * 17 + step) & 0xFFFF
    return value


class RemoteRecords(Dataset):
    """Samples whose loading takes 11 ms of wall time in three functions of designed shares."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        value = fetch_remote(index, COSTS_MS["fetch_remote"])
        value = decode_record(value, COSTS_MS["decode_record"])
        value = augment_record(value, COSTS_MS["augment_record"])
        return torch.full((common.FEATURES,), float(value % 7)), index % common.CLASSES


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], hotspots_workers.options)
    common.run_workload("hotspots_wall", arguments.truth, lambda truth:
                        hotspots_workers.train_loading(
                            arguments, truth, RemoteRecords(arguments.steps *
                                                            arguments.batch_size), COSTS_MS))
