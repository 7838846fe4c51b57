#!/usr/bin/env python3
"""ddp_straggler: two DistributedDataParallel ranks on the CPU (gloo), started by
torch.multiprocessing.spawn under one profopt-record, each with one DataLoader worker.
Rank 1's samples each sleep (slow storage, by design) so its batch takes --slow-load-ms,
far longer than the step's compute: rank 1 arrives late at every gradient all-reduce
and rank 0 waits for it. Expected: the straggler finding names rank 1, chronic, cause
input, and rank 0's wait per step matches what the script measured.

The truth: each rank stamps CLOCK_MONOTONIC (the trace's clock) just before its
loss.backward() at every step; backward's compute up to the all-reduce is the same on
both ranks, so a rank's wait at step k is the latest rank's stamp less its own. Each rank
also records its data wait per step. Debian's torch 1.13 `torchrun` fails at start-up
under Python 3.11 (docs/distributed.md), hence spawn.
"""

import argparse
import contextlib
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

import common

BATCH_SIZE = 8
STARTUP_STEPS = 1  # one loader worker: the first step waits for it to start


def options(parser):
    parser.add_argument("--truth", default=os.environ.get("PROFOPT_WORKLOAD_TRUTH"))
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--load-ms", type=float, default=0.0,
                        help="loading time of a batch on every rank")
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--slow-load-ms", type=float, default=40.0,
                        help="loading time of a batch on the slow rank")
    parser.add_argument("--compute-ms", type=float, default=0.0,
                        help="designed compute of a forward on every rank (a sleep)")
    parser.add_argument("--slow-compute-ms", type=float, default=None,
                        help="designed compute of a forward on the slow rank")
    parser.add_argument("--accumulate", type=int, default=1,
                        help="steps per gradient all-reduce: the others run under "
                        "model.no_sync() (gradient accumulation)")
    parser.add_argument("--one-rank", metavar="DIR",
                        help="run the one rank that RANK, WORLD_SIZE, MASTER_ADDR and "
                        "MASTER_PORT say (a shell loop, one host each) and write its "
                        "stamps to DIR/rankN.json")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def load_ms(args, rank):
    return args.slow_load_ms if rank == args.slow_rank else args.load_ms


def compute_ms(args, rank):
    if rank == args.slow_rank and args.slow_compute_ms is not None:
        return args.slow_compute_ms
    return args.compute_ms


def job_cpu_s(launcher_pid):
    """CPU seconds of the whole job: the launcher, every rank and loader worker alive, and
    the children they reaped (/proc/PID/stat's own and waited-for children's times)."""
    total = 0.0
    for pid in [launcher_pid, *common._descendants(launcher_pid)]:
        try:
            fields = common._stat_fields(pid)
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / common.CLOCK_TICKS
        except (OSError, ValueError, IndexError):
            continue
    return total


def rank_main(rank, args, port, out_dir):
    if port is not None:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    profopt = common.import_profopt()
    # rank 0's sampler starts with the module: what the trace measures other programs'
    # use over begins about here, and ends when rank 0 exits
    machine_begin = common.machine.snapshot(job_cpu_s(os.getppid()))
    torch.manual_seed(1)
    dataset = common.Samples(args.steps * BATCH_SIZE,
                             sleep_ms=load_ms(args, rank) / BATCH_SIZE, seed=rank + 1)
    loader = profopt.instrument(DataLoader(dataset, batch_size=BATCH_SIZE, num_workers=1))
    net = common.make_model(256)
    sleep_s = compute_ms(args, rank) / 1e3
    if sleep_s > 0:  # designed compute: a sleep, with little jitter between ranks
        net.register_forward_pre_hook(lambda module, inputs: time.sleep(sleep_s))
    model = DistributedDataParallel(net)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    backward_at, data_wait, synced = [], [], []
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        asked = time.monotonic_ns()
        for step, (features, labels) in enumerate(loader):
            data_wait.append(time.monotonic_ns() - asked)
            sync = step % args.accumulate == args.accumulate - 1
            # under no_sync() the backward holds no all-reduce: gradients accumulate
            with contextlib.nullcontext() if sync else model.no_sync():
                loss = F.cross_entropy(model(features), labels)
                backward_at.append(time.monotonic_ns())
                loss.backward()
            synced.append(sync)
            if sync:
                optimizer.step()
                optimizer.zero_grad()
            asked = time.monotonic_ns()
    dist.barrier()
    machine_end = common.machine.snapshot(job_cpu_s(os.getppid()))
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as out:
        json.dump({"rank": rank, "backward_at_ns": backward_at, "data_wait_ns": data_wait,
                   "synced": synced,
                   "load_ms": load_ms(args, rank),
                   "machine": {"begin": machine_begin, "end": machine_end}}, out)


def truth_of(args, ranks):
    """Per rank: its mean wait per step at the all-reduce and its mean data wait, over
    the steps after the first (the start-up, while the loader workers start: profopt's
    steady steps leave it out too)."""
    steps = min(len(r["backward_at_ns"]) for r in ranks)
    waits = {r["rank"]: 0.0 for r in ranks}
    # the steps whose backward holds the all-reduce (every step without accumulation)
    syncs = [k for k in range(STARTUP_STEPS, steps) if ranks[0].get("synced", [True] * steps)[k]]
    for k in syncs:
        latest = max(r["backward_at_ns"][k] for r in ranks)
        for r in ranks:
            waits[r["rank"]] += (latest - r["backward_at_ns"][k]) / 1e6
    steady = steps - STARTUP_STEPS
    first = ranks[0]["backward_at_ns"]
    cycle_ms = (first[syncs[-1]] - first[syncs[0]]) / 1e6 / (len(syncs) - 1) \
        if len(syncs) > 1 else None
    return {str(r["rank"]): {"wait_ms_per_step": waits[r["rank"]] / max(len(syncs), 1),
                             "sync_cycle_ms": cycle_ms,
                             "backward_at_ns": r["backward_at_ns"],
                             "data_wait_ms_per_step":
                                 sum(r["data_wait_ns"][STARTUP_STEPS:steps]) / steady / 1e6,
                             "load_ms_per_batch": r["load_ms"],
                             "steps": len(r["backward_at_ns"])} for r in ranks}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options(parser)
    args = parser.parse_args()
    if args.one_rank:
        args.ranks = int(os.environ["WORLD_SIZE"])
        rank_main(int(os.environ["RANK"]), args, None, args.one_rank)
        return
    out_dir = os.path.dirname(os.path.abspath(args.truth)) if args.truth else "."
    begin = common.machine_snapshot(os.getpid())
    started = time.monotonic()
    mp.spawn(rank_main, args=(args, free_port(), out_dir), nprocs=args.ranks, join=True)
    end = common.machine_snapshot(os.getpid())
    ranks = []
    for rank in range(args.ranks):
        with open(os.path.join(out_dir, f"rank{rank}.json")) as part:
            ranks.append(json.load(part))
    # what other programs used: over rank 0's recorded span, beside the whole job (every
    # rank and worker); the launch's own snapshots where rank 0 wrote none
    truth = {"ending": "clean", "wall_s": time.monotonic() - started,
             "machine": ranks[0].get("machine") or {"begin": begin, "end": end},
             "launch_machine": {"begin": begin, "end": end},
             "facts": {"ranks": args.ranks, "slow_rank": args.slow_rank,
                       "load_ms": args.load_ms, "slow_load_ms": args.slow_load_ms,
                       "compute_ms": args.compute_ms, "slow_compute_ms": args.slow_compute_ms,
                       "steps": args.steps, "accumulate": args.accumulate},
             "ranks": truth_of(args, ranks)}
    if args.truth:
        with open(args.truth, "w") as out:
            json.dump(truth, out, indent=1)
    json.dump(truth["ranks"], sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
