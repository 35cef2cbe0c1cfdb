"""The split family with negative and out-of-range split points, and the stack family
(hstack/vstack/row_stack/dstack/column_stack/atleast_Nd) of 0-d and 1-d tensors, against eager.

* ``tensor_split(x, [-23, -2], dim=-1)`` gave the middle piece the wrong elements (fuzz program
  s1_g991): a negative index was clamped to 0 instead of counted from the end as eager's
  ``x[start:end]`` does.
* ``row_stack`` of 0-d tensors (fuzz program s1_g550) was an internal error (IndexError) in the
  lowering: the stack family did not make 0-d inputs at least 1-d/2-d/3-d as eager does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule
from tests.support.sweep import each_choice

Fn = Callable[[torch.Tensor], Sequence[torch.Tensor]]

SPLITS: dict[str, Fn] = {
    "tensor_split_negative": lambda t: torch.tensor_split(t, [-23, -2], dim=-1),
    "tensor_split_mixed": lambda t: torch.tensor_split(t, [5, -30, 3, 40, -1], dim=1),
    "tensor_split_beyond": lambda t: torch.tensor_split(t, [30, -50], dim=1),
    "tensor_split_decreasing": lambda t: torch.tensor_split(t, [-3, -10, 20], dim=1),
    "tensor_split_dim0": lambda t: torch.tensor_split(t, [-1], dim=0),
    "tensor_split_sections": lambda t: torch.tensor_split(t, 5, dim=-1),
    "tensor_split_more_sections": lambda t: torch.tensor_split(t, 7, dim=-3),
    "split": lambda t: torch.split(t, 7, dim=-1),
    "split_sizes": lambda t: torch.split(t, [3, 20, 1], dim=-1),
    "split_with_sizes": lambda t: t.split_with_sizes([1, 2], dim=-2),
    "chunk": lambda t: torch.chunk(t, 5, dim=-1),
    "unsafe_split": lambda t: t.unsafe_split(5, dim=-1),
    "narrow_negative": lambda t: (t.narrow(-1, -5, 3), t.narrow(2, -24, 2), t.narrow(0, -1, 1)),
    "hsplit": lambda t: torch.hsplit(t, [-2, 1]),
}


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_split_points(isa: str, frontend: str) -> None:
    x = torch.randn(2, 3, 24, generator=torch.Generator().manual_seed(5))

    def fn(t: torch.Tensor) -> list[torch.Tensor]:
        return [piece * 1 for split in SPLITS.values() for piece in split(t)]

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa, frontend=frontend)
    got, expected = compiled(x), fn(x)
    names = [name for name, split in SPLITS.items() for _ in split(x)]
    assert len(got) == len(expected)
    for name, a, b in zip(names, got, expected, strict=True):
        assert a.shape == b.shape and torch.equal(a, b), f"{name}: {a} != {b}"


STACKS: dict[str, Callable[[list[torch.Tensor]], object]] = {
    "hstack": torch.hstack, "vstack": torch.vstack, "row_stack": torch.row_stack, "dstack": torch.dstack,
    "column_stack": torch.column_stack, "atleast_1d": lambda ts: torch.atleast_1d(*ts),
    "atleast_2d": lambda ts: torch.atleast_2d(*ts), "atleast_3d": lambda ts: torch.atleast_3d(*ts),
    "atleast_3d_one": lambda ts: torch.atleast_3d(ts[0]),
}

#: which inputs each case stacks: 0-d tensors, one, 1-d of one element, vectors, a mix
GROUPS = {"scalars": (0, 1, 2), "one_scalar": (1,), "scalar_and_one": (0, 3), "vectors": (4, 5),
          "vector_scalar": (4, 0), "matrices": (6, 7), "vector_matrix": (5, 7)}


def _valid(fn: Callable[[list[torch.Tensor]], object], ts: list[torch.Tensor]) -> bool:
    try:
        fn(ts)
    except RuntimeError:
        return False
    return True


@each_choice("dtype, frontend", [torch.float32, torch.int64, torch.bool], ["torchscript", "export"],
             ids=[str, None])
def test_stack_of_scalars_and_vectors(isa: str, frontend: str, dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(9)
    shapes = [(), (), (), (1,), (3,), (3,), (2, 3), (1, 3)]
    inputs = tuple((torch.randn(s, generator=g) * 4).to(dtype) for s in shapes)
    cases = [(name, group) for name, fn in STACKS.items() for group in GROUPS.values()
             if _valid(fn, [inputs[i] for i in group])]
    assert len(cases) > 30

    def fn(*ts: torch.Tensor) -> list[torch.Tensor]:
        outs: list[torch.Tensor] = []
        for name, group in cases:
            r = STACKS[name]([ts[i] for i in group])
            outs.extend(t.clone() for t in (r if isinstance(r, (list, tuple)) else [r]))  # pyright: ignore
        return outs

    compiled = compile_cpu(OpModule(fn), inputs, isa=isa, frontend=frontend)
    got, expected = compiled(*inputs), fn(*inputs)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b), f"{a} != {b}"
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
