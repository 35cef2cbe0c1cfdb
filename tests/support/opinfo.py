"""Test cases from torch's OpInfo database (real sample inputs per op).

A :class:`Case` wraps one OpInfo sample as an ``nn.Module`` whose inputs are the
sample's tensors (the non-tensor arguments are baked in), ready for
``ziggurat.compile`` and for comparing against eager.  Used by the interpreter,
CPU-backend and TensorRT tests alike.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

#: Ops whose outputs are random or uninitialized: only shapes/dtypes can be compared.
NONDETERMINISTIC = {"empty", "as_strided", "as_strided.partial_views", "empty_like", "new_empty", "randint", "rand", "randn", "bernoulli",
                    "nn.functional.dropout", "empty_strided", "new_empty_strided"}


@functools.cache
def op_db() -> dict[str, Any]:
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db as db
    from torch.testing._internal.opinfo import core

    # Every ``sample_inputs`` iterator looks for the unittest.TestCase that called it with
    # ``inspect.stack()``, which reads the source of every frame (under pytest, 80 deep):
    # a third of this suite's collection time.  These tests are not TestCases, so the
    # answer is always None.
    common_utils.extract_test_fn = core.extract_test_fn = lambda: None  # pyright: ignore
    return {(o.name + ("." + o.variant_test_name if o.variant_test_name else "")): o for o in db}


class OpModule(torch.nn.Module):
    """``forward(*tensors)`` calls the op with the sample's other arguments filled in."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *tensors: torch.Tensor) -> Any:
        return self.fn(*tensors)


@dataclass
class Case:
    op: str
    index: int
    module: OpModule
    inputs: tuple[torch.Tensor, ...]
    random: bool = False

    @property
    def id(self) -> str:
        return f"{self.op}-{self.index}"


def _split(value: Any, tensors: list[torch.Tensor]) -> Any:
    """Replace top-level tensors (and tensors in lists) by placeholders indexing ``tensors``."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return ("__tensor__", len(tensors) - 1)
    if isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor) for v in value):  # pyright: ignore
        items = [_split(v, tensors) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return items if isinstance(value, list) else tuple(items)
    return value


def _join(value: Any, tensors: Sequence[torch.Tensor]) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "__tensor__":  # pyright: ignore
        return tensors[value[1]]
    if isinstance(value, list | tuple):
        items = [_join(v, tensors) for v in value]  # pyright: ignore[reportUnknownVariableType]
        return items if isinstance(value, list) else tuple(items)
    return value


def opinfo_cases(names: Iterable[str], dtype: torch.dtype = torch.float32, per_op: int = 4,
                 seed: int = 0) -> list[Case]:
    db = op_db()
    cases: list[Case] = []
    for name in names:
        info = db.get(name)
        if info is None or dtype not in info.supported_dtypes("cpu"):
            continue
        torch.manual_seed(seed)
        # only the first ``per_op`` are made: some ops generate hundreds (collection time)
        samples = list(itertools.islice(info.sample_inputs("cpu", dtype, requires_grad=False), per_op))
        for i, sample in enumerate(samples):
            tensors: list[torch.Tensor] = []
            pattern = _split([sample.input, *sample.args], tensors)
            kwargs = sample.kwargs
            if not tensors or any(not isinstance(t, torch.Tensor) for t in tensors):
                continue
            op = info.op

            def fn(*ts: torch.Tensor, _p: Any = pattern, _k: Any = kwargs, _op: Any = op) -> Any:
                args = _join(_p, ts)
                return _op(*args, **_k)

            try:
                with torch.no_grad():
                    fn(*[t.clone() for t in tensors])
            except Exception:  # samples that need the original storage (views) or fail on clones
                continue
            random = name in NONDETERMINISTIC or bool(kwargs.get("dropout_p")) or (
                "dropout" in name and kwargs.get("training", True) and kwargs.get("p", 0.5) > 0)
            cases.append(Case(name, i, OpModule(fn), tuple(t.clone() for t in tensors), random))
    return cases


def assert_same(actual: Any, expected: Any, *, op: str = "", rtol: float | None = None,
                atol: float | None = None, shapes_only: bool = False) -> None:
    """Recursive comparison of (tuples/lists of) tensors and scalars."""
    if isinstance(expected, list | tuple):
        assert isinstance(actual, list | tuple), f"{op}: expected a sequence, got {type(actual)}"
        assert len(actual) == len(expected), f"{op}: {len(actual)} vs {len(expected)} outputs"  # pyright: ignore
        for a, e in zip(actual, expected):  # pyright: ignore[reportUnknownVariableType]
            assert_same(a, e, op=op, rtol=rtol, atol=atol, shapes_only=shapes_only)
        return
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{op}: expected a tensor, got {type(actual)}"
        assert actual.shape == expected.shape, f"{op}: shape {actual.shape} vs {expected.shape}"
        assert actual.dtype == expected.dtype, f"{op}: dtype {actual.dtype} vs {expected.dtype}"
        if not shapes_only:
            torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                                       msg=lambda m: f"{op}: {m}")
        return
    if isinstance(actual, torch.Tensor) and actual.numel() == 1:
        actual = actual.item()
    assert actual == expected or (actual != actual and expected != expected), f"{op}: {actual} vs {expected}"
