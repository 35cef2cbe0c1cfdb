"""The schedule: what the lowering of one graph produces, in execution order.

* :class:`ComputeNode` - one loop kernel writing ``out[index] = fn(index)`` (element-wise
  chains, reductions computed in the kernel's loops, data movement as index arithmetic);
* :class:`ScanNode` - a cumulative op along one dimension (``cumsum``...);
* :class:`GemmNode` - one call of the GEMM library (linear, matmul, convolution);
* :class:`FallbackNode` - a torch op without native lowering, run through torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Operation

from ziggurat.backends.cpu.lowering.index import IndexExpr
from ziggurat.backends.cpu.lowering.tensors import ElementFn, Pieces, TensorValue
from ziggurat.backends.cpu.lowering.values import Buffer


@dataclass(eq=False)
class ComputeNode:
    name: str
    out: Buffer
    fn: ElementFn
    origins: tuple[str, ...] = ()
    #: ``fn`` is piecewise along a dim (``cat``: one source per range of the dim): the kernel
    #: runs one loop nest per piece, in which ``fn`` reads that piece's source alone
    pieces: Pieces | None = None


@dataclass(eq=False)
class ScanNode:
    """``out[..., i, ...] = combine(out[..., i-1, ...], src[..., i, ...])`` along ``dim``."""

    name: str
    out: Buffer
    src: TensorValue
    dim: int
    kind: str  # "sum" | "prod" | "max" | "min" | "logaddexp"
    origins: tuple[str, ...] = ()


@dataclass(eq=False)
class GemmOperand:
    """A GEMM operand: ``buffer`` from element ``offset`` on."""

    buffer: Buffer
    offset: int = 0


@dataclass(eq=False)
class GemmNode:
    """One ``emit_gemm`` call: ``spec`` are ``GemmSpec`` keyword arguments (without ``isa``,
    ``threads`` and ``name``, which code generation fills in)."""

    name: str
    a: GemmOperand
    b: GemmOperand
    c: GemmOperand
    bias: GemmOperand | None
    other: GemmOperand | None
    spec: dict[str, Any] = field(default_factory=dict[str, Any])
    origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class StaticOperand:
    """A compile-time scalar operand of a fallback op (becomes an ``arith.constant``)."""

    value: bool | int | float
    type: Any


@dataclass(frozen=True)
class RuntimeOperand:
    """A scalar operand computed by an earlier fallback op (its SSA value in the torch IR)."""

    ssa: Any


@dataclass(eq=False)
class FallbackNode:
    """A torch op run through torch: ``operands`` follow the op's operands (a buffer per
    tensor operand); ``results`` one buffer per tensor result (None for a scalar result)."""

    op: Operation
    operands: Sequence[Buffer | StaticOperand | RuntimeOperand]
    results: Sequence[Buffer | None]
    reason: str = ""


Node = ComputeNode | ScanNode | GemmNode | FallbackNode


def store_index(shape: Sequence[int], index: Sequence[IndexExpr]) -> IndexExpr:
    from ziggurat.backends.cpu.lowering.index import flat_index

    return flat_index(index, shape)
