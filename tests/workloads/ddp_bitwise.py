#!/usr/bin/env python3
"""ddp_bitwise: profopt's DDP communication hook changes no number. Two gloo ranks on the
CPU train the same model on the same data twice, once plain and once inside
profopt.run(model=ddp_model) (which registers the timed all-reduce hook); the parameters
must be equal bit for bit. Then a model that already has a hook of its own keeps it, and
profopt says so in one warning. Runs without a recording (the hook runs either way).
Prints "ok ..." or "FAIL ..." lines; exits 1 on a failure."""

import os
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

import common
import ddp_straggler

STEPS = 12
RANKS = 2


def train(rank, with_profopt, own_hook):
    torch.manual_seed(7)
    model = DistributedDataParallel(common.make_model(64, depth=3))
    if own_hook:
        model.register_comm_hook(None, default_hooks.allreduce_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    generator = torch.Generator().manual_seed(100 + rank)
    caught = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if with_profopt:
            profopt = common.import_profopt()
            context = profopt.run(model=model, optimizer=optimizer)
        else:
            context = open(os.devnull)
        with context:
            for _ in range(STEPS):
                features = torch.rand(16, common.FEATURES, generator=generator)
                labels = torch.randint(0, common.CLASSES, (16,), generator=generator)
                optimizer.zero_grad()
                F.cross_entropy(model(features), labels).backward()
                optimizer.step()
    messages = [str(w.message) for w in caught if "profopt" in str(w.message)]
    hooked = getattr(model, "_profopt_comm_hook", False)
    return [p.detach().clone() for p in model.parameters()], messages, hooked


def rank_main(rank, port, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=RANKS)
    plain, _, _ = train(rank, False, False)
    traced, _, hooked = train(rank, True, False)
    _, refused, _ = train(rank, True, True)
    dist.destroy_process_group()
    same = all(torch.equal(a, b) and a.numpy().tobytes() == b.numpy().tobytes()
               for a, b in zip(plain, traced))
    moved = any(not torch.equal(a, torch.zeros_like(a)) for a in traced)
    torch.save({"same": same, "moved": moved, "refused": refused, "hooked": hooked},
               os.path.join(out_dir, f"rank{rank}.pt"))


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(rank_main, args=(ddp_straggler.free_port(), out_dir), nprocs=RANKS, join=True)
        for rank in range(RANKS):
            result = torch.load(os.path.join(out_dir, f"rank{rank}.pt"))
            checks = [
                (result["hooked"] and result["same"] and result["moved"],
                 f"rank {rank}: {STEPS} steps give the same parameters, bit for bit, with "
                 "and without profopt's hook"),
                (len(result["refused"]) == 1 and "already has a communication hook"
                 in result["refused"][0],
                 f"rank {rank}: a model with its own hook is refused in one warning "
                 f"({result['refused']})"),
            ]
            for ok, text in checks:
                print(("ok   " if ok else "FAIL ") + text)
                failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
