"""Programs from torch's OpInfo samples: the first sample with tiny tensors whose trace runs the op."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch

from tests.support.e2e_suite.program import Program, Random, _Traced, graph_ops
from tests.support.opinfo import op_db

#: the largest sample tensor taken (elements); larger samples are skipped
MAX_NUMEL = 1024


def _split(value: Any, tensors: list[torch.Tensor]) -> Any:
    """``value`` with every tensor (in nested lists and tuples too) replaced by its index in ``tensors``."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _Slot(len(tensors) - 1)
    if isinstance(value, list | tuple):
        items = [_split(v, tensors) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return items if isinstance(value, list) else tuple(items)
    return value


def _join(value: Any, tensors: tuple[torch.Tensor, ...]) -> Any:
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, list | tuple):
        items = [_join(v, tensors) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return items if isinstance(value, list) else tuple(items)
    return value


@dataclass(frozen=True)
class _Slot:
    index: int


def _dtype(info: Any, dtype: torch.dtype | None) -> torch.dtype:
    if dtype is not None:
        return dtype
    supported = info.supported_dtypes("cpu")
    for d in (torch.float32, torch.int64, torch.bool):
        if d in supported:
            return d
    raise LookupError(f"OpInfo {info.name} has no float32, int64 or bool sample")


def _traces_op(op: str, fn: Any, tensors: list[torch.Tensor]) -> bool:
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            fn(*[t.clone() for t in tensors])
            traced = torch.jit.trace(_Traced(fn), tuple(t.clone() for t in tensors), check_trace=False)
    except Exception:  # noqa: BLE001 - a sample that cannot run on clones or cannot be traced is skipped
        return False
    return op in graph_ops(traced.inlined_graph)  # pyright: ignore[reportAttributeAccessIssue]


def opinfo_program(op: str, name: str, *, dtype: torch.dtype | None = None, random: Random | None = None,
                   rtol: float = 1e-4, atol: float = 1e-5, skip: int = 0) -> Program:
    """``op`` run by the first usable sample of OpInfo ``name`` (after ``skip`` usable ones):
    every tensor non-empty and at most ``MAX_NUMEL`` elements, and the trace contains ``op``."""
    info = op_db()[name]
    dt = _dtype(info, dtype)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The OpInfo's own generator, taken as far as needed: ``info.sample_inputs`` wraps it in an
        # iterator that looks for a unittest test on the call stack (``inspect.stack()``, 0.1 s a call).
        samples = iter(info.sample_inputs_func(info, "cpu", dt, False))
    for i, sample in enumerate(samples):
        tensors: list[torch.Tensor] = []
        pattern = _split([sample.input, *sample.args], tensors)
        if not tensors or any(not isinstance(t, torch.Tensor) or not 0 < t.numel() <= MAX_NUMEL for t in tensors):
            continue
        kwargs = dict(sample.kwargs)

        def fn(*ts: torch.Tensor, _p: Any = pattern, _k: Any = kwargs, _op: Any = info.op) -> Any:
            return _op(*_join(_p, ts), **_k)

        if not _traces_op(op, fn, tensors):
            continue
        if skip:
            skip -= 1
            continue
        return Program(op, fn, tuple(t.clone() for t in tensors), random=random, rtol=rtol, atol=atol,
                       origin=f"OpInfo {name} sample {i} ({dt})")
    raise LookupError(f"no sample of OpInfo {name} ({dt}) runs {op} on tensors of at most {MAX_NUMEL} elements")
