"""Python's garbage collections as spans of their own (stage gc), through gc.callbacks.

A collection over a large object graph stalls the thread that triggered it (tens to
hundreds of milliseconds for a full one); without a span of its own that time is counted
as whatever span was open (forward, collate, ...) or as "other". Each collection of
generation MIN_GENERATION or older becomes a gc span labelled gen1 or gen2 on the thread
that ran it, with the objects it freed and found uncollectable (gc_collected and
gc_uncollectable counters, device the generation, just before the span ends), in the
training loop and in every DataLoader worker (a forked worker inherits
the callback; a spawned one installs it when it starts). Young collections (generation 0)
run every few hundred allocations and take microseconds: they are left out unless
PROFOPT_GC=all; PROFOPT_GC=off records none.

The callback runs inside the collector, which does not collect again meanwhile; it calls
the library with labels made once and the collector's own counts (5.7 us per recorded
collection with no session, 7.1 us while recording: bench/gc_callback_cost.py).
"""

import gc
import os

from . import _api
from ._api import Counter, Stage, UNKNOWN
from ._cost import gc_since, thread_ns

MIN_GENERATION = 1
ENVIRONMENT = "PROFOPT_GC"
_LABELS = (b"gen0", b"gen1", b"gen2")
_STAGE = int(Stage.GC)
_COLLECTED = int(Counter.GC_COLLECTED)
_UNCOLLECTABLE = int(Counter.GC_UNCOLLECTABLE)


def _minimum_generation():
    """The youngest generation recorded, or None when collections are not recorded."""
    setting = os.environ.get(ENVIRONMENT, "").strip().lower()
    if setting == "off":
        return None
    return 0 if setting == "all" else MIN_GENERATION


_MINIMUM = [_minimum_generation()]


def _on_collection(phase, info):
    generation = info.get("generation", 2)
    minimum = _MINIMUM[0]
    if minimum is None or generation < minimum or not 0 <= generation <= 2:
        return
    started = thread_ns()
    if phase == "start":
        _api.LIB.profopt_stage_begin(_STAGE, _LABELS[generation], UNKNOWN, UNKNOWN)
    elif phase == "stop":
        # what the collection freed, before its span ends (the model counts them per process)
        _api.LIB.profopt_counter(_COLLECTED, generation, info.get("collected", 0))
        _api.LIB.profopt_counter(_UNCOLLECTABLE, generation, info.get("uncollectable", 0))
        _api.LIB.profopt_stage_end(_STAGE, _LABELS[generation], UNKNOWN, UNKNOWN)
    gc_since(started)


def install():
    """Records this process's collections from now on (once, however often called)."""
    _MINIMUM[0] = _minimum_generation()
    if _MINIMUM[0] is not None and _on_collection not in gc.callbacks:
        gc.callbacks.append(_on_collection)


def uninstall():
    """Stops recording this process's collections."""
    while _on_collection in gc.callbacks:
        gc.callbacks.remove(_on_collection)
