"""Python-level allocation sites for memory growth, with tracemalloc (opt-in).

A growing resident set says which process grows, not which line of Python keeps the memory.
With profopt.run(python_memory=True) (or PROFOPT_PYTHON_MEMORY=1), the training process
traces its Python allocations with tracemalloc, and so do the DataLoader workers of an
instrumented loader. Every `every` steps after `warmup` steps (in a worker: batches it
made) it takes a snapshot and gives each live block to the program's own line that made it:
the first frame, from the innermost out, outside the Python library, site-packages and
profopt. A tensor made by torch inside `loss = criterion(out, y)` belongs to that line,
not to torch's. Two kinds of lines are recorded as run configuration pairs, which the
analysis reads:

- lines that *created* objects still alive, whose live objects grew in every interval
  since warm-up (the objects that pile up):

    python_growth.N = "FILE:LINE | BYTES | OBJECTS"   (N = 1 for the most objects)

- lines that *keep* them: where a container's storage grew (a list's items grow at its
  `append`, a dict's table at the line that stores into it) while its blocks stayed as
  many, bytes never falling:

    python_kept.N = "FILE:LINE | BYTES"

    python_growth.steps = "FIRST-LAST"                 (the steps compared)

In a worker the keys are python_growth.workers.N, python_kept.workers.N and
python_growth.workers.batches.

BYTES are those of the Python objects: tracemalloc does not see the storage of tensors
(allocated by torch), so a line keeping tensors shows many objects of few bytes.

tracemalloc slows every Python allocation while it runs (see docs/python.md): this is for
finding a leak, not for timing a run. Forked workers inherit the tracing; spawned ones start
it when PROFOPT_PYTHON_MEMORY=1 is in their environment.
"""

import os
import site
import sysconfig
import tracemalloc

TOP = 3
# Frames kept per allocation: enough to reach the program's line from a tensor made in an
# nn.Sequential's last layer (5); each frame more costs every Python allocation (8 frames
# took twice the CPU time of 4 on a training loop with workers).
FRAMES = 5
WORKER_FRAMES = 4  # a dataset's own code is near the allocation
WORKER_WARMUP = 10  # batches
WORKER_EVERY = 10


class _State:
    enabled = False
    started_here = False  # tracemalloc was started by profopt, which stops it
    prefix = "python_growth"  # python_growth.workers in a worker
    kept_prefix = "python_kept"
    unit = "steps"        # what is counted: steps, or a worker's batches
    warmup = 20
    every = 25
    steps = 0
    first_step = None     # the step of the first snapshot, at the end of warm-up
    previous = None       # {line: (bytes, blocks)} of the last snapshot
    first = None          # the same at the end of warm-up
    streak = None         # {line: intervals in a row in which its blocks grew}
    widened = None        # {line: intervals in which its bytes grew}
    shrank = None         # lines whose bytes fell in some interval


def _reset(warmup, every):
    _State.warmup = max(1, int(warmup))
    _State.every = max(1, int(every))
    _State.steps = 0
    _State.first_step = None
    _State.previous = _State.first = None
    _State.streak = {}
    _State.widened = {}
    _State.shrank = set()


def _trace():
    if not tracemalloc.is_tracing():
        tracemalloc.start(FRAMES)
        _State.started_here = True


def start(warmup=20, every=25):
    """Starts tracing Python allocations of this process (once)."""
    if _State.enabled:
        return
    _State.enabled = True
    _reset(warmup, every)
    _trace()


def on_worker_start():
    """Called in each loader worker before it fetches: traces the worker's allocations when
    the training process traces its own (inherited by fork) or PROFOPT_PYTHON_MEMORY=1."""
    wanted = _State.enabled or os.environ.get("PROFOPT_PYTHON_MEMORY", "") not in ("", "0")
    if not wanted:
        return
    _State.enabled = True
    _State.prefix = "python_growth.workers"
    _State.kept_prefix = "python_kept.workers"
    _State.unit = "batches"
    _reset(WORKER_WARMUP, WORKER_EVERY)
    if tracemalloc.is_tracing():
        tracemalloc.stop()  # the training process's traces, inherited by fork
    tracemalloc.start(WORKER_FRAMES)
    _State.started_here = True


_HERE = os.path.dirname(os.path.realpath(__file__))


def _library_roots():
    """Directories whose code is the Python library's, an installed package's or
    profopt's: a user cannot act there."""
    roots = {_HERE}
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            roots.add(paths[key])
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:
        pass  # a virtualenv's old site module
    roots.add(os.path.dirname(os.__file__))
    return tuple(os.path.realpath(root) + os.sep for root in roots if root)


_ROOTS = None
_USERS = {}  # filename -> whether it is the program's own


def _users(name):
    """Whether a frame's file is the program's own code: where a user can act."""
    known = _USERS.get(name)
    if known is not None:
        return known
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _library_roots()
    path = os.path.realpath(name)
    own = not name.startswith("<") and not path.startswith(_ROOTS) and \
        "/site-packages/" not in path and "/dist-packages/" not in path
    _USERS[name] = own
    return own


_LINES = {}  # raw traceback -> "FILE:LINE" of its program's own frame, or None
_LINES_MAX = 200000


def _user_line(frames):
    """"FILE:LINE" of the program's own frame nearest the allocation in frames (as
    tracemalloc records them, the innermost first), or None."""
    line = _LINES.get(frames, False)
    if line is not False:
        return line
    line = None
    for filename, lineno in frames:
        if _users(filename):
            line = f"{os.path.basename(filename)}:{lineno}"
            break
    if len(_LINES) >= _LINES_MAX:
        _LINES.clear()
    _LINES[frames] = line
    return line


def _raw_traces(snapshot):
    """(size, frames) of each live block, frames innermost first."""
    raw = getattr(getattr(snapshot, "traces", None), "_traces", None)
    if raw is not None:
        return ((trace[1], trace[2]) for trace in raw)
    return ((trace.size, tuple((frame.filename, frame.lineno)
                               for frame in reversed(trace.traceback)))
            for trace in snapshot.traces)


def _by_line():
    """{line: (bytes, blocks)} of the live Python allocations, each given to the program's
    own line nearest to it."""
    lines = {}
    for size, frames in _raw_traces(tracemalloc.take_snapshot()):
        key = _user_line(frames)
        if key is None:
            continue
        total = lines.get(key)
        lines[key] = (total[0] + size, total[1] + 1) if total else (size, 1)
    return lines


def _compare(now):
    """Updates each line's streaks against the previous snapshot."""
    for key, (size, count) in now.items():
        previous_size, previous_count = _State.previous.get(key, (0, 0))
        grew = count > previous_count
        _State.streak[key] = _State.streak.get(key, 0) + 1 if grew else 0
        if size > previous_size:
            _State.widened[key] = _State.widened.get(key, 0) + 1
        elif size < previous_size:
            _State.shrank.add(key)
    _State.previous = now


def _created(now):
    """(objects, bytes, line) of the lines whose live objects grew in every interval."""
    lines = []
    for key, streak in _State.streak.items():
        size, count = now.get(key, (0, 0))
        first_size, first_count = _State.first.get(key, (0, 0))
        if streak >= 2 and count > first_count:
            lines.append((count - first_count, size - first_size, key))
    return sorted(lines, reverse=True)


def _kept(now):
    """(bytes, line) of the lines whose storage grew in two intervals or more, never fell,
    in as many blocks as at warm-up: a container's items growing where it stores."""
    lines = []
    for key, widened in _State.widened.items():
        size, count = now.get(key, (0, 0))
        first_size, first_count = _State.first.get(key, (0, 0))
        if widened >= 2 and key not in _State.shrank and size > first_size and \
                0 < count <= max(first_count, 1):
            lines.append((size - first_size, key))
    return sorted(lines, reverse=True)


def _record(step):
    """Updates the growth streaks and records the lines that created and kept the most."""
    from ._api import run_config
    now = _by_line()
    _compare(now)
    created = [f"{key} | {size} | {objects}" for objects, size, key in _created(now)[:TOP]]
    kept = [f"{key} | {size}" for size, key in _kept(now)[:TOP]]
    for rank in range(1, TOP + 1):  # an empty value replaces an earlier snapshot's
        run_config(f"{_State.prefix}.{rank}", created[rank - 1] if rank <= len(created) else "")
        run_config(f"{_State.kept_prefix}.{rank}", kept[rank - 1] if rank <= len(kept) else "")
    if created:
        run_config(f"{_State.prefix}.{_State.unit}", f"{_State.first_step}-{step}")


def _count():
    """Counts a step (a batch in a worker); snapshots at the end of warm-up and then every
    `every`."""
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


def on_step_end():
    """Called at every step's end in the training process."""
    if _State.enabled and _State.unit == "steps":
        _count()


def on_batch_ready():
    """Called when a loader worker has made a batch."""
    if _State.enabled and _State.unit == "batches":
        _count()


def stop():
    """Stops tracing if profopt started it."""
    if not _State.enabled:
        return
    _State.enabled = False
    if _State.started_here:
        tracemalloc.stop()
        _State.started_here = False
