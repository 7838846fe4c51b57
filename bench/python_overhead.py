#!/usr/bin/python3
"""Per-batch cost of profopt's Python instrumentation, against a 10 ms training step.

Runs the same tiny training loop (a map-style dataset with a per-sample transform, batch
size 8, num_workers=0 so that the loading spans run in the measured process too, a
linear model with forward, backward and optimizer spans) with and without profopt, and
reports the difference per batch. With --record it first starts an LTTng session that
records the profopt events, as profopt-record does; run it next to a session daemon:

    /usr/bin/python3 bench/python_overhead.py
    tests/lib/with-sessiond.sh /usr/bin/python3 bench/python_overhead.py --record
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import torch
from torch.utils.data import DataLoader, Dataset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))

import profopt  # noqa: E402

STEP_BUDGET_NS = 10_000_000
BATCH_SIZE = 8


class Vectors(Dataset):
    def __init__(self, size):
        self.data = torch.randn(size, 16)
        self.transform = lambda row: row * 2.0

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return self.transform(self.data[index]), index % 2


def loop_ns(mode, steps):
    """Time of steps training steps. mode "plain": no profopt; "main": what the main loop
    records per batch (step, data wait, forward, backward, optimizer); "full": also the
    loading spans of profopt.instrument (load and preprocess per sample, collate)."""
    torch.manual_seed(0)
    loader = DataLoader(Vectors(steps * BATCH_SIZE), batch_size=BATCH_SIZE)
    model = torch.nn.Linear(16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if mode != "plain":
        profopt.instrument_model(model)
        profopt.instrument_optimizer(optimizer)
    if mode == "full":
        batches = iter(profopt.instrument(loader))
    else:
        batches = iter(loader)
    started = time.perf_counter_ns()
    for index in range(steps):
        if mode == "main":
            with profopt.step(index), profopt.span("data_wait", batch=index):
                inputs, labels = next(batches)
        else:
            inputs, labels = next(batches)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()
    return time.perf_counter_ns() - started


def span_ns(count):
    started = time.perf_counter_ns()
    for _ in range(count):
        with profopt.span(profopt.Stage.FORWARD):
            pass
    return (time.perf_counter_ns() - started) / count


def start_session(trace_dir):
    commands = [
        ["lttng", "create", "po-bench", f"--output={trace_dir}"],
        ["lttng", "enable-channel", "-u", "--buffers-pid", "--subbuf-size", "4M",
         "--num-subbuf", "8", "-s", "po-bench", "po"],
        ["lttng", "enable-event", "-u", "-s", "po-bench", "-c", "po", "profopt:*"],
        ["lttng", "add-context", "-u", "-s", "po-bench", "-c", "po", "-t", "vpid", "-t",
         "vtid", "-t", "procname"],
        ["lttng", "start", "po-bench"],
    ]
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    time.sleep(0.5)  # lets the application pick up the session


def stop_session():
    subprocess.run(["lttng", "destroy", "po-bench"], check=False, stdout=subprocess.DEVNULL)


def measure(steps, repeats):
    """Minimum time per step of each mode, the modes interleaved so that a busy machine
    slows them alike."""
    best = {"plain": None, "main": None, "full": None}
    for _ in range(repeats):
        for mode in best:
            elapsed = loop_ns(mode, steps) / steps
            best[mode] = elapsed if best[mode] is None else min(best[mode], elapsed)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help="record while measuring")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="profopt-bench-") as trace_dir:
        if args.record:
            start_session(trace_dir)
        try:
            loop_ns("full", 50)  # warm-up
            per_step = measure(args.steps, args.repeats)
            one_span = min(span_ns(20000) for _ in range(args.repeats))
            recording = profopt.tracing_enabled()
        finally:
            if args.record:
                stop_session()
    print(f"session recording: {'yes' if recording else 'no'}; library: "
          f"{profopt.library_path()}")
    print(f"step without profopt: {per_step['plain'] / 1000:.1f} us")
    for mode, what in (("main", "main loop (step, data wait, forward, backward, optimizer)"),
                       ("full", f"main loop and loading spans of {BATCH_SIZE} samples")):
        overhead = per_step[mode] - per_step["plain"]
        print(f"per batch, {what}: {overhead / 1000:.1f} us = "
              f"{100 * overhead / STEP_BUDGET_NS:.2f}% of a 10 ms step")
    print(f"one span (enter and exit): {one_span / 1000:.2f} us")
    return 0 if recording == args.record else 1


if __name__ == "__main__":
    sys.exit(main())
