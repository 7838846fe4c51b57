#!/usr/bin/env python3
"""bursty_prefetch: two DataLoader workers with prefetch_factor=1; every 10th sample waits
50 ms on I/O (sleep) and the others 1 ms, so a batch of 4 takes 4 ms or 53 ms, while the
training step needs about 15 ms. On average the two workers keep up, but with one batch
in flight per worker a slow batch holds the loop up; a deeper queue absorbs it.
Expected: input-bound, and the first advice is prefetch_factor (it costs memory, no
core) with a predicted step that a rerun with that prefetch_factor measures; the
harness reruns the script with the recommended --prefetch.

The stall is the bursts against the step, so the waits are sized from this machine's own
model step (--read-ms and --slow-ms 0, the defaults): 1 and 50 ms where the model's step
alone takes 8.4 ms (hidden 1024, batch 4, here), in proportion elsewhere. With fixed waits
a machine whose model runs twice as slow would absorb the bursts in its longer steps (the
same reason threads_and_workers sizes its decode). The reruns get the recorded run's
waits."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

# The model's step alone (ms) that the designed 1 and 50 ms waits go with.
DESIGN_STEP_MS = 8.4


class Bursty(common.Samples):
    """Samples of which every period-th waits slow_ms on I/O, the others sleep_ms."""

    def __init__(self, size, sleep_ms, slow_ms, period):
        super().__init__(size, sleep_ms=sleep_ms)
        self.slow_ms = slow_ms
        self.period = period

    def __getitem__(self, index):
        if index % self.period == 0:
            common.time.sleep((self.slow_ms - self.sleep_ms) / 1000.0)
        return super().__getitem__(index)


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--prefetch", type=int, default=1)
    parser.add_argument("--steps", type=int, default=250)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--read-ms", type=float, default=0.0,
                        help="I/O wait per sample; 0: 1 ms scaled to the model's step")
    parser.add_argument("--slow-ms", type=float, default=0.0,
                        help="every period-th sample's wait; 0: 50 ms scaled likewise")
    parser.add_argument("--period", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=1024)


def train(args, truth):
    torch.manual_seed(1)
    if args.read_ms <= 0 or args.slow_ms <= 0:
        alone_ms = common.model_step_alone_ms(args.hidden, args.batch_size)
        scale = min(4.0, max(0.5, alone_ms / DESIGN_STEP_MS))
        args.read_ms, args.slow_ms = 1.0 * scale, 50.0 * scale
        truth.facts.update(model_step_alone_ms=alone_ms, rerun_arguments=[
            "--read-ms", repr(args.read_ms), "--slow-ms", repr(args.slow_ms)])
    dataset = Bursty(args.steps * args.batch_size, args.read_ms, args.slow_ms, args.period)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                        prefetch_factor=args.prefetch)
    model = common.make_model(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, prefetch_factor=args.prefetch,
                       batch_size=args.batch_size, slow_ms=args.slow_ms,
                       period=args.period)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("bursty_prefetch", arguments.truth,
                        lambda truth: train(arguments, truth))
