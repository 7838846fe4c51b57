#!/usr/bin/env python3
"""interrupt: the training gets SIGINT 1.5 s after it starts, wherever the loop is (in
the data wait or in the step), as a Ctrl-C or a job scheduler would send it; Python's
default handler raises KeyboardInterrupt and the program dies of SIGINT (status 130
through profopt-record). The tracer discards nothing. Expected: the run is reported as
ended by a signal, and no finding claims the tracer lost data or advises larger trace
buffers."""

import signal

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--after-s", type=float, default=1.5)


def train(args, truth):
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * args.batch_size, sleep_ms=0.5)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = common.make_model(512)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       interrupt_after_s=args.after_s)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        signal.signal(signal.SIGALRM, lambda *_: common.interrupt_self())
        signal.setitimer(signal.ITIMER_REAL, args.after_s)
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("interrupt", arguments.truth, lambda truth: train(arguments, truth))
