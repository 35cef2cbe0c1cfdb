"""Ops whose indices come from tensor data, each with indices to probe a compiled module with.

Every :class:`IndexCase` is compiled on its example index, then called with each probe:
in-range indices (negative ones where eager wraps them, duplicates where eager defines the
result) must give eager's values, bit-exact for integers; indices eager rejects must raise a
``ZigguratError`` naming the op (``op``, a regular expression), never give numbers.  Plain
assignments with colliding indices are unspecified in eager, so no probe collides there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

import ziggurat
from tests.support.opinfo import OpModule
from ziggurat.ir.errors import ZigguratError

T = torch.tensor
NAN = float("nan")
INF = float("inf")

X = torch.arange(12, dtype=torch.int64).reshape(4, 3) * 7 - 40
XF = torch.linspace(-2.0, 3.0, 12).reshape(4, 3)
LOGP = XF.log_softmax(1)
SRC = torch.arange(6, dtype=torch.int64).reshape(2, 3) * 3 + 100
SRCF = torch.linspace(0.5, 3.0, 6).reshape(2, 3)
WEIGHT = T([0.5, 2.0, 1.5])
LOGP4 = torch.linspace(-2.0, 2.5, 24).reshape(2, 3, 2, 2).log_softmax(1)


@dataclass(frozen=True)
class IndexCase:
    id: str
    op: str  # a regular expression the error must match
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    data: torch.Tensor
    index: torch.Tensor
    probes: tuple[torch.Tensor, ...]
    cpu_native: bool = True  # the cpu backend lowers every op of fn
    trt_native: bool = False  # tensorrt-reference converts every op of fn (min_block_size=1)
    frontends: tuple[str, ...] = ("torchscript", "export")


def _scatter_reduce(reduce: str, include_self: bool) -> IndexCase:
    dup = T([[1, 1, 0], [1, 3, 0]])
    data, src = (XF, SRCF) if reduce == "mean" else (X, SRC)
    return IndexCase(f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}", "aten::scatter_reduce",
                     lambda x, i: x.scatter_reduce(0, i, src, reduce, include_self=include_self), data, dup,
                     (T([[3, 3, 3], [3, 3, 3]]), T([[0, 1, 2], [3, 2, 1]]), T([[-1, 1, 0], [1, 3, 0]]),
                      T([[1, 1, 0], [1, 4, 0]])))


IMAGE = torch.linspace(-3.0, 4.0, 2 * 5 * 7).reshape(1, 2, 5, 7)
GRID = torch.linspace(-1.2, 1.3, 24).reshape(1, 3, 4, 2)
ODD_GRID = GRID.clone()
ODD_GRID.view(-1)[:9] = T([NAN, 0.0, 0.0, NAN, NAN, NAN, INF, -INF, 1e30])


def _grid_sample(mode: str, padding: str, align: bool) -> IndexCase:
    """The grid's coordinates address the image: NaN, infinite and huge ones included."""
    return IndexCase(f"grid_sample_{mode}_{padding}{'_align' if align else ''}", "grid_sampler",
                     lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align),
                     IMAGE, GRID, (GRID.flip(1), GRID * 3.7, ODD_GRID, GRID * 1e7), cpu_native=padding != "reflection",
                     trt_native=padding != "reflection")


def _setitem(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[i] = 99
    return y


def _setitem_accumulate(x: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
    y = x * 1
    y.index_put_((i,), SRC, accumulate=True)
    return y


CASES: tuple[IndexCase, ...] = (
    IndexCase("gather", "aten::gather", lambda x, i: x.gather(0, i), X, T([[0, 3, 1], [2, 2, 0]]),
              (T([[3, 0, 0], [1, 1, 2]]), T([[-1, 0, 0], [1, 1, 2]]), T([[0, 0, 0], [1, 4, 2]])), trt_native=True),
    IndexCase("gather_dim1", "aten::gather", lambda x, i: x.gather(1, i), XF, T([[0], [2], [1], [1]]),
              (T([[2], [0], [0], [1]]), T([[0], [3], [1], [1]]), T([[0], [-3], [1], [1]])), trt_native=True),
    IndexCase("gather_0d", "aten::gather", lambda x, i: x.gather(0, i), T(5), T(0), (T(-1), T(1)), trt_native=True),
    IndexCase("index_select_0d", "aten::index_select", lambda x, i: x.index_select(0, i), T(5.0), T([0]),
              (T([-1]), T([1])), trt_native=True),
    IndexCase("take_along_dim", "aten::take_along_dim", lambda x, i: torch.take_along_dim(x, i, 0), X,
              T([[0], [3]]), (T([[-1], [-4]]), T([[4], [7]]), T([[-9], [100]])), trt_native=True),
    IndexCase("take_along_dim_flat", "aten::take_along_dim", lambda x, i: torch.take_along_dim(x, i), X,
              T([0, 11]), (T([5, 5]), T([-1, 0]), T([12, 0])), cpu_native=False, trt_native=True),
    IndexCase("index_select", "aten::index_select", lambda x, i: x.index_select(1, i), X, T([2, 0, 2]),
              (T([0, 1, 2]), T([-1, 0, 0]), T([3, 0, 0])), trt_native=True),
    IndexCase("embedding", "aten::embedding", lambda w, i: F.embedding(i, w), XF, T([[0, 3], [3, 1]]),
              (T([[2, 2], [1, 0]]), T([[-1, 0], [0, 0]]), T([[0, 4], [0, 0]])), trt_native=True),
    IndexCase("getitem", "aten::index", lambda x, i: x[i], X, T([3, 0, 1]),
              (T([-1, -4, 2]), T([-5, 0, 0]), T([4, 0, 0])), trt_native=True),
    IndexCase("getitem_dim1", "aten::index", lambda x, i: x[:, i], X, T([2, 0]),
              (T([-1, -3]), T([-4, 0]), T([3, 0])), trt_native=True),
    IndexCase("getitem_broadcast", "aten::index", lambda x, i: x[i.unsqueeze(1), i[:2].unsqueeze(0)], X,
              T([0, 2, 1]), (T([-1, -3, 2]), T([3, 0, 1]), T([-5, 0, 0]))),
    IndexCase("scatter_src", "aten::scatter", lambda x, i: x.scatter(0, i, SRC), X, T([[0, 1, 2], [3, 2, 1]]),
              (T([[2, 0, 3], [1, 3, 0]]), T([[-1, 0, 3], [1, 3, 0]]), T([[2, 0, 3], [1, 4, 0]])), trt_native=True),
    IndexCase("scatter_src_partial", "aten::scatter", lambda x, i: x.scatter(0, i, SRC), X, T([[3, 1]]),
              (T([[0, 0]]), T([[4, 0]]), T([[0, -2]])), trt_native=True),
    IndexCase("scatter_value", "aten::scatter", lambda x, i: x.scatter(1, i, 9), X, T([[0], [2], [1], [0]]),
              (T([[2], [1], [0], [2]]), T([[3], [0], [0], [0]]), T([[0], [-1], [0], [0]])), trt_native=True),
    IndexCase("scatter_reduce_add", "aten::scatter", lambda x, i: x.scatter(0, i, SRC, reduce="add"), X,
              T([[1, 1, 0], [1, 3, 0]]), (T([[3, 3, 3], [3, 3, 3]]), T([[-1, 1, 0], [1, 3, 0]]),
                                          T([[1, 1, 4], [1, 3, 0]]))),
    IndexCase("scatter_reduce_multiply", "aten::scatter", lambda x, i: x.scatter(0, i, SRC, reduce="multiply"), X,
              T([[1, 1, 0], [1, 3, 0]]), (T([[2, 2, 2], [2, 2, 2]]), T([[0, 1, 0], [1, -3, 0]]),
                                          T([[1, 1, 0], [1, 9, 0]]))),
    IndexCase("scatter_add", "aten::scatter_add", lambda x, i: x.scatter_add(0, i, SRC), X,
              T([[1, 1, 0], [1, 3, 0]]), (T([[3, 3, 3], [3, 3, 3]]), T([[-1, 1, 0], [1, 3, 0]]),
                                          T([[1, 1, 0], [1, 3, 4]]))),
    *(_scatter_reduce(r, s) for r in ("sum", "prod", "amax", "amin", "mean") for s in (True, False)),
    IndexCase("index_put", "aten::index_put", lambda x, i: x.index_put((i,), T(99)), X, T([1, 2]),
              (T([-1, 0]), T([-4, 2]), T([-5, 0]), T([4, 0]))),
    IndexCase("index_put_rows", "aten::index_put", lambda x, i: x.index_put((i,), SRC), X, T([1, 2]),
              (T([-1, 0]), T([-4, 2]), T([0, -5]), T([4, 0]))),
    IndexCase("index_put_accumulate", "aten::index_put", lambda x, i: x.index_put((i,), SRC, accumulate=True), X,
              T([1, 1]), (T([-1, 3]), T([0, -4]), T([-5, 0]), T([0, 4]))),
    IndexCase("index_put_two", "aten::index_put", lambda x, i: x.index_put((i, i.flip(0)), T(99)), X, T([0, 2]),
              (T([-1, 2]), T([1, -3]), T([3, 0]), T([-4, -4]))),
    IndexCase("index_put_broadcast", "aten::index_put",
              lambda x, i: x.index_put((i.unsqueeze(1), i[:2].unsqueeze(0)), T(5), accumulate=True), X,
              T([0, 2, 1]), (T([-1, -3, 2]), T([2, 2, 2]), T([3, 0, 1]), T([-5, 0, 0]))),
    IndexCase("index_put_none", "aten::index_put", lambda x, i: torch.ops.aten.index_put(x, [None, i], T(99)), X,
              T([1]), (T([-1]), T([-4]), T([3])), cpu_native=False),
    IndexCase("setitem", "aten::index_put", _setitem, X, T([2, 0]), (T([-1, -4]), T([-5, 0]), T([0, 4]))),
    IndexCase("setitem_accumulate", "aten::index_put", _setitem_accumulate, X, T([2, 2]),
              (T([-1, 3]), T([-5, 0]), T([0, 4]))),
    IndexCase("index_add", "aten::index_add", lambda x, i: x.index_add(0, i, SRC), X, T([1, 1]),
              (T([3, 0]), T([-1, 0]), T([4, 0])), cpu_native=False),
    IndexCase("index_copy", "aten::index_copy", lambda x, i: x.index_copy(0, i, SRC), X, T([1, 2]),
              (T([3, 0]), T([-1, 0]), T([4, 0])), cpu_native=False),
    IndexCase("index_fill", "aten::index_fill", lambda x, i: x.index_fill(1, i, 5), X, T([1]),
              (T([-1]), T([-4]), T([3])), cpu_native=False),
    IndexCase("take", "aten::take", lambda x, i: torch.take(x, i), X, T([0, 11]),
              (T([-1, -12]), T([-13, 0]), T([12, 0])), cpu_native=False),
    IndexCase("one_hot", "aten::one_hot", lambda x, i: F.one_hot(i, 5) * x[0, 0], X, T([[0, 4], [2, 2]]),
              (T([[1, 3], [3, 1]]), T([[-1, 0], [0, 0]]), T([[5, 0], [0, 0]]))),
    IndexCase("nll_loss", "nll_loss", lambda x, i: F.nll_loss(x, i), LOGP, T([0, 2, 1, 1]),
              (T([-100, 0, 1, 2]), T([-100] * 4), T([-1, 0, 1, 2]), T([3, 0, 1, 2]))),
    IndexCase("nll_loss_ignore_sum", "nll_loss", lambda x, i: F.nll_loss(x, i, ignore_index=2, reduction="sum"),
              LOGP, T([0, 2, 1, 1]), (T([2, 2, 0, 1]), T([-100, 0, 1, 2]), T([3, 0, 1, 2]))),
    IndexCase("nll_loss_weight_none", "nll_loss",
              lambda x, i: F.nll_loss(x, i, weight=WEIGHT, ignore_index=7, reduction="none"), LOGP,
              T([0, 2, 1, 1]), (T([7, 0, 7, 2]), T([-1, 0, 1, 2]), T([0, 0, 1, 3]))),
    IndexCase("nll_loss2d", "nll_loss", lambda x, i: F.nll_loss(x, i, weight=WEIGHT), LOGP4,
              T([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]),
              (T([[[-100, 2], [1, 1]], [[2, 0], [0, 1]]]), T([[[0, 2], [1, 1]], [[2, 0], [3, 1]]]),
               T([[[0, 2], [-1, 1]], [[2, 0], [0, 1]]]))),
    IndexCase("cross_entropy_2d", "nll_loss|cross_entropy", lambda x, i: F.cross_entropy(x, i, reduction="none"),
              LOGP4, T([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]),
              (T([[[-100, 2], [1, 1]], [[2, 0], [0, 1]]]), T([[[0, 2], [1, 1]], [[2, 0], [3, 1]]]))),
    IndexCase("cross_entropy", "nll_loss|cross_entropy", lambda x, i: F.cross_entropy(x, i, weight=WEIGHT), XF,
              T([0, 2, 1, 1]), (T([-100, 0, 1, 2]), T([-1, 0, 1, 2]), T([3, 0, 1, 2]))),
    IndexCase("narrow", "aten::narrow", lambda x, i: x.narrow(0, i, 2), X, T(1),
              (T(-2), T(2), T(0), T(-1), T(3), T(-5)), frontends=("torchscript",)),
    *(_grid_sample(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
      for a in (False, True)),
    IndexCase("bucketize", "bucketize", lambda b, v: torch.bucketize(v, b), T([-1.0, 0.0, 2.5]),
              T([0.5, -3.0, 9.0]), (T([NAN, 0.0, 2.5]), T([INF, -INF, -1.0]))),
    IndexCase("bucketize_right", "bucketize", lambda b, v: torch.bucketize(v, b, right=True), T([-1.0, 0.0, 2.5]),
              T([0.5, -3.0, 9.0]), (T([NAN, 0.0, 2.5]), T([INF, -INF, -1.0]))),
    IndexCase("searchsorted", "searchsorted", lambda b, v: torch.searchsorted(b, v, side="right"),
              T([-1.0, 0.0, 2.5]), T([0.5, -3.0, 9.0]), (T([NAN, 0.0, 2.5]), T([INF, -INF, -1.0])),
              cpu_native=False),
    IndexCase("bucketize_nan_boundary", "bucketize", lambda v, b: torch.bucketize(v, b), T([0.5, -3.0, 9.0, NAN]),
              T([-1.0, 0.0, 2.5]), (T([-1.0, 0.0, NAN]), T([NAN, NAN, NAN]), T([2.5, -1.0, 0.0]))),
)


def case_ids() -> list[str]:
    return [c.id for c in CASES]


def by_id(name: str) -> IndexCase:
    return next(c for c in CASES if c.id == name)


def compile_case(case: IndexCase, frontend: str, **options: Any) -> Any:
    return ziggurat.compile(OpModule(case.fn), (case.data, case.index), frontend=frontend, **options)


def eager(case: IndexCase, index: torch.Tensor) -> torch.Tensor | BaseException:
    try:
        with torch.no_grad():
            return case.fn(case.data.clone(), index.clone())
    except (IndexError, RuntimeError) as e:
        return e


def check_probes(case: IndexCase, compiled: Any) -> None:
    """Every probe (and the example) gives eager's values, or an error naming the op where
    eager raises."""
    for index in (case.index, *case.probes):
        expected = eager(case, index)
        if isinstance(expected, BaseException):
            try:
                actual = compiled(case.data, index)
            except ZigguratError as e:
                assert re.search(case.op, str(e)), f"{case.id}{index.tolist()}: the error does not name the op: {e}"
                continue
            raise AssertionError(f"{case.id}{index.tolist()}: eager raises ({expected}), the compiled module "
                                 f"returned {actual}")
        actual = compiled(case.data, index)
        exact = not expected.dtype.is_floating_point
        torch.testing.assert_close(actual, expected, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-6,
                                   equal_nan=True, msg=lambda m, i=index: f"{case.id}{i.tolist()}: {m}")
