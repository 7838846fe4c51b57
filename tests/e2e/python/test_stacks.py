#!/usr/bin/python3
"""The stack sampler (profopt._stacks, docs/sampling.md) is safe and invisible: profopt.run
(stacks_hz=...) starts it for the run and stops it at its end; at a high rate it samples through generators, exceptions and threads with the same results as
without it; a forked child restarts it, spawned and forkserver DataLoader workers start it
from the environment, and a DataLoader's training gives the same losses bit for bit with
and without it for each start method; an exec'd program does not die of SIGPROF; a program
that uses SIGPROF itself is left alone with one warning; on wall time (stacks_clock="wall")
it samples while the program waits. Runs without a recording session
(the events are then dropped in libprofopt, after all of the sampler's own work)."""

import os
import signal
import subprocess
import sys
import threading
import time
import warnings

try:
    import torch
    from torch.utils.data import DataLoader, Dataset
except ImportError:  # interpreters without torch use python_work alone (stress_stacks --plain)
    torch = DataLoader = None
    Dataset = object

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tracepoints", "python"))

import profopt  # noqa: E402
from profopt import _stacks  # noqa: E402

HZ = 2000  # 20 times the default: more chances to interrupt anything
RESULTS = {"passed": 0, "failed": 0}


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + text, flush=True)
    RESULTS["passed" if condition else "failed"] += 1


def squares(count):
    for value in range(count):
        yield value * value


def fragile(value):
    if value % 7 == 0:
        raise ValueError(value)
    return value + 1


def python_work(rounds):
    """CPU work through a generator, exceptions and a thread pool; deterministic."""
    total = 0
    for _ in range(rounds):
        for value in squares(2000):
            try:
                total += fragile(value)
            except ValueError as error:
                total -= error.args[0] % 5
    results = [0] * 3

    def worker(slot):
        results[slot] = sum(fragile(v) for v in range(1, 20000) if v % 7)

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return total, tuple(results)


class Noisy(Dataset):
    """Samples whose making takes CPU in Python; the first item says whether this process
    samples and how often it did."""

    def __len__(self):
        return 48

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        value = sum(fragile(v) for v in range(3000) if v % 7)
        features = torch.randn(16, generator=generator) + value % 3
        return features, index % 2, int(_stacks._State.running), _stacks.taken()[0]


def losses_and_sampling(context):
    torch.manual_seed(3)
    loader = DataLoader(Noisy(), batch_size=8, num_workers=2, multiprocessing_context=context)
    model = torch.nn.Linear(16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, running, samples = [], [], []
    for features, labels, worker_running, worker_samples in profopt.instrument(loader):
        loss = torch.nn.functional.cross_entropy(model(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        running += worker_running.tolist()
        samples.append(int(worker_samples.max()))
    return losses, all(running), max(samples)


def test_same_results():
    _stacks.stop()
    plain = python_work(150)
    check(_stacks.start(HZ), "the sampler starts on this interpreter")
    wanted = os.environ.get(_stacks.READER_ENVIRONMENT) != "handler"
    check(_stacks._State.native == wanted,
          "libprofopt reads the frames of every thread" if wanted else
          "the module's handler samples the main thread (PROFOPT_STACKS_READER=handler)"
          f"{'' if _stacks._State.native_error is None else ': ' + _stacks._State.native_error}")
    before = _stacks.taken()[0]
    sampled = python_work(150)
    check(sampled == plain, "generators, exceptions and threads: the same results sampled")
    check(_stacks.taken()[0] > before,
          f"samples were taken meanwhile ({_stacks.taken()[0] - before})")


def test_counter_rate():
    """On CPU time the perf counters fire at the rate asked, where ITIMER_PROF fires at most
    at the kernel's tick (250 Hz here): 0.3 s of CPU at 1 kHz gives close to 300 samples,
    standing for the CPU time spent. The work stays on the main thread: a thread that lives
    less than the watcher's 50 ms is not sampled by libprofopt's sampler."""
    _stacks.stop()
    check(_stacks.start(1000), "the sampler starts at 1 kHz")
    if not _stacks._State.counter:
        print("note the kernel refused a perf counter: ITIMER_PROF samples (tick-limited)")
        _stacks.stop()
        _stacks.start(HZ)  # as the tests after this one expect
        return
    before, before_ns = _stacks.taken()
    started = time.thread_time()
    while time.thread_time() < started + 0.3:
        sum(fragile(v) for v in range(1, 2000) if v % 7)
    spent = time.thread_time() - started
    samples, sampled_ns = _stacks.taken()
    samples -= before
    sampled_s = (sampled_ns - before_ns) / 1e9
    _stacks.stop()
    _stacks.start(HZ)  # as the tests after this one expect
    check(samples >= 0.6 * spent * 1000,
          f"1 kHz on a perf counter: {samples} samples in {spent:.3f} s of CPU (the tick "
          "would allow 75)")
    check(abs(sampled_s - spent) <= 0.1 * spent + 0.005,
          f"the samples stand for the CPU time spent ({sampled_s:.3f} s of {spent:.3f} s)")


def test_fork():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        deadline = time.process_time() + 0.3
        while time.process_time() < deadline:
            python_work(1)
        # the child's own counter (fork does not inherit the parent's), else ITIMER_PROF
        os.write(write, f"{int(_stacks._State.running)} {_stacks.taken()[0]} "
                        f"{_stacks.armed()}".encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 100).decode().split()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    check(status == 0 and answer[0] == "1" and int(answer[1]) > 0 and answer[2] == "True",
          f"a forked child restarts the timer and samples ({answer})")


def test_exec():
    pid = os.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-c",
                                  "import time\nt = time.process_time() + 0.3\n"
                                  "while time.process_time() < t: pass"])
    _, status = os.waitpid(pid, 0)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
          f"an exec'd program runs to its end (wait status {status})")


def loader_run(context, hz):
    """losses_and_sampling(context) in a new interpreter, PROFOPT_STACKS_HZ=hz (0: unset),
    so that its forkserver starts with the environment of the run."""
    env = dict(os.environ)
    env.pop(_stacks.ENVIRONMENT, None)
    if hz:
        env[_stacks.ENVIRONMENT] = str(hz)
    done = subprocess.run([sys.executable, __file__, "--loader", context], env=env,
                          capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        print(done.stdout + done.stderr)
        return None, False, 0
    losses, running, samples = done.stdout.strip().splitlines()[-1].split(" | ")
    return losses, running == "True", int(samples)


def test_loaders():
    for context in ("fork", "spawn", "forkserver"):
        plain, _, _ = loader_run(context, 0)
        sampled, running, samples = loader_run(context, HZ)
        check(plain is not None and sampled == plain,
              f"{context} workers: the same losses bit for bit")
        check(running and samples > 0,
              f"{context} workers sample ({samples} samples in the busiest worker)")


def test_taken():
    _stacks.stop()
    own = lambda signum, frame: None  # noqa: E731
    previous = signal.signal(signal.SIGPROF, own)
    _stacks._State.warned = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = _stacks.start(HZ)
        again = _stacks.start(HZ)
    check(not started and not again and signal.getsignal(signal.SIGPROF) is own,
          "a program's own SIGPROF handler is left alone")
    check(len(caught) == 1 and "already uses SIGPROF" in str(caught[0].message),
          f"with one warning line ({[str(w.message) for w in caught]})")
    signal.signal(signal.SIGPROF, previous)


def test_run_option():
    _stacks.stop()
    os.environ.pop(_stacks.ENVIRONMENT, None)
    with profopt.run(stacks_hz=200):
        running = _stacks._State.running
        environment = os.environ.get(_stacks.ENVIRONMENT)
        before = _stacks.taken()[0]
        python_work(100)
        taken = _stacks.taken()[0] - before
    check(running and environment == "200" and taken > 0,
          f"profopt.run(stacks_hz=200) samples ({taken}) and sets {_stacks.ENVIRONMENT} "
          f"({environment}) for the workers it spawns")
    check(not _stacks._State.running and _stacks.ENVIRONMENT not in os.environ,
          "the run's end stops the sampler and restores the environment")


def blocked(seconds):
    time.sleep(seconds)  # waiting, as a read from remote storage does


def blocked_in_span(seconds):
    with profopt.span("preprocess", label="prefetch_thread"):
        blocked(seconds)


def test_wall():
    """stacks_clock="wall": samples on wall time, also while the program waits; a forked
    child restarts its timer; an exec'd program is not hit; other clocks are refused."""
    _stacks.stop()
    check(_stacks.start(1000, "wall"), "the wall-time sampler starts")
    before = _stacks.taken()[1]
    blocked(0.3)
    # On a busy machine expirations merge (the handler runs late): each sample then stands
    # for more periods, and the samples' weights, not their number, cover the wait.
    waited_ms = (_stacks.taken()[1] - before) / 1e6
    check(waited_ms >= 100, f"0.3 s of waiting at 1000 Hz of wall time: samples of "
          f"{waited_ms:.0f} ms")
    # libprofopt's reader gives the main thread and every thread that began a profopt
    # span its own wall-time timer (from the watcher's next look, 50 ms at most): a thread
    # that waits in a span beside the main thread adds its wait, one that only waits (a
    # queue's feeder) adds nothing; the module's handler samples the main thread only.
    before = _stacks.taken()[1]
    in_span = threading.Thread(target=blocked_in_span, args=(0.5,))
    plain = threading.Thread(target=blocked, args=(0.5,))
    in_span.start()
    plain.start()
    blocked(0.5)
    in_span.join()
    plain.join()
    waited_ms = (_stacks.taken()[1] - before) / 1e6
    if _stacks._State.native:
        check(650 <= waited_ms <= 1100, f"three threads waiting 0.5 s each, one in a span: "
              f"samples of {waited_ms:.0f} ms (the main thread's and the span's, the "
              f"span's from the watcher's first look)")
    else:
        check(350 <= waited_ms <= 600, f"the handler samples the main thread only: "
              f"{waited_ms:.0f} ms for three threads waiting 0.5 s each")
    plain_work = python_work(50)
    check(plain_work == python_work(50), "the same results while sampling on wall time")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        blocked(0.3)
        os.write(write, f"{int(_stacks.armed())} {_stacks.taken()[1]}".encode())
        os._exit(0)
    os.close(write)
    answer = os.read(read, 100).decode().split()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    check(status == 0 and answer[0] == "1" and int(answer[1]) >= 100e6,
          f"a forked child starts its own wall-time timer and samples ({answer}: running, "
          f"ns sampled)")
    test_exec()
    _stacks.stop()
    check(signal.getsignal(signal.SIGPROF) == signal.SIG_DFL, "stop() restores SIGPROF")
    _stacks._State.warned = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = _stacks.start(100, "sundial")
    check(not started and len(caught) == 1 and "neither of cpu, wall" in str(caught[0].message),
          f"another clock is refused with one warning ({[str(w.message) for w in caught]})")
    os.environ.pop(_stacks.CLOCK_ENVIRONMENT, None)
    with profopt.run(stacks_hz=200, stacks_clock="wall"):
        clock = (_stacks._State.clock, os.environ.get(_stacks.CLOCK_ENVIRONMENT))
    check(clock == ("wall", "wall") and _stacks.CLOCK_ENVIRONMENT not in os.environ,
          f"profopt.run(stacks_clock='wall') samples on wall time and sets "
          f"{_stacks.CLOCK_ENVIRONMENT} for the run ({clock})")


RESET_SCRIPT = """
import signal, sys, time
from profopt import _stacks
if not _stacks.start(1000, sys.argv[1]):
    sys.exit(3)
end = time.monotonic() + 0.3
while time.monotonic() < end:
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # as a program's own setup may do
    value = sum(range(20000))
    time.sleep(0.001)
_stacks.stop()
"""


def test_sigprof_reset():
    """A program that resets SIGPROF to its default action while sampled is not killed:
    the sampler's signals are SIGURG, whose default action is to ignore it (with the
    module's handler too, whose CPU timer is a POSIX timer on the process's CPU clock, not
    ITIMER_PROF)."""
    for clock, counters in (("wall", "1"), ("cpu", "1"), ("cpu", "0")):
        name = f"{clock} time" + (" by timers" if counters == "0" else "")
        env = dict(os.environ, PROFOPT_STACKS_COUNTERS=counters)
        env.pop(_stacks.ENVIRONMENT, None)
        done = subprocess.run([sys.executable, "-c", RESET_SCRIPT, clock], env=env,
                              capture_output=True, text=True, timeout=60)
        check(done.returncode == 0, f"a program that resets SIGPROF to SIG_DFL on {name} "
              f"runs to its end (status {done.returncode}{done.stderr.strip()[-200:]})")


WAITS_SCRIPT = """
import ctypes, os, sys, time
from profopt import _stacks
libc = ctypes.CDLL(None, use_errno=True)
if not _stacks.start(10000, "cpu"):
    sys.exit(3)
child = os.fork()
bad = 0
for call in ("usleep", "poll", "nanosleep", "select"):
    for _ in range(300):
        sum(range(20000))  # CPU time (about 0.2 ms), for the sampler to fire on
        begin = time.monotonic()
        if call == "usleep":
            result = libc.usleep(1000)
        elif call == "poll":
            result = libc.poll(None, 0, 1)
        elif call == "select":
            timeout = (ctypes.c_long * 2)(0, 1000)
            result = libc.select(0, None, None, None, timeout)
        else:
            wait = (ctypes.c_long * 2)(0, 1000000)
            result = libc.nanosleep(wait, None)
        if result != 0 or time.monotonic() - begin < 0.001:
            bad += 1
print(("child" if child == 0 else "parent"), bad, flush=True)
if child == 0:
    os._exit(1 if bad else 0)
_, status = os.waitpid(child, 0)
_stacks.stop()
sys.exit(1 if bad or status else 0)
"""


def test_waits():
    """C-level waits through ctypes (libc.usleep, poll, nanosleep, select, which CPython
    does not retry), 300 of 1 ms each, sampled at 10 kHz of CPU time, in the process and a forked child: none is
    interrupted (the counters signal only in user mode)."""
    env = dict(os.environ)
    env.pop(_stacks.ENVIRONMENT, None)
    done = subprocess.run([sys.executable, "-c", WAITS_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    check(done.returncode == 0, "C waits through ctypes at 10 kHz of CPU time return whole "
          f"(interrupted: {done.stdout.split()}{done.stderr.strip()[-200:]})")


TAKEOVER_SCRIPT = """
import signal, sys, time
from profopt import _stacks
got = []
if not _stacks.start(1000, sys.argv[1]):
    sys.exit(3)
end = time.monotonic() + 0.1
while time.monotonic() < end:
    sum(range(20000))
signal.signal(signal.SIGURG, lambda signum, frame: got.append(signum))
before = _stacks.taken()[0]
end = time.monotonic() + 0.4
while time.monotonic() < end:
    sum(range(20000))
print(len(got), _stacks.taken()[0] - before, _stacks.armed())
"""


def test_takeover():
    """A program that installs its own SIGURG handler while libprofopt's reader samples:
    the sampler stops within its watcher's period (50 ms), says so on stderr, and the
    program's handler gets about that period's signals (50 at 1 kHz; 150 allowed for a busy
    machine, where the watcher runs late), not the 400 of the whole 0.4 s."""
    if os.environ.get(_stacks.READER_ENVIRONMENT) == "handler":
        print("note skipped: the module's handler does not watch its signal's action "
              "(docs/sampling.md, Limits)")
        return
    for clock in ("cpu", "wall"):
        env = dict(os.environ)
        env.pop(_stacks.ENVIRONMENT, None)
        done = subprocess.run([sys.executable, "-c", TAKEOVER_SCRIPT, clock], env=env,
                              capture_output=True, text=True, timeout=60)
        fields = done.stdout.split()
        delivered, taken, armed = (int(fields[0]), int(fields[1]), fields[2]) \
            if len(fields) == 3 else (-1, -1, "")
        check(done.returncode == 0 and 0 <= delivered <= 150 and taken <= 150 and
              armed == "False" and "function samples stopped" in done.stderr,
              f"on {clock} time a program's own SIGURG handler stops the sampler "
              f"({delivered} signals to it, {taken} samples after, armed {armed}, "
              f"stderr {done.stderr.strip()[-200:]!r})")


def test_refused():
    check(_stacks.unsupported_reason() is None, "CPython 3.8+ on Linux is supported")
    script = ("import sys; sys.implementation.name = 'pypy'\n"
              "from profopt import _stacks\nprint(_stacks.unsupported_reason())")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tracepoints",
                                                                      "python")))
    check("need CPython" in out.stdout and out.stdout.count("\n") == 1,
          f"another interpreter is refused in one line ({out.stdout.strip()!r})")


def main():
    test_refused()
    test_run_option()
    test_same_results()
    test_counter_rate()
    test_fork()
    test_exec()
    test_loaders()
    test_taken()
    test_wall()
    test_sigprof_reset()
    test_takeover()
    test_waits()
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--loader"]:
        losses, running, samples = losses_and_sampling(sys.argv[2])
        print(f"{losses!r} | {running} | {samples}")
        sys.exit(0)
    sys.exit(main())
