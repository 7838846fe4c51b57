"""Function-level samples of a Python process (opt-in, docs/sampling.md).

Where libprofopt reads this interpreter's frames (profopt_stacks_python: the release
builds of CPython 3.9 to 3.13 on 64-bit Linux), libprofopt's own sampler does it all: on CPU
time every thread has a perf task-clock counter (or a POSIX timer on its CPU clock), on
wall time the main thread and every thread that began a profopt span have a POSIX timer on
CLOCK_MONOTONIC (docs/sampling.md, "Which threads"), and the
signal handler reads the interrupted thread's Python frames from the interpreter's
structures, in microseconds, on every thread that runs Python, without the GIL. It forks,
execs and stops as for a C program (profopt.h, profopt_stacks_start).
PROFOPT_STACKS_READER=handler, or an interpreter it cannot read (another version, a debug
or free-threaded build: libprofopt says why in one line, kept in _State.native_error and
warned once), leaves the work to this module's signal handler below, which samples the
main thread only.

With the handler, every 1/hz seconds of the main thread's CPU time (a perf task-clock
counter of the main thread, profopt_signal_counter_start in libprofopt; where the kernel
refuses one, or PROFOPT_STACKS_COUNTERS=0, of the process's CPU time by a POSIX timer on
CLOCK_PROCESS_CPUTIME_ID, profopt_signal_cpu_timer_start, or where that fails by
setitimer(ITIMER_PROF)), whose signal (SIGURG; SIGPROF from ITIMER_PROF, which can send
no other) runs a Python signal handler on the main thread, the
main thread's Python stack is recorded as a profopt:stack_sample event: (code id, line)
pairs, innermost first, with the thread CPU time used since the previous sample (the time
the sample stands for: several timer expirations while a C call runs arrive as one signal,
and time other threads burn must not be given to the main thread's stack). Each code object
is described once per process (profopt:code). libprofopt wraps the signal's action
(profopt_native_frames): when the signal interrupts the main thread in native code, the
sample's innermost frame is that shared object ("[native] libjpeg.so.62").

The timer stops at interpreter exit and before os.execv/os.execve (a timer survives exec).

On with profopt-record --stacks[=HZ] (PROFOPT_STACKS_HZ in the environment, read when
profopt is imported: also in spawned DataLoader workers) or profopt.run(stacks_hz=HZ), which
sets the same variable for the processes it starts. Forked children (DataLoader workers)
restart the timer, which fork does not inherit, and describe their code objects again.

With PROFOPT_STACKS_CLOCK=wall (profopt-record --stacks-clock=wall, or
profopt.run(stacks_clock="wall")) the handler's SIGURG comes every 1/hz seconds of wall
time instead, from a POSIX timer on CLOCK_MONOTONIC aimed at the main thread
(profopt_signal_timer_start in libprofopt), running or waiting: time blocked in I/O, locks
and queues shows in the function that blocks (a blocking call interrupted by the signal
resumes after the handler, PEP 475). Each sample stands for one period per expiration of
the timer (1 + timer_getoverrun): a handler that runs late because the thread waited for a
core finds it where the expiration did, so the wait is not given to wherever the thread
resumes. (A sampler thread reading sys._current_frames() would see the main thread
only when it releases the GIL, never in Python code shorter than the switch interval.)

A program that already has a SIGPROF or SIGURG handler or an ITIMER_PROF timer is left
alone, with one warning line. SIGURG's default action is to ignore it: a program that
resets it, or SIGPROF, to the default action is not killed by a sample (except on
ITIMER_PROF, SIGPROF). CPython 3.8 and later run it; another implementation or version is
refused with one line saying why. The program's own results are unchanged: the handler
reads frames and never raises.
"""

import atexit
import ctypes
import os
import signal
import sys
import threading
import time
import warnings

from ._api import encode
from ._lib import LIB

ENVIRONMENT = "PROFOPT_STACKS_HZ"
CLOCK_ENVIRONMENT = "PROFOPT_STACKS_CLOCK"
COUNTERS_ENVIRONMENT = "PROFOPT_STACKS_COUNTERS"  # "0": ITIMER_PROF, never a perf counter
READER_ENVIRONMENT = "PROFOPT_STACKS_READER"  # "handler": this module's handler, main thread
CLOCKS = ("cpu", "wall")
DEFAULT_HZ = 100
MAX_HZ = 10000
MAX_DEPTH = 128  # PROFOPT_STACK_DEPTH_MAX
UNSUPPORTED = "unsupported"  # what start() returns when this interpreter is refused
# The signal of the main thread's counter and of the wall-time timer: SIGURG, whose default
# action is to ignore it, so that a program that resets it (or SIGPROF) to its default
# action is never killed by a sample (docs/sampling.md, "What it leaves alone").
SIGNAL = signal.SIGURG


class _State:
    hz = 0                # the sampling rate while running, else 0
    clock = "cpu"         # "cpu": samples on CPU time; "wall": on wall time
    counter = False       # on CPU time by the main thread's perf counter, not ITIMER_PROF
    cpu_timer = False     # else by a POSIX timer on the process's CPU clock (SIGURG)
    native = False        # libprofopt's sampler reads every thread's frames (no handler here)
    native_error = None   # why libprofopt could not read them, when it could not
    native_counts = False  # the latest start was libprofopt's: taken() reads its counts
    period_ns = 0         # wall: the timer's period, which each expiration stands for
    running = False
    in_handler = False    # a sample in progress (a second signal during it is skipped)
    codes = {}            # code object -> its id in this process
    last_cpu_ns = 0       # cpu: the main thread's CPU time at the previous sample
    samples = 0           # samples taken in this process (a fork starts again from 0)
    sampled_ns = 0        # the time they stand for (their weights), since then
    hooks = False         # the fork, exit and exec hooks are installed
    warned = False        # the one warning line was issued


# The frames of the sample being recorded, handed to libprofopt (which copies them).
_IDS = (ctypes.c_uint32 * MAX_DEPTH)()
_LINES = (ctypes.c_uint32 * MAX_DEPTH)()


def _warn_once(text):
    if not _State.warned:
        _State.warned = True
        warnings.warn(text, RuntimeWarning, stacklevel=3)


def unsupported_reason():
    """Why this interpreter cannot be sampled, or None."""
    if sys.implementation.name != "cpython":
        return (f"profopt: function samples need CPython; this is "
                f"{sys.implementation.name}, whose frames are not CPython's")
    if sys.version_info < (3, 8):
        return "profopt: function samples need CPython 3.8 or later (os.register_at_fork)"
    if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGPROF"):
        return "profopt: function samples need setitimer(ITIMER_PROF) and SIGPROF"
    return None


def _function_name(code):
    return getattr(code, "co_qualname", None) or code.co_name


def _describe(code):
    """A new id for code, recorded with its name, file and first line."""
    code_id = len(_State.codes) + 1
    _State.codes[code] = code_id
    LIB.profopt_code(code_id, encode(_function_name(code)), encode(code.co_filename),
                     code.co_firstlineno)
    return code_id


def _record(frame, tid=-1, weight_ns=None):
    # Every sample runs this: the loop is written out for speed (no call per frame).
    codes = _State.codes
    ids = []
    lines = []
    depth = 0
    while frame is not None and depth < MAX_DEPTH:
        code = frame.f_code
        code_id = codes.get(code)
        if code_id is None:
            code_id = _describe(code)
        ids.append(code_id)
        lines.append(frame.f_lineno or 0)
        frame = frame.f_back
        depth += 1
    if weight_ns is None and _State.clock == "wall":
        # each expiration of the timer is a sample of where the thread is: a handler that
        # runs late (the thread waited for a core) finds it where the expiration did
        weight_ns = _State.period_ns * (1 + LIB.profopt_signal_timer_overrun())
    elif weight_ns is None:
        now = time.thread_time_ns()
        weight_ns, _State.last_cpu_ns = now - _State.last_cpu_ns, now
    _IDS[:depth] = ids  # one sample at a time: the handler never runs twice at once
    _LINES[:depth] = lines
    LIB.profopt_stack_sample(tid, weight_ns, _IDS, _LINES, depth)
    _State.samples += 1
    _State.sampled_ns += weight_ns


def _on_sample(signum, frame):
    if _State.in_handler or not _State.running or frame is None:
        return
    _State.in_handler = True
    try:
        _record(frame)
    except Exception:  # a sample is never worth an exception in the program
        pass
    finally:
        _State.in_handler = False


def _arm(hz):
    period = 1.0 / hz
    if _State.clock == "wall":
        period_us = max(1, int(1e6 / hz))
        _State.period_ns = period_us * 1000
        error = LIB.profopt_signal_timer_start(int(SIGNAL), period_us)
        if error != 0:
            raise OSError(-error, "profopt_signal_timer_start failed")
        return
    _State.last_cpu_ns = time.thread_time_ns()
    # a perf task-clock counter of the main thread where the kernel allows it: it fires at
    # the period, where ITIMER_PROF fires at a scheduler tick after it, and samples then
    # cluster where the thread resumes on a shared core (docs/sampling.md)
    period_us = max(1, int(1e6 / hz))
    _State.counter = (os.environ.get(COUNTERS_ENVIRONMENT, "").strip() != "0" and
                      LIB.profopt_signal_counter_start(int(SIGNAL), period_us) == 0)
    # else a POSIX timer on the process's CPU clock, as ITIMER_PROF but on SIGURG and gone
    # at exec
    _State.cpu_timer = (not _State.counter and
                        LIB.profopt_signal_cpu_timer_start(int(SIGNAL), period_us) == 0)
    if not _State.counter and not _State.cpu_timer:
        # ITIMER_PROF can only send SIGPROF: the one case where the handler takes it
        signal.signal(signal.SIGPROF, _on_sample)
        signal.siginterrupt(signal.SIGPROF, False)
        LIB.profopt_native_frames(int(signal.SIGPROF))
        signal.setitimer(signal.ITIMER_PROF, period, period)


def _after_fork_in_child():
    if not _State.running or _State.native:
        return  # libprofopt's sampler restarts itself in a forked child
    _State.codes = {}  # a new process describes its code objects again
    _State.samples = 0
    _State.sampled_ns = 0
    _State.in_handler = False
    try:
        _arm(_State.hz)  # neither an ITIMER_PROF nor a POSIX timer survives fork
    except (OSError, ValueError):
        _State.running = False


def _stopping(function):
    """function, after the timer is stopped: an ITIMER_PROF survives execve, whose new
    program would die of its first SIGPROF."""
    def wrapper(*args, **kwargs):
        stop()
        return function(*args, **kwargs)
    wrapper.__wrapped__ = function
    return wrapper


def _install_hooks():
    """Forked children restart the timer (fork does not inherit it). The timer stops at
    interpreter exit (finalization restores SIGPROF's default action, which ends the
    process) and before os.execv/os.execve (os.exec* and os.spawnv* go through them)."""
    os.register_at_fork(after_in_child=_after_fork_in_child)
    atexit.register(stop)
    os.execv = _stopping(os.execv)
    os.execve = _stopping(os.execve)
    _State.hooks = True


def _taken():
    """Whether the program already uses SIGPROF, ITIMER_PROF or SIGURG itself."""
    for signum in (signal.SIGPROF, SIGNAL):
        handler = signal.getsignal(signum)
        if handler is not _on_sample and handler not in (signal.SIG_DFL, signal.SIG_IGN, None):
            return True
    return (signal.getsignal(signal.SIGPROF) is not _on_sample and
            signal.getitimer(signal.ITIMER_PROF) != (0.0, 0.0))


def start(hz=DEFAULT_HZ, clock="cpu"):
    """Starts sampling this process (and the children it forks) hz times per CPU second
    (clock "cpu") or per wall second (clock "wall"). Returns True when running, False when
    it could not start (one warning said why)."""
    if _State.running:
        return True
    hz = int(hz)
    if hz <= 0:
        return False
    hz = min(hz, MAX_HZ)
    reason = unsupported_reason()
    if reason is None and clock not in CLOCKS:
        reason = (f"profopt: function samples off: clock {clock!r} is neither of "
                  f"{', '.join(CLOCKS)}")
    if reason is None and threading.current_thread() is not threading.main_thread():
        reason = "profopt: function samples not started: only the main thread can set signals"
    if reason is None and _taken():
        reason = ("profopt: function samples off: this program already uses SIGPROF, "
                  "ITIMER_PROF or SIGURG, left as they are")
    if reason is None and getattr(LIB, "path", None) is None:
        reason = "profopt: function samples off: libprofopt is not loaded"
    if reason is not None:
        _warn_once(reason)
        return False
    if _start_native(hz, clock):
        return True
    _State.native_counts = False
    if _State.native_error is not None:
        _warn_once(f"profopt: function samples of the main thread only: "
                   f"{_State.native_error}")
    signal.signal(SIGNAL, _on_sample)
    signal.siginterrupt(SIGNAL, False)  # system calls restart (SA_RESTART)
    # where the main thread was in native code when the signal came (libprofopt notes it)
    LIB.profopt_native_frames(int(SIGNAL))
    if not _State.hooks:
        _install_hooks()
    _State.hz = hz
    _State.clock = clock
    _State.running = True
    try:
        _arm(hz)
    except OSError as error:
        _State.running = False
        signal.signal(SIGNAL, signal.SIG_DFL)
        _warn_once(f"profopt: function samples off: the wall-time timer failed ({error})")
        return False
    return True


def _start_native(hz, clock):
    """Starts libprofopt's sampler reading the frames of every thread on clock; False when
    it cannot read this interpreter's (the reason kept in _State.native_error) or will not
    start."""
    if os.environ.get(READER_ENVIRONMENT, "").strip().lower() == "handler":
        return False
    error = LIB.profopt_stacks_python()
    if error != 0:
        reason = LIB.profopt_stacks_python_error() if error != -1 else None
        _State.native_error = reason.decode(errors="replace") if reason else "no libprofopt"
        return False
    if LIB.profopt_stacks_start(hz, 1 if clock == "wall" else 0) != 0:
        _State.native_error = "libprofopt's sampler did not start"
        return False
    if not _State.hooks:
        _install_hooks()
    _State.native = True
    _State.native_counts = True
    _State.counter = LIB.profopt_stacks_counters() == 1
    _State.hz = hz
    _State.clock = clock
    _State.running = True
    return True


def stop():
    """Stops sampling in this process; children forked later do not sample."""
    if not _State.running:
        return
    _State.running = False
    if _State.native:
        _State.native = False
        LIB.profopt_stacks_stop()
        return
    if _State.clock == "wall" or _State.cpu_timer:
        LIB.profopt_signal_timer_stop()
    elif _State.counter:
        LIB.profopt_signal_counter_stop()
    else:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
    _State.counter = _State.cpu_timer = False
    for signum in (SIGNAL, signal.SIGPROF):
        if signal.getsignal(signum) is _on_sample:
            signal.signal(signum, signal.SIG_DFL)


def taken():
    """(samples, ns): the samples this process took since sampling started in it (a forked
    child counts from 0) and the time they stand for."""
    if _State.native_counts:
        weight_ns = ctypes.c_int64(0)
        return int(LIB.profopt_stacks_taken(ctypes.byref(weight_ns))), weight_ns.value
    return _State.samples, _State.sampled_ns


def armed():
    """Whether a timer or counter samples this process now (fork does not inherit them)."""
    if _State.native:
        return LIB.profopt_stacks_hz() > 0
    if not _State.running:
        return False
    return (_State.clock == "wall" or _State.counter or _State.cpu_timer or
            signal.getitimer(signal.ITIMER_PROF)[1] > 0)


def hz_from_environment():
    """The rate PROFOPT_STACKS_HZ asks for, 0 when unset or invalid."""
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return 0
    try:
        return max(0, int(text))
    except ValueError:
        _warn_once(f"profopt: {ENVIRONMENT}={text!r} is not a number of samples per "
                   "second; function samples off")
        return 0


def clock_from_environment():
    """The clock PROFOPT_STACKS_CLOCK asks for: "cpu" (the default) or "wall"."""
    text = os.environ.get(CLOCK_ENVIRONMENT, "").strip().lower()
    return text or "cpu"


def start_from_environment():
    """Starts sampling when PROFOPT_STACKS_HZ asks for it (profopt-record --stacks), on the
    clock PROFOPT_STACKS_CLOCK names (profopt-record --stacks-clock)."""
    hz = hz_from_environment()
    if hz:
        start(hz, clock_from_environment())
