#!/usr/bin/python3
"""Cost of function samples (profopt-record --stacks, docs/sampling.md) on a real PyTorch
training loop: its throughput recorded with and without --stacks=HZ.

The workload trains an MLP on the CPU from a map-style dataset whose __getitem__ does CPU
work in Python and torch (about 1 ms per sample) through 2 DataLoader workers, under
profopt-record, and measures two things over its loop: training samples per second of wall
time (time.perf_counter), and per second of CPU time of the process and its workers
(getrusage, the workers counted once joined). The sampler's cost is CPU time, so the second
is what it changes; on a machine whose cores the job keeps busy, throughput falls by the
same share. On a shared machine the wall-time throughput also moves with other programs'
load, which the CPU-time figure does not see. Runs alternate (plain, --stacks=HZ for each
HZ, plain, ...) so that the machine's load falls on every configuration alike; medians are
reported, with the cost against the plain median. Run it next to a session daemon:

    tests/lib/with-sessiond.sh /usr/bin/python3 bench/stacks_overhead.py --build build
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_record(index):
    """One training sample: Python work (parsing, bookkeeping) and torch work, ~1 ms."""
    import torch

    generator = torch.Generator().manual_seed(index)
    image = torch.rand(3, 32, 32, generator=generator)
    value = 0
    for step in range(4000):
        value = (value * 31 + step + index) & 0xFFFF
    image = torch.nn.functional.avg_pool2d(image, 2) * (value % 3 + 1)
    return image.flatten(), index % 10


def child(steps, workers):
    sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))
    import torch
    from torch.utils.data import DataLoader, Dataset

    import profopt

    class Records(Dataset):
        def __len__(self):
            return steps * 16

        def __getitem__(self, index):
            return make_record(index)

    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = profopt.instrument(DataLoader(Records(), batch_size=16, num_workers=workers))
    model = torch.nn.Sequential(torch.nn.Linear(768, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with profopt.run(loader=loader, model=model, optimizer=optimizer):
        cpu_before, started, samples = tree_cpu_s(), time.perf_counter(), 0
        batches = iter(loader)
        for features, labels in batches:
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            samples += len(labels)
        elapsed = time.perf_counter() - started
        del batches  # joins the workers, whose CPU time RUSAGE_CHILDREN then counts
        cpu_s = tree_cpu_s() - cpu_before
    print(f"samples_per_s {samples / elapsed:.3f} samples_per_cpu_s {samples / cpu_s:.3f}")


def tree_cpu_s():
    """CPU seconds of this process and of the children it has waited for."""
    return sum(usage.ru_utime + usage.ru_stime
               for usage in (resource.getrusage(resource.RUSAGE_SELF),
                             resource.getrusage(resource.RUSAGE_CHILDREN)))


def in_process(rates, rounds, items):
    """Thread CPU time per make_record() with the sampler off and at each rate, in rounds
    that alternate within one process. A rate HZ samples as profopt does by default
    (libprofopt's sampler reading the frames in its signal handler), HZw the same on wall
    time (a timer on CLOCK_MONOTONIC for the thread); HZh with the module's
    Python signal handler on the main thread's perf counter, HZt with that handler on
    ITIMER_PROF. For the handler, the CPU time it took itself (its recording function timed
    with the thread's CPU clock) is its share of the CPU time, less the kernel's delivery of
    each signal (a few us); for libprofopt's reader, whose work is inside the signal, the
    cost is the CPU time a record took more than without sampling, per sample (at 10 kHz it
    is large enough to see over the rounds' variation). Run it under profopt-record so that
    the events are written."""
    sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))
    import torch

    from profopt import _stacks

    record, handler_ns = _stacks._record, [0]

    def timed_record(frame):
        started = time.thread_time_ns()
        record(frame)
        handler_ns[0] += time.thread_time_ns() - started

    _stacks._record = timed_record
    torch.set_num_threads(1)
    per_item = {hz: [] for hz in rates}
    handler = {hz: [0, 0, 0] for hz in rates}  # handler ns, CPU ns, samples
    for round_index in range(rounds):
        order = rates[round_index % len(rates):] + rates[:round_index % len(rates)]
        for hz in order:
            if hz:
                kind = str(hz)[-1] if str(hz)[-1] in "htw" else ""
                os.environ["PROFOPT_STACKS_COUNTERS"] = "0" if kind == "t" else "1"
                os.environ["PROFOPT_STACKS_READER"] = \
                    "handler" if kind in ("h", "t") else "libprofopt"
                _stacks.start(int(str(hz).rstrip("htw")), "wall" if kind == "w" else "cpu")
            handler_ns[0], samples = 0, _stacks.taken()[0]
            started = time.thread_time_ns()
            for index in range(items):
                make_record(index)
            spent = time.thread_time_ns() - started
            samples = _stacks.taken()[0] - samples
            _stacks.stop()
            per_item[hz].append(spent / items)
            handler[hz][0] += handler_ns[0]
            handler[hz][1] += spent
            handler[hz][2] += samples
    plain = statistics.median(per_item[0])
    print(f"in one process, {rounds} rounds of {items} records:")
    for hz in rates:
        median = statistics.median(per_item[hz])
        handler_ns_total, cpu_ns, samples = handler[hz]
        kind = str(hz)[-1] if hz and str(hz)[-1] in "htw" else ""
        name = "plain" if not hz else f"--stacks={str(hz).rstrip('htw')}" + {
            "t": " (handler, ITIMER_PROF)", "h": " (handler, counter)",
            "w": " (libprofopt, wall)", "": " (libprofopt)"}[kind]
        line = f"  {name:>32}: {median / 1e3:8.1f} us CPU per record (median)"
        if hz:
            per_record = samples / (rounds * items)  # samples in one record's time
            line += (f", {100 * (median - plain) / plain:+.2f}%; {samples} samples "
                     f"({1e9 * samples / cpu_ns:.0f} per CPU s), "
                     f"{(median - plain) / max(per_record, 1e-9) / 1e3:.1f} us more CPU per "
                     "sample")
        if kind in ("h", "t"):
            line += (f"; handler {handler_ns_total / max(samples, 1) / 1e3:.1f} us each, "
                     f"{100 * handler_ns_total / cpu_ns:.2f}% of the CPU time")
        print(line)


def per_sample_us(depth, count=20000):
    """CPU microseconds one sample costs the sampled thread, stack walk and ctypes call
    included, at a stack depth of depth frames (without a session, libprofopt drops the
    event after its enabled check: the event's own cost is a few hundred ns more)."""
    sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))
    from profopt import _stacks

    def nested(level):
        if level > 1:
            return nested(level - 1)
        frame = sys._getframe()
        _stacks._record(frame)  # describes the code objects once
        started = time.thread_time_ns()
        for _ in range(count):
            _stacks._record(frame)
        return (time.thread_time_ns() - started) / count / 1000.0

    return nested(depth)


def one_run(build, hz, steps, workers):
    with tempfile.TemporaryDirectory(prefix="profopt-stacks-bench-") as work:
        command = [os.path.join(build, "bin", "profopt-record"), "-o",
                   os.path.join(work, "trace")]
        if hz:
            command.append(f"--stacks={hz}")
        command += ["--", sys.executable, os.path.abspath(__file__), "--child",
                    "--steps", str(steps), "--workers", str(workers)]
        env = dict(os.environ, PROFOPT_LIBRARY=os.path.join(build, "lib", "libprofopt.so"))
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        for line in done.stdout.splitlines():
            if line.startswith("samples_per_s "):
                fields = line.split()
                return float(fields[1]), float(fields[3])
        raise SystemExit(f"the run with hz={hz} failed ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}{done.stderr[-2000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--hz", default="100,1000",
                        help="sampling rates, comma-separated; with --in-process, HZw: "
                        "libprofopt's reader on wall time, HZh: the module's signal handler, "
                        "HZt: the handler on ITIMER_PROF")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--per-sample", action="store_true",
                        help="only measure the CPU time one sample costs, at 10 to 80 frames")
    parser.add_argument("--in-process", action="store_true",
                        help="only compare the CPU time of the same work with the sampler "
                        "off and on, alternating in one process (run it under profopt-record)")
    args = parser.parse_args()
    if args.child:
        child(args.steps, args.workers)
        return
    if args.in_process:
        in_process([0] + [hz if hz[-1] in "htw" else int(hz)
                          for hz in args.hz.split(",") if hz], args.reps, 400)
        return
    if args.per_sample:
        for depth in (10, 20, 40, 80):
            cost = per_sample_us(depth)
            print(f"depth {depth:3d}: {cost:6.1f} us per sample: {cost * 100 / 1e4:.2f}% of "
                  f"the CPU at 100 Hz, {cost * 1000 / 1e4:.2f}% at 1 kHz")
        return
    rates = [0] + [int(hz) for hz in args.hz.split(",") if hz]
    results = {hz: [] for hz in rates}
    for rep in range(args.reps):
        for hz in rates:
            results[hz].append(one_run(args.build, hz, args.steps, args.workers))
            wall, cpu = results[hz][-1]
            print(f"rep {rep + 1}: {'plain' if not hz else f'--stacks={hz}'}: "
                  f"{wall:.1f} samples/s, {cpu:.1f} samples per CPU second", flush=True)
    plain = [statistics.median(run[k] for run in results[0]) for k in (0, 1)]
    print(f"\nmedians of {args.reps} runs, {args.workers} workers, {args.steps} steps of 16:")
    for hz in rates:
        wall, cpu = (statistics.median(run[k] for run in results[hz]) for k in (0, 1))
        name = "plain" if not hz else f"--stacks={hz}"
        costs = "" if not hz else (f"  cost {100 * (plain[0] - wall) / plain[0]:+.1f}% (wall), "
                                   f"{100 * (plain[1] - cpu) / plain[1]:+.1f}% (CPU)")
        print(f"  {name:>14}: {wall:8.1f} samples/s {cpu:8.1f} per CPU s{costs}")


if __name__ == "__main__":
    main()
