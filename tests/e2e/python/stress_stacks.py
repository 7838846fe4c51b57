#!/usr/bin/python3
"""stress_stacks.py [--target N] [--epochs E] [--cpu-seconds S] [--clocks cpu,wall]
[--plain]: a
million function samples change nothing (docs/sampling.md, "What it leaves alone"): the
stack sampler runs at its highest rate (10,000 samples per second, on CPU time, where
libprofopt reads every thread's frames in its signal handler, and on wall time, where it
reads those of each process's main thread and of the threads that began a profopt span, in
turn) through generators, exceptions and
threads in the training process (in CPU rounds two threads at work at once for S seconds
of CPU each), and through DataLoader workers started by fork (new workers every epoch:
respawned), spawn and forkserver, until every process together has taken at least N
samples (default 1,000,000; the test suite runs 100,000 with 4 epochs a round, about a
minute). Every
result (the Python work's values, each epoch's losses bit for bit) equals the one computed
without the sampler, no process dies or hangs (each run has a deadline), and the samples
each process counted are added up: the test fails below the million. Runs without a
recording session, as unit.python.stacks does (libprofopt drops the events after all of
the sampler's own work). With --plain (the interpreters without torch: pyenv's 3.9 to
3.13, e2e.python.stress_stacks.py3X), a forked child and a new interpreter sampling from
the environment run the Python work in place of the DataLoader workers, for a few
seconds; the first rounds check that libprofopt reads the frames (not the module's
handler) unless PROFOPT_STACKS_READER=handler."""

import argparse
import os
import subprocess
import sys
import threading
import time

import test_stacks
from test_stacks import Noisy, check, python_work, RESULTS

from profopt import _stacks

TARGET = 1_000_000
HZ = _stacks.MAX_HZ
DEADLINE_S = 480  # for the whole test; a hang ends it with the count so far
EPOCHS = 8  # per interpreter: its start-up (importing torch) takes no samples


def epochs(context, count):
    """count epochs of a DataLoader whose workers are new every epoch; each epoch's losses,
    and per worker process the most samples it counted."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(3)
    loader = DataLoader(Noisy(), batch_size=8, num_workers=2, multiprocessing_context=context,
                        persistent_workers=False)
    model = torch.nn.Linear(16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, samples = [], {}
    for epoch in range(count):
        for index, (features, labels, _, worker_samples) in enumerate(loader):
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            # a worker's samples grow through its epoch: its largest count is its total
            samples[(epoch, index % 2)] = max(samples.get((epoch, index % 2), 0),
                                              int(worker_samples.max()))
    return losses, sum(samples.values())


def threads_at_work(seconds, plain_work):
    """python_work(20) over and over on the main thread and on a second thread at once,
    each for seconds of its own CPU time (long enough for libprofopt's watcher to give the
    second thread its counter): whether every result equals plain_work."""
    results = {"main": True, "other": True}

    def work(name):
        deadline = time.thread_time() + seconds
        while time.thread_time() < deadline:
            results[name] = results[name] and python_work(20) == plain_work

    other = threading.Thread(target=work, args=("other",))
    other.start()
    work("main")
    other.join()
    return results["main"] and results["other"]


def child_round(clock, *child_arguments):
    """This script with child_arguments in a new interpreter (sampling from the environment
    when clock is set, so that spawn and forkserver workers sample too): the result it
    printed and every process's samples, or (None, 0)."""
    env = dict(os.environ)
    for name in (_stacks.ENVIRONMENT, _stacks.CLOCK_ENVIRONMENT):
        env.pop(name, None)
    if clock:
        env[_stacks.ENVIRONMENT] = str(HZ)
        env[_stacks.CLOCK_ENVIRONMENT] = clock
    done = subprocess.run([sys.executable, __file__, *child_arguments], env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        print(done.stdout[-2000:] + done.stderr[-2000:])
        return None, 0
    result, samples = done.stdout.strip().splitlines()[-1].split(" | ")
    return result, int(samples)


def loader_round(context, clock, count):
    """epochs() in a new interpreter: its losses and every process's samples."""
    return child_round(clock, "--loader-epochs", context, str(count))


def fork_round(plain_work):
    """python_work(20) in a forked child (the sampler restarts in it): whether the child
    ended well with plain_work's result, and the samples it took."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        same = python_work(20) == plain_work
        os.write(write, f"{int(same)} {_stacks.taken()[0]}".encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 100).decode().split()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    ok = status == 0 and len(answer) == 2 and answer[0] == "1"
    return ok, int(answer[1]) if ok else 0


def plain_children(rounds, clock, plain_work):
    """--plain: a forked child and a new interpreter sampling from the environment (as
    spawned workers start) run python_work(20); the samples they took."""
    ok, forked = fork_round(plain_work)
    if not ok:
        check(False, f"round {rounds}: a forked child failed or its results changed on "
                     f"{clock} time")
    result, started = child_round(clock, "--plain-work")
    if result != repr(plain_work):
        check(False, f"round {rounds}: a new interpreter's results changed on {clock} time "
                     f"({result})")
    return forked + started


def check_reader(clock):
    """The reader this interpreter gets: libprofopt's, unless PROFOPT_STACKS_READER=handler."""
    wanted = os.environ.get(_stacks.READER_ENVIRONMENT, "").strip().lower() != "handler"
    version = "%d.%d" % sys.version_info[:2]
    error = _stacks._State.native_error
    check(_stacks._State.native == wanted,
          (f"libprofopt reads every thread's frames on CPython {version} ({clock} time)"
           if wanted else f"the module's handler samples CPython {version}") +
          ("" if error is None else f": {error}"))


def main(argv):
    global TARGET, EPOCHS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=int, default=TARGET)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--cpu-seconds", type=float, default=2.0,
                        help="each CPU round: seconds of CPU on each of two threads at once")
    parser.add_argument("--clocks", default="cpu,wall",
                        help="the rounds' clocks, in turn (cpu: libprofopt's reader)")
    parser.add_argument("--plain", action="store_true",
                        help="without torch: forked and new interpreters run python_work "
                             "in place of DataLoader workers")
    arguments = parser.parse_args(argv)
    clocks = [clock for clock in arguments.clocks.split(",") if clock]
    TARGET, EPOCHS = arguments.target, arguments.epochs
    began = time.monotonic()
    total = 0
    plain_work = python_work(20)
    plain_losses = {} if arguments.plain else {
        context: loader_round(context, None, EPOCHS)[0]
        for context in ("fork", "spawn", "forkserver")}
    rounds = 0
    while (total < TARGET or rounds < len(clocks)) and time.monotonic() - began < DEADLINE_S:
        clock = clocks[rounds % len(clocks)]
        rounds += 1
        _stacks.stop()
        if not _stacks.start(HZ, clock):
            check(False, f"the sampler starts on {clock} time")
            break
        if rounds <= len(clocks):
            check_reader(clock)
        before = _stacks.taken()[0]
        same = python_work(20) == plain_work
        if clock == "cpu":  # every thread sampled: two at once, each on its own counter
            same = threads_at_work(arguments.cpu_seconds, plain_work) and same
        total += _stacks.taken()[0] - before
        _stacks.stop()
        if not same:
            check(False, f"round {rounds}: the Python work's results changed on {clock} time")
        if arguments.plain:
            total += plain_children(rounds, clock, plain_work)
        for context in plain_losses:
            losses, samples = loader_round(context, clock, EPOCHS)
            total += samples
            if losses != plain_losses[context]:
                check(False, f"round {rounds}: {context} workers' losses changed on {clock} "
                             f"time ({samples} samples)")
        print(f"round {rounds} ({clock}): {total} samples so far, "
              f"{time.monotonic() - began:.0f} s", flush=True)
    check(total >= TARGET, f"{total} samples in {rounds} rounds, {time.monotonic() - began:.0f} s "
                           f"(target {TARGET}): every result unchanged"
                           if not RESULTS["failed"] else f"{total} samples")
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plain-work"]:
        print(f"{python_work(20)!r} | {_stacks.taken()[0]}")
        sys.exit(0)
    if sys.argv[1:2] == ["--loader-epochs"]:
        losses, samples = epochs(sys.argv[2], int(sys.argv[3]))
        main_samples = _stacks.taken()[0]
        print(f"{losses!r} | {samples + main_samples}")
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
