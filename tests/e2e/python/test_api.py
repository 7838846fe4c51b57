#!/usr/bin/python3
"""Unit tests of the profopt Python module without a recording session: bindings match
profopt.h, the no-library fallback, odd labels, markers, and that an instrumented
DataLoader yields exactly the original loader's batches in every configuration."""

import os
import re
import sys
import warnings

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset

from calls import ROOT, check, finish, profopt
from profopt import _lib


def test_bindings():
    header = open(os.path.join(ROOT, "tracepoints", "include", "profopt.h")).read()
    declared = set(re.findall(r"^[a-z].*?\b(profopt_\w+)\(", header, re.M))
    check(declared == set(_lib.SIGNATURES), f"every function of profopt.h is bound "
          f"(missing {sorted(declared - set(_lib.SIGNATURES))})")
    check(profopt.library_path() is not None, f"library loaded: {profopt.library_path()}")
    for name, (restype, argtypes) in _lib.SIGNATURES.items():
        function = getattr(_lib.LIB, name)
        if function.argtypes != argtypes or function.restype != restype:
            check(False, f"{name} has its argtypes and restype")
    for enum_name, cls, prefix in (("profopt_stage", profopt.Stage, "PROFOPT_STAGE_"),
                                   ("profopt_counter", profopt.Counter, "PROFOPT_COUNTER_"),
                                   ("profopt_gpu_kind", profopt.GpuKind, "PROFOPT_GPU_")):
        body = re.search(r"enum " + enum_name + r" \{(.*?)\};", header, re.S).group(1)
        public = {name[len(prefix):]: int(value)
                  for name, value in re.findall(r"\b(" + prefix + r"\w+) = (-?\d+)", body)}
        python = {member.name: int(member) for member in cls}
        check(public and public == python,
              f"{cls.__name__} has the numbers of enum {enum_name} "
              f"(header {sorted(public.items())}, module {sorted(python.items())})")
    check(profopt.version() == "0.1.0", f"version {profopt.version()}")
    check(profopt.tracing_enabled() is False, "not tracing without a session")
    check(profopt.now_ns() > 0, "now_ns")


def test_fallback():
    saved = _lib.candidate_paths
    _lib.candidate_paths = lambda: ["/nonexistent/libprofopt.so"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stand_in = _lib.load()
    finally:
        _lib.candidate_paths = saved
    check(isinstance(stand_in, _lib._NoLibrary) and len(caught) == 1,
          f"no library: a stand-in and one warning ({len(caught)})")
    for name in _lib.SIGNATURES:
        getattr(stand_in, name)
    stand_in.profopt_stage_begin(1, b"x", 2, 3)
    check(stand_in.profopt_tracing_enabled() == 0 and stand_in.profopt_now_ns() > 0,
          "the stand-in answers every call")


def test_labels_and_markers():
    odd = ["", "plain", "ünïcødé ☃", "bad\udc80surrogate", "lone\ud800", "nul\0inside",
           b"raw\xffbytes", 12345, None, object()]
    for label in odd:
        with profopt.span("custom", label):
            pass
        profopt.run_config(label, label)
        profopt.mem_alloc(1, 2, profopt.DEVICE_HOST, label)
    check(True, "odd labels are accepted")
    from profopt._api import encode
    check(encode("a\0b") == b"a?b" and encode("\ud800") == b"?", "NUL and lone surrogates")
    from profopt._api import resolve_stage
    check(resolve_stage("Forward") == (5, ""), "stage by name")
    check(resolve_stage(profopt.Stage.EVAL, "x") == (8, "x"), "stage by enum")
    check(resolve_stage("tokenize") == (10, "tokenize"), "unknown name is a custom stage")
    try:
        resolve_stage(42)
        check(False, "an invalid stage value raises")
    except ValueError:
        check(True, "an invalid stage value raises")

    @profopt.span("eval")
    def evaluate(value):
        return value * 2

    @profopt.step()
    def one_step(value):
        return value + 1
    check(evaluate(4) == 8 and one_step(1) == 2, "span and step as decorators")
    with profopt.step(3, epoch=1, batch_size=8):
        with profopt.span(profopt.Stage.FORWARD):
            pass
    profopt.gpu_activity(0, 1, profopt.GpuKind.KERNEL, "k", 0, 10, 20, 7)
    profopt.counter(profopt.Counter.HOST_RSS, 1 << 20)
    check(True, "every wrapper callable")


class Squares(Dataset):
    def __init__(self, size):
        self.size = size
        self.transform = lambda value: value * 3

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.transform(torch.tensor([index * index])), INIT["flag"]


class Stream(IterableDataset):
    def __init__(self, size):
        self.size = size

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        first, stride = (0, 1) if info is None else (info.id, info.num_workers)
        for index in range(first, self.size, stride):
            yield torch.tensor([index]), INIT["flag"]


INIT = {"flag": 0}


def mark_init(worker_id):
    INIT["flag"] = 1


def pairs(batch):
    return [(int(value), flag) for value, flag in batch]


def loader_for(kind, **options):
    dataset = Squares(37) if kind == "map" else Stream(37)
    if kind == "map":
        options.setdefault("generator", torch.Generator().manual_seed(3))
    return DataLoader(dataset, **options)


def batches(iterable, epochs):
    out = []
    for _ in range(epochs):
        for batch in iterable:
            out.append(batch if not isinstance(batch, torch.Tensor) else batch.tolist())
    return out


def same(a, b):
    return repr(a) == repr(b)


def test_loader(name, kind, epochs=2, **options):
    torch.manual_seed(11)
    expected = batches(loader_for(kind, **options), epochs)
    torch.manual_seed(11)
    instrumented = profopt.instrument(loader_for(kind, **options))
    got = batches(instrumented, epochs)
    check(len(got) == len(expected) > 0 and same(got, expected),
          f"{name}: the instrumented loader yields the same {len(expected)} batches")
    return instrumented


def test_loaders():
    test_loader("map, 0 workers, shuffled", "map", batch_size=4, shuffle=True)
    test_loader("map, 2 workers, shuffled", "map", batch_size=4, shuffle=True, num_workers=2)
    test_loader("map, persistent workers, init fn", "map", batch_size=5, shuffle=True,
                num_workers=2, persistent_workers=True, worker_init_fn=mark_init)
    test_loader("map, custom collate", "map", batch_size=3, num_workers=2,
                collate_fn=pairs, drop_last=True)
    test_loader("map, no batching", "map", batch_size=None, num_workers=2)
    test_loader("iterable, 0 workers", "iterable", batch_size=4)
    test_loader("iterable, 2 workers, init fn", "iterable", batch_size=4, num_workers=2,
                worker_init_fn=mark_init)
    test_loader("iterable, persistent", "iterable", batch_size=4, num_workers=2,
                persistent_workers=True)
    loader = loader_for("map", batch_size=4)
    check(profopt.instrument(loader) is profopt.instrument(loader),
          "instrument() returns the same wrapper for the same loader")
    wrapped = profopt.instrument(loader)
    check(len(wrapped) == len(loader) and wrapped.dataset is loader.dataset,
          "the wrapper answers like the loader")
    config = profopt.loader_config(wrapped)
    check(config["batch_size"] == "4" and config["dataset_type"] == "map",
          f"loader configuration {config}")


def test_model():
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    reference = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
                                    torch.nn.Linear(3, 1))
    reference.load_state_dict(model.state_dict())
    optimizer = profopt.instrument_optimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    profopt.instrument_model(model)
    profopt.instrument_model(model)
    inputs = torch.randn(8, 4)
    for net, opt in ((model, optimizer), (reference, reference_optimizer)):
        for _ in range(3):
            opt.zero_grad()
            net(inputs).pow(2).mean().backward()
            opt.step()
    equal = all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))
    check(equal, "an instrumented model and optimizer train exactly like the originals")
    with torch.no_grad():
        model(inputs)
    check(True, "forward without gradients")


def test_profiler_note():
    """With the GPU collector recording, starting torch.profiler says once, on stderr, that
    it gets no CUDA activity (CUPTI serves one tool), and the profiler still runs."""
    import contextlib
    import io
    from profopt import _gpu
    _gpu.watch_profiler()
    _gpu.watch_profiler()  # watched once, however often
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        for _ in range(2):
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
                torch.ones(2).sum()
    check(stderr.getvalue().count(_gpu.PROFILER_NOTE) == 1,
          f"one note when torch.profiler starts: {stderr.getvalue()!r}")


def main():
    test_bindings()
    test_fallback()
    test_labels_and_markers()
    test_loaders()
    test_model()
    test_profiler_note()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
