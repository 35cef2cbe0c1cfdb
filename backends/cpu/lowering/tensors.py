"""Tensors during lowering: realized buffers, lazy element-wise functions, reductions.

As Inductor's ``TensorBox``/``StorageBox``: a :class:`LazyValue` is an element function
not yet computed anywhere; reading it from another lazy value inlines it (fusion).
``LoweringContext.realize`` turns one into a kernel writing a buffer; from then on
reading it loads that buffer.  A :class:`ReductionValue` reads as a ``ReduceRef``: the
consuming kernel computes the reduction in its own loops (softmax is one kernel), unless
the reduction was realized on its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from ziggurat.backends.cpu.lowering.index import IndexExpr, Var
from ziggurat.backends.cpu.lowering.values import Buffer, Load, Reduction, ReduceRef, Value, walk

Index = Sequence[IndexExpr]
ElementFn = Callable[[Index], Value]

_epoch = 0
_horizon: float = float("inf")


@contextlib.contextmanager
def schedule_horizon(position: int) -> Iterator[None]:
    """While emitting schedule node ``position``, a tensor realized by a later node reads as
    its element function (the node was formed before that realization)."""
    global _horizon
    old = _horizon
    _horizon = position
    begin_trace()
    try:
        yield
    finally:
        _horizon = old
        begin_trace()


def _visible(order: int) -> bool:
    return order < _horizon


def begin_trace() -> None:
    """Start a new trace: memoized element DAGs of earlier traces are not reused (a lazy
    value read there may have been realized since)."""
    global _epoch
    _epoch += 1


class TensorValue:
    """A lowered tensor of static ``shape`` and ``dtype``."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    origins: tuple[str, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def load(self, index: Index) -> Value:
        raise NotImplementedError

    @property
    def buffer(self) -> Buffer | None:
        """The buffer holding this tensor, if realized."""
        return None

    def trace(self) -> tuple[list[Var], Value]:
        """The element DAG over fresh variables (for analyses at lowering time)."""
        begin_trace()
        vars_ = [Var(f"t{i}", n) for i, n in enumerate(self.shape)]
        return vars_, self.load([IndexExpr.of(v) for v in vars_])


def _prod(shape: Sequence[int]) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


class BufferValue(TensorValue):
    def __init__(self, buffer: Buffer) -> None:
        self._buffer = buffer
        self.shape = buffer.shape
        self.dtype = buffer.dtype

    @property
    def buffer(self) -> Buffer:
        return self._buffer

    def load(self, index: Index) -> Value:
        return Load(self._buffer, index)


@dataclass(frozen=True)
class Pieces:
    """An element function that reads one source per range of dim ``dim``: piece ``k`` covers
    ``[starts[k], starts[k] + sizes[k])`` (a ``cat``/``stack``)."""

    dim: int
    starts: tuple[int, ...]
    sizes: tuple[int, ...]


class LazyValue(TensorValue):
    """``fn(index) -> Value``, inlined into every reader until realized."""

    def __init__(self, shape: Sequence[int], dtype: torch.dtype, fn: ElementFn,
                 origins: Sequence[str] = (), pieces: Pieces | None = None) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.fn = fn
        self.origins = tuple(origins)
        #: where ``fn`` is piecewise (the kernel realizing it runs one loop nest per piece)
        self.pieces = pieces
        self.realized: Buffer | None = None
        self.realized_order = -1
        self._memo: dict[tuple[IndexExpr, ...], Value] = {}
        self._memo_epoch = _epoch

    @property
    def buffer(self) -> Buffer | None:
        return self.realized if self.realized is not None and _visible(self.realized_order) else None

    def load(self, index: Index) -> Value:
        key = tuple(IndexExpr.of(i) for i in index)
        if len(key) != len(self.shape):
            from ziggurat.backends.cpu.lowering.values import LoweringBug

            raise LoweringBug(f"{len(key)} subscripts for a rank-{len(self.shape)} tensor ({self.origins})")
        if self.buffer is not None:
            return Load(self.buffer, key)
        if self._memo_epoch != _epoch:
            self._memo.clear()
            self._memo_epoch = _epoch
        hit = self._memo.get(key)
        if hit is None:
            hit = self.fn(key)
            if hit.dtype != self.dtype:
                from ziggurat.backends.cpu.lowering.values import LoweringBug

                raise LoweringBug(f"element function of {self.origins} gives {hit.dtype}, declared {self.dtype}")
            self._memo[key] = hit
        return hit

    def clear_memo(self) -> None:
        self._memo.clear()

    def compute_size(self) -> tuple[int, int]:
        """(nodes of the element DAG that are not loads/constants (0: a pure view), the largest
        number of elements a reduction it reads combines per output)."""
        from ziggurat.backends.cpu.lowering.values import Const, IndexValue

        if self.numel == 0:
            return 0, 0
        _, root = self.trace()
        self.clear_memo()
        nodes = list(walk(root))
        size = sum(1 for n in nodes if not isinstance(n, Load | Const | IndexValue))
        window = max((_prod(n.reduction.red_shape) for n in nodes if isinstance(n, ReduceRef)), default=0)
        return size, window


class ReductionValue(TensorValue):
    """The result of one :class:`Reduction`."""

    def __init__(self, reduction: Reduction) -> None:
        self.reduction = reduction
        self.shape = reduction.out_shape
        self.dtype = reduction.dtype
        self.origins = reduction.origins
        self.realized: Buffer | None = None
        self.realized_order = -1

    @property
    def buffer(self) -> Buffer | None:
        return self.realized if self.realized is not None and _visible(self.realized_order) else None

    def load(self, index: Index) -> Value:
        if self.buffer is not None:
            return Load(self.buffer, index)
        return ReduceRef(self.reduction, index)
