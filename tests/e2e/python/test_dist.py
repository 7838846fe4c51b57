#!/usr/bin/python3
"""Unit tests of the module's distributed side without a recording session or a process
group: the collective enum matches profopt.h, the launcher variables give the rank in
their order of precedence, a process of no rank records nothing, and collectives are
numbered per process group."""

import os
import re

from calls import ROOT, check, finish, recording
from profopt import _dist


def test_enum():
    header = open(os.path.join(ROOT, "tracepoints", "include", "profopt.h")).read()
    body = re.search(r"enum profopt_collective_op \{(.*?)\};", header, re.S).group(1)
    public = {name: int(value) for name, value in
              re.findall(r"\bPROFOPT_COLLECTIVE_(\w+) = (-?\d+)", body)}
    python = {member.name: int(member) for member in _dist.Collective}
    check(public and public == python, f"Collective has the numbers of enum "
          f"profopt_collective_op ({sorted(python.items())})")


def test_launcher_variables():
    cases = [
        ({}, (-1, -1, -1)),
        ({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}, (3, 1, 8)),
        ({"SLURM_PROCID": "5", "SLURM_LOCALID": "0", "SLURM_NTASKS": "6"}, (5, 0, 6)),
        ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "2",
          "OMPI_COMM_WORLD_SIZE": "4"}, (2, 2, 4)),
        ({"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "7"}, (1, -1, 2)),
        ({"RANK": "x", "SLURM_PROCID": "4", "SLURM_NTASKS": "5"}, (4, -1, 5)),
    ]
    for environ, want in cases:
        got = _dist.rank_info(environ)
        check(got == want, f"rank_info({environ}) = {got}, expected {want}")


def test_calls():
    calls = recording()
    _dist.LIB = calls
    saved = {name: os.environ.pop(name) for name in list(os.environ)
             if name.startswith(("RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_", "OMPI_"))}
    check(_dist.record_rank() is False and not calls.of("rank"),
          "a process of no rank records no rank event")
    os.environ.update(RANK="1", LOCAL_RANK="0", WORLD_SIZE="2")
    check(_dist.record_rank(host="node7") is True, "a launched rank records its rank")
    check(calls.of("rank") == [("rank", (1, 0, 2, b"node7"))], f"{calls.of('rank')}")
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        del os.environ[name]
    os.environ.update(saved)
    with _dist.collective("all_reduce"):
        pass
    with _dist.collective(_dist.Collective.BROADCAST):
        pass
    begins = [arguments for name, arguments in calls.of("collective_begin")]
    ends = [arguments for name, arguments in calls.of("collective_end")]
    check([(a[0], a[1], a[3]) for a in begins] == [(0, 0, 0), (0, 1, 1)],
          f"collectives of the default group numbered from 0 in call order: {begins}")
    check(begins == ends, "each end repeats its begin's group, operation and number")


if __name__ == "__main__":
    test_enum()
    test_launcher_variables()
    test_calls()
    raise SystemExit(finish())
