"""Shared plumbing of the real-workload suite: a synthetic dataset and model, the
profopt import, and the ground truth each workload measures about itself.

Every workload script trains a small PyTorch model on the CPU and writes a truth file
(JSON, path from --truth or the PROFOPT_WORKLOAD_TRUTH environment variable) with what
it measured with its own clocks, independently of profopt:

- steps: per step, its wall time (time.perf_counter from just before the batch is asked
  for to the end of the loop body, so the data wait is included), the data wait alone,
  its epoch and its begin time since the training began;
- rss: at the end of every step (inside it), the resident bytes of the main process and of each of
  its live descendants (the DataLoader workers), from /proc/PID/statm, with their CPU
  clock ticks from /proc/PID/stat;
- ending: clean, exception or signal; epochs; when the training loop began and the
  whole wall time;
- machine: at the loop's start and at its end, the CPU time of the whole machine and of
  the process tree, the load average, and the main thread's CPU time and run-queue wait
  (its schedstat), so the harness can tell what other programs used meanwhile
  (tests/lib/machine.py) and how much longer the loop's CPU work took for it;
- facts: what the workload knows about its own design (leak bytes per step, checkpoint
  period, ...).

The harness (run_workload.py) compares profopt-analyze's summary.json with this file.
"""

import argparse
import contextlib
import json
import os
import resource
import signal
import sys
import time
import zlib
from array import array

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402 (tests/lib)
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
FEATURES = 256
CLASSES = 10


class _Plain:
    """profopt's calls doing nothing, for the script without its three lines
    (PROFOPT_WORKLOAD_PLAIN=1: bench/recording_distortion.py's plain runs)."""

    @staticmethod
    def instrument(loader, *args, **kwargs):
        return loader

    def __getattr__(self, name):
        def nothing(*args, **kwargs):
            return contextlib.nullcontext()
        return nothing


def import_profopt():
    """The profopt module of this source tree (as samples/pytorch/train.py does), or, with
    PROFOPT_WORKLOAD_PLAIN=1, a stand-in whose calls do nothing (the script as it was before
    the three lines)."""
    if os.environ.get("PROFOPT_WORKLOAD_PLAIN") == "1":
        return _Plain()
    try:
        import profopt
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, "..", "..", "tracepoints", "python"))
        import profopt
    return profopt


def parse_args(description, extra=None, argv=None):
    """The options every workload has (--truth), plus the workload's own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--truth", default=os.environ.get("PROFOPT_WORKLOAD_TRUTH"),
                        help="where to write the measured ground truth (JSON)")
    if extra:
        extra(parser)
    return parser.parse_args(argv)


# --- what /proc says about the process tree ------------------------------------------

def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name (index 0 is the state)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        text = stat.read()
    return text[text.rindex(b")") + 2:].split()


def _descendants(root_pid):
    """Live descendants of root_pid, from the parent pid of every process."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            parent = int(_stat_fields(name)[1])
        except (OSError, ValueError, IndexError):
            continue  # exited while we looked
        children.setdefault(parent, []).append(int(name))
    found, pending = [], [root_pid]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return sorted(found)


def _rss_and_ticks(pid):
    """(resident bytes, user + system CPU ticks) of pid, or None if it exited."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            resident_pages = int(statm.read().split()[1])
        fields = _stat_fields(pid)
        if fields[0] == b"Z":
            return None  # a zombie holds no memory
        return resident_pages * PAGE_BYTES, int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return None


def _tree_cpu_s(root_pid):
    """CPU seconds of this process, of the children it waited for, and of its live (or
    not yet waited for) descendants."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    for pid in _descendants(root_pid):
        try:
            fields = _stat_fields(pid)
            total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        except (OSError, ValueError, IndexError):
            continue  # exited while we looked: its parent's children count has it
    return total


def _main_thread_schedstat():
    """(CPU ns, run-queue wait ns) of this process's main thread, or (None, None)."""
    try:
        with open("/proc/self/schedstat") as schedstat:
            cpu_ns, wait_ns = schedstat.read().split()[:2]
        return int(cpu_ns), int(wait_ns)
    except (OSError, ValueError):
        return None, None


def machine_snapshot(root_pid):
    """What the machine, the process tree and the main thread had used until now."""
    snapshot = machine.snapshot(_tree_cpu_s(root_pid))
    snapshot["main_cpu_ns"], snapshot["main_wait_ns"] = _main_thread_schedstat()
    return snapshot


# --- the ground truth ------------------------------------------------------------------

class Truth:
    """What the workload measures about itself; written as JSON by write().

    Per-step records go into arrays allocated up front (MAX_STEPS steps, MAX_PIDS
    processes per sample), so that measuring does not itself make the process's memory
    grow step by step: a list of per-step dicts grows by about 1.5 KiB a step, which a
    memory-growth detector rightly reports."""

    MAX_STEPS = 8192
    MAX_PIDS = 16

    def __init__(self, workload, path):
        self.workload = workload
        self.path = path
        self.main_pid = os.getpid()
        self.started = time.perf_counter()
        self.step_count = 0
        self.epochs = 0
        self.ending = "clean"
        self.facts = {}        # workload-specific facts (arrays for per-step ones)
        self.trained_s = None  # wall time of the training, set by finish()
        self.asked = None      # perf_counter() when the current step asked for its batch
        self.received = None   # perf_counter() when that batch arrived
        self.loop_began = None  # perf_counter() when the training loop began
        self.machine = {}  # machine_snapshot() at the loop's start ("begin") and end ("end")
        steps, slots = self.MAX_STEPS, self.MAX_STEPS * self.MAX_PIDS
        self._stamps = array("d", bytes(8 * 4 * steps))  # begin, ready, end, sampled
        self._epoch = array("q", bytes(8 * steps))
        self._pid_count = array("q", bytes(8 * steps))
        self._pids = array("q", bytes(8 * slots))
        self._rss = array("q", bytes(8 * slots))
        self._ticks = array("q", bytes(8 * slots))

    def now_s(self):
        return time.perf_counter() - self.started

    def _sample_tree(self, index):
        """Resident bytes and CPU ticks of the main process and its live descendants."""
        base, slot = index * self.MAX_PIDS, 0
        for pid in [self.main_pid] + _descendants(self.main_pid):
            measured = _rss_and_ticks(pid)
            if measured is None or slot == self.MAX_PIDS:
                continue
            self._pids[base + slot] = pid
            self._rss[base + slot], self._ticks[base + slot] = measured
            slot += 1
        self._pid_count[index] = slot

    def add_step(self, epoch, begin, ready, end=None):
        """Records a finished step from perf_counter() stamps: begin (before the batch
        was asked for), ready (the batch arrived) and end (default: now). The process
        tree is sampled first, inside the step, where profopt's step also ends."""
        index = self.step_count
        self.step_count += 1
        if index >= self.MAX_STEPS:
            return
        self._sample_tree(index)
        sampled = time.perf_counter()
        end = sampled if end is None else end
        self._stamps[4 * index:4 * index + 4] = array("d", (begin, ready, end, sampled))
        self._epoch[index] = epoch

    def begin_loop(self):
        """Marks the start of the training loop (the first epoch's iter(loader), before
        the workers start), once."""
        if self.loop_began is None:
            self.machine["begin"] = machine_snapshot(self.main_pid)
            self.loop_began = time.perf_counter()

    def timed(self, iterable, epoch):
        """Iterates iterable as one epoch, recording each step: from asking for the
        batch to asking for the next one (the loop body included). A step is recorded
        when the loop comes back for the next batch, so a step whose body raised is
        not counted as done."""
        self.epochs = max(self.epochs, epoch + 1)
        self.begin_loop()
        iterator = iter(iterable)
        while True:
            begin = time.perf_counter()
            try:
                batch = next(iterator)
            except StopIteration:
                return
            ready = time.perf_counter()
            self.asked, self.received = begin, ready
            yield batch
            self.add_step(epoch, begin, ready)

    def finish(self):
        self.trained_s = self.now_s()
        if "begin" in self.machine:
            self.machine["end"] = machine_snapshot(self.main_pid)

    def _steps(self):
        steps = []
        for index in range(min(self.step_count, self.MAX_STEPS)):
            begin, ready, end, _ = self._stamps[4 * index:4 * index + 4]
            steps.append({"index": index, "epoch": self._epoch[index],
                          "begin_s": round(begin - self.started, 6),
                          "wall_ms": round((end - begin) * 1e3, 4),
                          "wait_ms": round((ready - begin) * 1e3, 4)})
        return steps

    def _samples(self):
        samples = []
        for index in range(min(self.step_count, self.MAX_STEPS)):
            base = index * self.MAX_PIDS
            pids = [str(pid) for pid in self._pids[base:base + self._pid_count[index]]]
            samples.append({
                "step": index,
                "t_s": round(self._stamps[4 * index + 3] - self.started, 6),
                "rss_bytes": dict(zip(pids, self._rss[base:base + len(pids)])),
                "cpu_ticks": dict(zip(pids, self._ticks[base:base + len(pids)])),
            })
        return samples

    def write(self):
        if not self.path:
            return
        if self.trained_s is None:
            self.finish()
        document = {
            "workload": self.workload,
            "main_pid": self.main_pid,
            "cpu_count": os.cpu_count(),
            "clock_ticks_per_s": CLOCK_TICKS,
            "torch_threads": torch.get_num_threads(),
            "ending": self.ending,
            "epochs": self.epochs,
            "steps_done": self.step_count,
            "trained_s": round(self.trained_s, 6),
            "loop_began_s": None if self.loop_began is None else
            round(self.loop_began - self.started, 6),
            "facts": self.facts,
            "machine": self.machine,
            "steps": self._steps(),
            "rss": self._samples(),
        }
        temporary = self.path + ".tmp"
        with open(temporary, "w") as out:
            json.dump(document, out, indent=0, sort_keys=True, default=list)
        os.replace(temporary, self.path)


def run_workload(name, truth_path, body):
    """Runs body(truth) and writes the truth file to truth_path however it ends: an
    exception is recorded as ending "exception" (a KeyboardInterrupt, from SIGINT, as
    "signal") and raised again, so the program ends as it would have without the truth
    file."""
    truth = Truth(name, truth_path)
    try:
        body(truth)
    except KeyboardInterrupt:
        truth.ending = "signal"
        raise
    except BaseException:
        truth.ending = "exception"
        raise
    finally:
        truth.finish()
        truth.write()


# --- data and model --------------------------------------------------------------------

_COMPRESSED = zlib.compress(bytes(range(256)) * 4096, 6)  # 1 MiB of bytes, compressed


def decode_cpu(milliseconds):
    """Decodes (zlib-inflates) a buffer until milliseconds of this thread's CPU time
    are spent: CPU work of a known cost whatever the wall time it takes."""
    deadline = time.thread_time() + milliseconds / 1000.0
    while time.thread_time() < deadline:
        zlib.decompress(_COMPRESSED)


class Samples(Dataset):
    """Deterministic synthetic samples: a feature vector and a label. sleep_ms waits
    like slow storage (I/O), decode_ms spends CPU like a decoder; pieces > 0 returns the
    sample as that many small tensors instead of one (a variable-length record)."""

    def __init__(self, size, sleep_ms=0.0, decode_ms=0.0, pieces=0, seed=1):
        self.size = size
        self.sleep_ms = sleep_ms
        self.decode_ms = decode_ms
        self.pieces = pieces
        self.seed = seed

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.sleep_ms > 0:
            time.sleep(self.sleep_ms / 1000.0)
        if self.decode_ms > 0:
            decode_cpu(self.decode_ms)
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        label = index % CLASSES
        if self.pieces > 0:
            parts = [torch.rand(FEATURES // self.pieces + 1, generator=generator)
                     for _ in range(self.pieces)]
            return parts, label
        features = torch.rand(FEATURES, generator=generator)
        features[label] += 1.0
        return features, label


def make_model(hidden, depth=2):
    """An MLP whose hidden width and depth set the compute per step."""
    layers, width = [], FEATURES
    for _ in range(depth):
        layers += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    layers.append(nn.Linear(width, CLASSES))
    return nn.Sequential(*layers)


def train_step(model, optimizer, features, labels):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss


def model_step_alone_ms(hidden, batch_size, steps=30, warmup=5):
    """The median wall time of one train_step of make_model(hidden) on a batch kept in
    memory, on this process's torch threads (no loader, no recording), in ms: what a
    scenario whose waits or costs are set against the model's step sizes them from."""
    model = make_model(hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    features = torch.rand(batch_size, FEATURES)
    labels = torch.randint(0, CLASSES, (batch_size,))
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        train_step(model, optimizer, features, labels)
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[len(times) // 2]


def source_line(path, text):
    """"FILE:LINE" of the first line of the file at path that begins with text (its
    indentation aside): where a workload's own code does something, as profopt names a line
    (the file's base name)."""
    with open(path) as source:
        for number, line in enumerate(source, 1):
            if line.lstrip().startswith(text):
                return f"{os.path.basename(path)}:{number}"
    raise ValueError(f"{text!r} is not in {path}")


def interrupt_self():
    """SIGINT to this process, as a Ctrl-C or a job scheduler's stop would send."""
    os.kill(os.getpid(), signal.SIGINT)
