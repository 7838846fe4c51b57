"""Forward, backward and optimizer spans for a PyTorch model and optimizer.

Forward spans come from the top module's forward pre-hook and forward hook. Backward is
recorded around torch.autograd.backward on the thread that calls it (loss.backward()
goes through it), and only for a backward that follows a forward of an instrumented
model with gradients enabled: hooks on the output tensor would run on the autograd
engine's device threads with CUDA, and a span must begin and end on one thread.
"""

import functools

import torch

from ._api import LIB, SPANS, Stage, UNKNOWN, encode
from ._cost import hooks_since, thread_ns

_FORWARD = int(Stage.FORWARD)
_BACKWARD = int(Stage.BACKWARD)
_OPTIMIZER = int(Stage.OPTIMIZER)


class _Backward:
    """The patched torch.autograd.backward and what it needs to know."""

    original = None   # torch.autograd.backward before patching
    pending = None    # label of the model whose forward awaits a backward, or None


def _requires_grad(output, depth=0):
    if isinstance(output, torch.Tensor):
        return output.requires_grad
    if depth > 2:
        return False
    if isinstance(output, (list, tuple)):
        return any(_requires_grad(item, depth + 1) for item in output)
    if isinstance(output, dict):
        return any(_requires_grad(item, depth + 1) for item in output.values())
    return False


def _traced_backward(*args, **kwargs):
    label = _Backward.pending
    if label is None:
        return _Backward.original(*args, **kwargs)
    started = thread_ns()
    _Backward.pending = None
    SPANS.begun += 1
    LIB.profopt_stage_begin(_BACKWARD, label, UNKNOWN, UNKNOWN)
    hooks_since(started)
    try:
        return _Backward.original(*args, **kwargs)
    finally:
        started = thread_ns()
        LIB.profopt_stage_end(_BACKWARD, label, UNKNOWN, UNKNOWN)
        hooks_since(started)


def _patch_backward():
    if _Backward.original is None:
        _Backward.original = torch.autograd.backward
        torch.autograd.backward = _traced_backward


def instrument_model(model, label=None):
    """Records each forward of model as a forward span, and the backward that follows
    as a backward span. label defaults to the model's class name. Returns model."""
    if getattr(model, "_profopt_label", None) is not None:
        return model
    encoded = encode(label or type(model).__name__)

    def forward_begin(module, inputs):
        started = thread_ns()
        SPANS.begun += 1
        LIB.profopt_stage_begin(_FORWARD, encoded, UNKNOWN, UNKNOWN)
        hooks_since(started)

    def forward_end(module, inputs, output):
        started = thread_ns()
        LIB.profopt_stage_end(_FORWARD, encoded, UNKNOWN, UNKNOWN)
        if torch.is_grad_enabled() and _requires_grad(output):
            _Backward.pending = encoded
        hooks_since(started)

    model.register_forward_pre_hook(forward_begin)
    model.register_forward_hook(forward_end)
    model._profopt_label = encoded
    _patch_backward()
    return model


def instrument_optimizer(optimizer, label=None):
    """Records each optimizer.step() as an optimizer span. Returns optimizer."""
    original = optimizer.step
    if getattr(original, "_profopt_traced", False):
        return optimizer
    encoded = encode(label or type(optimizer).__name__)

    @functools.wraps(original)
    def step(*args, **kwargs):
        started = thread_ns()
        SPANS.begun += 1
        LIB.profopt_stage_begin(_OPTIMIZER, encoded, UNKNOWN, UNKNOWN)
        hooks_since(started)
        try:
            return original(*args, **kwargs)
        finally:
            started = thread_ns()
            LIB.profopt_stage_end(_OPTIMIZER, encoded, UNKNOWN, UNKNOWN)
            hooks_since(started)

    step._profopt_traced = True
    optimizer.step = step
    return optimizer
