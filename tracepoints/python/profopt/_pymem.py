"""Python-level allocation sites for memory growth, with tracemalloc (opt-in).

A growing resident set says which process grows, not which line of Python keeps the memory.
With profopt.run(python_memory=True) (or PROFOPT_PYTHON_MEMORY=1), the training process
traces its Python allocations with tracemalloc. Every `every` steps after `warmup` steps it
takes a snapshot and counts the live objects allocated directly by lines of the program's
own code (the innermost Python frame is outside torch, the standard library and profopt:
what libraries keep, such as torch's cache of shared-memory storages, is theirs to bound).
A line whose live objects grew in every interval since warm-up keeps something per step:
the lines that kept the most are recorded as run configuration pairs, which the analysis
reads:

    python_growth.N = "FILE:LINE | BYTES | OBJECTS"   (N = 1 for the most objects kept)
    python_growth.steps = "FIRST-LAST"               (the steps compared)

BYTES are those of the Python objects: tracemalloc does not see the storage of tensors
(allocated by torch), so a line keeping tensors shows many objects of few bytes.

Only the process that runs the loop is traced (not the DataLoader workers). tracemalloc
slows every Python allocation while it runs (see docs/python.md): this is for finding a
leak, not for timing a run.
"""

import os
import tracemalloc

TOP = 3


class _State:
    enabled = False
    started_here = False  # tracemalloc was started by profopt, which stops it
    warmup = 20
    every = 25
    steps = 0
    first_step = None     # the step of the first snapshot, at the end of warm-up
    previous = None       # {line: (bytes, objects)} of the last snapshot
    first = None          # the same at the end of warm-up
    streak = None         # {line: intervals in a row in which its objects grew}


def start(warmup=20, every=25):
    """Starts tracing Python allocations of this process (once)."""
    if _State.enabled:
        return
    _State.enabled = True
    _State.warmup = max(1, int(warmup))
    _State.every = max(1, int(every))
    _State.steps = 0
    _State.first_step = None
    _State.previous = _State.first = None
    _State.streak = {}
    if not tracemalloc.is_tracing():
        tracemalloc.start(1)
        _State.started_here = True


_HERE = os.path.dirname(os.path.realpath(__file__))


def _users(name):
    """Whether a frame's file is the program's own code: where a user can act."""
    if name.startswith("<"):
        return False
    name = os.path.realpath(name)
    return ("/torch/" not in name and "/lib/python3" not in name and
            not name.startswith(_HERE))


def _by_line():
    """{line: (bytes, objects)} of the live Python allocations made by the program's own
    lines (the innermost frame)."""
    lines = {}
    for stat in tracemalloc.take_snapshot().statistics("lineno"):
        frame = stat.traceback[-1]
        if not _users(frame.filename):
            continue
        key = f"{os.path.basename(frame.filename)}:{frame.lineno}"
        size, count = lines.get(key, (0, 0))
        lines[key] = (size + stat.size, count + stat.count)
    return lines


def _record(step):
    """Updates the growth streaks and records the lines that kept the most objects."""
    from ._api import run_config
    now = _by_line()
    for key, (_, count) in now.items():
        grew = count > _State.previous.get(key, (0, 0))[1]
        _State.streak[key] = _State.streak.get(key, 0) + 1 if grew else 0
    _State.previous = now
    steady = []
    for key, streak in _State.streak.items():
        size, count = now.get(key, (0, 0))
        first_size, first_count = _State.first.get(key, (0, 0))
        if streak >= 2 and count > first_count:
            steady.append((count - first_count, size - first_size, key))
    steady.sort(reverse=True)
    for rank, (objects, size, key) in enumerate(steady[:TOP], 1):
        run_config(f"python_growth.{rank}", f"{key} | {size} | {objects}")
    if steady:
        run_config("python_growth.steps", f"{_State.first_step}-{step}")


def on_step_end():
    """Called at every step's end in the training process."""
    if not _State.enabled:
        return
    _State.steps += 1
    step = _State.steps
    try:
        if step == _State.warmup:
            _State.first_step = step
            _State.first = _State.previous = _by_line()
        elif _State.first is not None and (step - _State.warmup) % _State.every == 0:
            _record(step)
    except Exception:
        _State.enabled = False  # never let measuring break the program


def stop():
    """Stops tracing if profopt started it."""
    if not _State.enabled:
        return
    _State.enabled = False
    if _State.started_here:
        tracemalloc.stop()
        _State.started_here = False
