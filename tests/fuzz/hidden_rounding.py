"""The values eager's fused norm kernels compute inside one aten op, for the rounding runs.

``_InnerSteps`` perturbs every value an aten op returns, but eager's batch, instance and
group norm kernels are single aten ops (``native_batch_norm``, ``native_group_norm``) that
compute ``x * a + (bias - mean * a)`` with ``a = rstd * weight``: where a group's variance is
near 0, ``rstd`` is up to ``1/sqrt(eps)`` and ``mean * a`` thousands of times the output, so
the output carries the rounding of that shift (``group_norm`` of one element per group:
x = 12, a = -524.8, a shift of 6299.0 rounded to 2**-11, on an output of 1.56; eager's error
was 2.8e-5 by luck, the CPU backend's, with the same formula, 2.2e-4; seed 11 program 4641).
Another implementation rounds those intermediates its own way, so the rounding runs
perturb the output by the magnitude of ``x * a`` and of the shift as well
(:func:`hidden_magnitude`): ``_InnerSteps`` steps such an output inside
:func:`hidden_intermediates`, where ``rounding_step`` reads it (:func:`current_hidden`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import torch

aten = torch.ops.aten
_HIDDEN: ContextVar[torch.Tensor | None] = ContextVar("hidden_intermediates", default=None)


@contextlib.contextmanager
def hidden_intermediates(hidden: torch.Tensor | None) -> Iterator[None]:
    """Within: the value being stepped hides intermediates of magnitude ``hidden``."""
    token = _HIDDEN.set(hidden)
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def current_hidden() -> torch.Tensor | None:
    return _HIDDEN.get()


def hidden_magnitude(func: Any, args: tuple[Any, ...], out: Any) -> torch.Tensor | None:
    """``|x * a| + |bias - mean * a|`` per element of the op's first result, for eager's
    scale-and-shift norm kernels (float32 only); None for every other op."""
    if not isinstance(out, tuple | list) or not out or not isinstance(out[0], torch.Tensor):
        return None
    y = out[0]
    if y.dtype != torch.float32 or y.dim() < 2:
        return None
    if func is aten.native_group_norm.default:
        x, weight, bias, n, c, _, groups = args[:7]
        mean, rstd = out[1], out[2]  # [N, groups]
        per = int(c) // int(groups)
        mean = mean.reshape(int(n), int(groups), 1).expand(-1, -1, per).reshape(int(n), int(c))
        rstd = rstd.reshape(int(n), int(groups), 1).expand(-1, -1, per).reshape(int(n), int(c))
    elif func in (aten.native_batch_norm.default, aten._native_batch_norm_legit.default,
                  aten._native_batch_norm_legit_no_training.default):
        x, weight, bias, running_mean, running_var = args[:5]
        training = func is not aten._native_batch_norm_legit_no_training.default and bool(args[5])
        eps = float(args[-1])
        if training:
            mean, rstd = out[1], out[2]
        elif running_mean is None or running_var is None:
            return None
        else:
            mean, rstd = running_mean, torch.rsqrt(running_var.double() + eps)
    else:
        return None
    if not isinstance(x, torch.Tensor) or tuple(x.shape) != tuple(y.shape):
        return None
    shape = [-1 if d == 1 else 1 for d in range(x.dim())]
    if mean.dim() == 2:  # per (sample, channel)
        shape = [x.shape[0], x.shape[1]] + [1] * (x.dim() - 2)
    a = rstd.double().reshape(shape)
    if weight is not None:
        a = a * weight.double().reshape([-1 if d == 1 else 1 for d in range(x.dim())])
    shift = -mean.double().reshape(shape) * a
    if bias is not None:
        shift = shift + bias.double().reshape([-1 if d == 1 else 1 for d in range(x.dim())])
    hidden = (x.double() * a).abs() + shift.abs()
    return torch.where(torch.isfinite(hidden), hidden, 0.0).expand(y.shape)
