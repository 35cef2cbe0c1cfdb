"""Ops called with the argument combinations of torch's OpInfo samples.

The samples (``torch.testing._internal.common_methods_invocations.op_db``, the ops of
``tests/cpu_backend/opinfo_sweep.py``) give valid and often unusual argument lists: odd
dims, scalar tensors, keyword corners.  A sample's float tensors are taken from the pool
when a value of that shape exists (so the op joins the graph), else they become constants
or inputs holding the sample's values, as do its integer and boolean tensors (indices,
masks, boundaries keep their meaning).  Loading the samples takes a few seconds, once per
process, so only profiles with ``opinfo`` use this spec.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import torch

from tests.fuzz.builder import Builder, Emit, Reject
from tests.fuzz.from_fx import Unsupported, render_constant
from tests.fuzz.registry import spec


def _callee(name: str, op: Any) -> str | None:
    """Source text that names the OpInfo's op (``torch.x``, ``F.x``, ``torch.linalg.x``)."""
    base = name.split(".")[-1] if name.startswith(("nn.functional.", "linalg.", "special.")) else name.split(".")[0]
    for module, text in ((torch.nn.functional, "F"), (torch.linalg, "torch.linalg"), (torch.special, "torch.special"),
                         (torch, "torch")):
        if getattr(module, base, None) is op:
            return f"{text}.{base}"
    return None


@functools.cache
def samples() -> list[tuple[str, str, list[Any], dict[str, Any]]]:
    """(OpInfo name, callee, positional args, keyword args) of every usable float32 sample."""
    from tests.cpu_backend.opinfo_sweep import DEFAULT
    from tests.support.opinfo import NONDETERMINISTIC, op_db

    db = op_db()
    out: list[tuple[str, str, list[Any], dict[str, Any]]] = []
    for name in DEFAULT:
        info = db.get(name)
        if info is None or name in NONDETERMINISTIC or torch.float32 not in info.supported_dtypes("cpu"):
            continue
        callee = _callee(name, info.op)
        if callee is None:
            continue
        torch.manual_seed(0)
        for sample in list(info.sample_inputs("cpu", torch.float32, requires_grad=False))[:4]:
            args, kwargs = [sample.input, *sample.args], dict(sample.kwargs)
            if "dropout" in name or not isinstance(args[0], torch.Tensor) or kwargs.get("inplace"):
                continue
            if _mutates(info.op, args, kwargs):  # the pool's values must stay as they are
                continue
            out.append((name, callee, args, kwargs))
    return out


def _mutates(op: Any, args: list[Any], kwargs: dict[str, Any]) -> bool:
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    before = [t._version for t in tensors]
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(*args, **kwargs)
    except Exception:
        return True
    return [t._version for t in tensors] != before


def _arg(b: Builder, value: Any) -> str:
    if isinstance(value, torch.Tensor):
        if value.dtype not in (torch.float32, torch.int64, torch.int32, torch.bool) or value.numel() == 0:
            raise Reject(f"sample tensor {value.dtype}[{list(value.shape)}]")
        if value.dtype == torch.float32:
            same = [v for v in b.candidates([torch.float32]) if v.shape == list(value.shape)]
            if same and b.chance(0.6):
                return b.choice(same).name
        if value.dtype == torch.float32 and b.chance(0.4):
            return b.new_literal_input(value).name
        return b.new_const(list(value.shape), value.dtype, "literal", literal=value.reshape(-1).tolist()).name
    if isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor) for v in value):  # pyright: ignore
        items = [_arg(b, v) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return f"[{', '.join(items)}]" if isinstance(value, list) else f"({', '.join(items)},)"
    try:
        return render_constant(value)
    except Unsupported as e:
        raise Reject(str(e)) from None


@spec("opinfo", weight=12.0, family="opinfo")
def _opinfo(b: Builder) -> Emit:
    if not b.opinfo:
        raise Reject("this profile does not use OpInfo samples")
    name, callee, args, kwargs = b.choice(samples())
    parts = [_arg(b, a) for a in args] + [f"{k}={_arg(b, v)}" for k, v in kwargs.items()]
    code = f"{callee}({', '.join(parts)})"
    if isinstance(b.probe(code), tuple | list):
        return f"{code}[0]"
    return code
