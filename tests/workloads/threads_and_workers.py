#!/usr/bin/env python3
"""threads_and_workers: the model runs on 2 intra-op threads (torch.set_num_threads(2))
beside 2 DataLoader workers that decode every sample with CPU (zlib inflate), on a 2-core
machine: four busy threads on two cores, and the loop's threads wait for the workers'.
Expected: cpu-contention, with the loop's intra-op threads counted as demand, and advice
on torch.set_num_threads (and num_workers) whose predicted step the harness compares with
a rerun of the advised configuration (--threads, --workers).

The contention is the workers' CPU against the loop's, so the decode cost is set from this
machine's own model step (--decode-ms 0, the default): each batch's decode takes
DECODE_PER_STEP times the step the model takes alone on its threads, measured before the
run. With a fixed cost per sample, a machine whose matrix code is twice as slow (a CI
machine measured a 57 ms loop against 29 ms here) saw the loop's threads fill the cores
alone and the workers' share fall below contention (reproduced here with --hidden 1024,
a 49 ms step alone: no cpu-contention finding at 0.6 ms a sample; critical, and the what-if
within 12%, with the cost from the step). The rerun is given the recorded run's
cost (--decode-ms), so both decode the same."""

import torch
from torch.utils.data import DataLoader

import common

profopt = common.import_profopt()

# A batch's decode over the model's step alone: 1.4 gives 0.6 ms a sample where the step
# takes 14 ms (2 threads, hidden 512, batch 32), the figure this scenario was built with.
DECODE_PER_STEP = 1.4


def options(parser):
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--decode-ms", type=float, default=0.0,
                        help="CPU per sample in the workers; 0: from the model's step")
    parser.add_argument("--hidden", type=int, default=512)


def train(args, truth):
    torch.manual_seed(1)
    torch.set_num_threads(args.threads)
    if args.decode_ms <= 0:
        alone_ms = common.model_step_alone_ms(args.hidden, args.batch_size)
        args.decode_ms = DECODE_PER_STEP * alone_ms / args.batch_size
        truth.facts.update(model_step_alone_ms=alone_ms,
                           rerun_arguments=["--decode-ms", repr(args.decode_ms)])
    dataset = common.Samples(args.steps * args.batch_size, decode_ms=args.decode_ms)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers, persistent_workers=args.workers > 0)
    model = common.make_model(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth.facts.update(num_workers=args.workers, batch_size=args.batch_size,
                       torch_threads=args.threads, decode_cpu_ms_per_sample=args.decode_ms)
    loader = profopt.instrument(loader)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        for features, labels in truth.timed(loader, epoch=0):
            common.train_step(model, optimizer, features, labels)


if __name__ == "__main__":
    arguments = common.parse_args(__doc__.split("\n")[0], options)
    common.run_workload("threads_and_workers", arguments.truth,
                        lambda truth: train(arguments, truth))
