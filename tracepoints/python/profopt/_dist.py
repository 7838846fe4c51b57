"""Distributed jobs: which rank a process is, and the time each rank spends in collectives
(docs/distributed.md).

The rank comes from torch.distributed once its process group is initialised; otherwise
from the launcher's environment: RANK / LOCAL_RANK / WORLD_SIZE (torchrun, the
documented shell loop), SLURM_PROCID / SLURM_LOCALID / SLURM_NTASKS (srun),
OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_LOCAL_RANK / OMPI_COMM_WORLD_SIZE (Open MPI's
mpirun). profopt.run() records it when the run starts.

Collectives: for a DistributedDataParallel model, profopt.run(model=ddp_model) registers a
communication hook that is DDP's default all-reduce with a collective_begin when a bucket
is handed to it and a collective_end when its future completes; the gradients are the
same, bit for bit. DDP takes one hook per model: a model that already has one is refused
(one warning; the run goes on without collective times). Collectives called directly go
inside `with profopt.collective("all_reduce", tensor):`.
"""

import enum
import os
import socket
import sys
import warnings

from ._api import UNKNOWN
from ._lib import LIB
from ._api import encode


class Collective(enum.IntEnum):
    """Collective operations (enum profopt_collective_op); values are part of the trace
    format."""

    ALL_REDUCE = 0
    BROADCAST = 1
    REDUCE = 2
    ALL_GATHER = 3
    REDUCE_SCATTER = 4
    ALL_TO_ALL = 5
    BARRIER = 6
    SEND = 7
    RECV = 8
    OTHER = 9


_OP_BY_NAME = {op.name.lower(): op for op in Collective}

# (rank, local rank, world size) variables of each launcher, in the order they are tried.
LAUNCHER_VARIABLES = (
    ("RANK", "LOCAL_RANK", "WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"),
)


def _integer(environ, name):
    try:
        return int(environ.get(name, ""))
    except ValueError:
        return UNKNOWN


def _from_environment(environ):
    for rank_name, local_name, size_name in LAUNCHER_VARIABLES:
        rank = _integer(environ, rank_name)
        if rank >= 0:
            return rank, _integer(environ, local_name), _integer(environ, size_name)
    return UNKNOWN, UNKNOWN, UNKNOWN


def rank_info(environ=None):
    """(rank, local_rank, world_size) of this process, -1 where unknown: torch.distributed
    once initialised (its local rank from the launcher's variables), else the launcher's
    environment variables."""
    environ = os.environ if environ is None else environ
    rank, local_rank, world_size = _from_environment(environ)
    dist = _torch_distributed()
    if dist is not None:
        rank, world_size = dist.get_rank(), dist.get_world_size()
    return rank, local_rank, world_size


def _torch_distributed():
    """torch.distributed when the program imported it and initialised its process group."""
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist
    except Exception:
        pass
    return None


def record_rank(rank=None, local_rank=None, world_size=None, host=None):
    """Records this process's rank (profopt_rank); the arguments left None are found as
    rank_info() says, host from socket.gethostname(). Does nothing for a process that is
    no rank of a distributed job (no process group, no launcher variable)."""
    found = rank_info()
    rank = found[0] if rank is None else rank
    local_rank = found[1] if local_rank is None else local_rank
    world_size = found[2] if world_size is None else world_size
    if rank < 0 and world_size < 0:
        return False
    LIB.profopt_rank(int(rank), int(local_rank), int(world_size),
                     encode(host or socket.gethostname()))
    return True


class _Groups:
    """Process groups as the trace numbers them (0: the default group; others from 1 in
    order of first use, the same on every rank when they create and use them in the same
    order), and the next sequence number of each."""

    ids = {}
    next_seq = {}

    @classmethod
    def id_of(cls, group):
        dist = _torch_distributed()
        if group is None or dist is None or group is dist.group.WORLD or \
                group is dist.distributed_c10d._get_default_group():
            return 0
        key = id(group)
        if key not in cls.ids:
            cls.ids[key] = len(cls.ids) + 1
        return cls.ids[key]

    @classmethod
    def take_seq(cls, group_id):
        seq = cls.next_seq.get(group_id, 0)
        cls.next_seq[group_id] = seq + 1
        return seq


def _resolve_op(op):
    if isinstance(op, str):
        return int(_OP_BY_NAME.get(op.strip().lower(), Collective.OTHER))
    return int(Collective(op))


def _tensor_facts(tensor):
    """(bytes, device) of a tensor or a list of tensors; (0, -1) for none."""
    if tensor is None:
        return 0, UNKNOWN
    tensors = tensor if isinstance(tensor, (list, tuple)) else [tensor]
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    first = tensors[0] if tensors else None
    device = first.device.index if first is not None and first.is_cuda else UNKNOWN
    return nbytes, (device if device is not None else UNKNOWN)


class collective:
    """A collective called directly through torch.distributed, as a context manager:

        with profopt.collective("all_reduce", tensor):
            dist.all_reduce(tensor)

    op is a Collective, its value or its name; tensor (or a list of them) gives the bytes
    and the device; group is the torch process group (None: the default one). The span
    ends when the block does, so it times a synchronous call, or an asynchronous one whose
    work is waited for inside the block. Every rank must time the same collectives in the
    same order: their sequence numbers pair them across ranks."""

    def __init__(self, op="all_reduce", tensor=None, group=None):
        self._op = _resolve_op(op)
        self._bytes, self._device = _tensor_facts(tensor)
        self._group = _Groups.id_of(group)
        self._seq = None

    def __enter__(self):
        self._seq = _Groups.take_seq(self._group)
        LIB.profopt_collective_begin(self._group, self._op, self._bytes, self._seq,
                                     self._device)
        return self

    def __exit__(self, *exc):
        LIB.profopt_collective_end(self._group, self._op, self._bytes, self._seq,
                                   self._device)
        return False


def _timed_allreduce_hook(process_group, bucket):
    """DDP's default all-reduce (torch's allreduce_hook: divide by the group's size, sum),
    between a collective_begin and, when its future completes, a collective_end."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    group = _Groups.id_of(process_group)
    seq = _Groups.take_seq(group)
    nbytes, device = _tensor_facts(bucket.buffer())
    op = int(Collective.ALL_REDUCE)
    LIB.profopt_collective_begin(group, op, nbytes, seq, device)
    future = default_hooks.allreduce_hook(process_group, bucket)

    def completed(done):
        LIB.profopt_collective_end(group, op, nbytes, seq, device)
        return done.value()

    return future.then(completed)


HOOK_REFUSED = ("profopt: not timing DistributedDataParallel's all-reduce: the model "
                "already has a communication hook, and DDP takes one (docs/distributed.md)")


def install_ddp_hook(model):
    """Registers the timed all-reduce on a DistributedDataParallel model; True when it is
    installed. A model with a hook of its own is left alone, with one warning."""
    dist = _torch_distributed()
    if dist is None or getattr(model, "_profopt_comm_hook", False):
        return False
    from torch.nn.parallel import DistributedDataParallel
    if not isinstance(model, DistributedDataParallel):
        return False
    try:
        model.register_comm_hook(model.process_group, _timed_allreduce_hook)
    except RuntimeError:  # the reducer takes one hook: the program registered its own
        warnings.warn(HOOK_REFUSED, RuntimeWarning, stacklevel=3)
        return False
    model._profopt_comm_hook = True
    return True
