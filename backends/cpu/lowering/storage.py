"""Ops that address their operand's *storage* (``as_strided``, ``_reshape_alias``), lowered
against the storage eager would give that operand.

``torch.as_strided(v, size, stride, offset)`` reads ``storage(v)[offset + sum(i * stride)]``:
it ignores ``v``'s own strides and offset and reads the storage ``v`` shares with its base.
After views (``x.t()``, ``x[1:]``, ``x.unfold(...)``) that storage is the base's; after a
pointwise op on a permuted view it is a fresh buffer in the *view's* order (eager's
TensorIterator keeps the layout: ``(x.t() + 0).stride() == (1, 4)``).  Lowered values are
row-major and know nothing of strides, so the layout eager gives each value is computed
here by running the graph's ops on meta tensors (exact stride propagation, as eager), from
the graph inputs (contiguous: the runtime checks it) and the weights.

The storage root of the operand (the value whose allocation it shares) must be dense (its
strides a permutation of contiguous strides, offset 0): its storage element ``j`` is then
the root's element at subscripts ``(j // stride_d) % size_d``, which is index arithmetic on
the root's row-major lowered value.  Anything else - a layout the meta run cannot prove, an
access outside the root - is a :class:`StorageLayoutError`: the op's fallback would see a
row-major copy and compute something else, so the compile stops instead of guessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ziggurat.backends.cpu.lowering.args import LoweringArgs
from ziggurat.backends.cpu.lowering.context import LoweringContext
from ziggurat.backends.cpu.lowering.index import IndexExpr, unflatten
from ziggurat.backends.cpu.lowering.pointwise import map_tensor
from ziggurat.backends.cpu.lowering.tensors import Index, TensorValue
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.locations import op_location
from ziggurat.ir.types import dtype_of, shape_of

#: aten ops whose result addresses the storage of their (first) tensor operand.
STORAGE_OPS = frozenset({"aten::as_strided", "aten::_reshape_alias", "aten::as_strided_copy"})


class StorageLayoutError(ZigguratError):
    """An op addresses storage whose layout in eager cannot be proven at compile time."""


class Unprovable(Exception):
    """The meta run cannot give this value's eager layout."""


class EagerLayouts:
    """The meta tensor eager would hold for each value of a torch-level function (its shape,
    strides, storage offset and which allocation it shares), computed on demand."""

    def __init__(self, fn: func.FuncOp) -> None:
        self.fn = fn
        self._meta: dict[SSAValue, Any] = {}
        self._owner: dict[int, SSAValue] = {}  # storage id -> the value that allocated it

    def meta(self, value: SSAValue) -> Any:
        if value in self._meta:
            return _known(self._meta[value])
        result = _known(self._compute(value))
        self._meta[value] = result
        if isinstance(result, torch.Tensor):
            self._owner.setdefault(_storage_id(result), value)
        return result

    def root(self, value: SSAValue) -> tuple[SSAValue, torch.Tensor]:
        """The value whose allocation ``value`` shares, and its meta tensor."""
        meta = self.meta(value)
        if not isinstance(meta, torch.Tensor):
            raise Unprovable("not a tensor")
        owner = self._owner[_storage_id(meta)]
        return owner, self._meta[owner]

    def _compute(self, value: SSAValue) -> Any:
        owner = value.owner
        if isinstance(owner, Block):
            return _fresh(value)
        assert isinstance(owner, Operation)
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, IntegerAttr):
                width = getattr(attr.type, "width", None)
                return bool(attr.value.data) if width is not None and width.data == 1 else int(attr.value.data)
            if isinstance(attr, FloatAttr):
                return float(attr.value.data)
            raise Unprovable("a non-scalar constant")
        from ziggurat.dialects.torch import LiteralOp, TorchOp

        if isinstance(owner, LiteralOp):
            return _fresh(value)  # a weight: the importer stores it dense
        # every operand first, in program order, so the allocations are recorded in order
        operands = tuple(self.meta(v) for v in owner.operands)
        if isinstance(owner, TorchOp):
            from ziggurat.ir.interpreter.torch_functions import call_torch

            try:
                results = call_torch(owner, operands, check_types=False)
            except Exception as e:  # no meta kernel, a data-dependent op
                raise Unprovable(f"{owner.name} does not run on meta tensors ({type(e).__name__})") from None
            # a meta function may disagree with the CPU kernel on a result eager never shows
            # (``_native_batch_norm_legit_no_training``'s saved statistics: (C,) on meta, (0,)
            # on the CPU): that result has no provable layout, its siblings keep theirs
            results = tuple(_as_declared(owner.name, r.type, m) for r, m in zip(owner.results, results, strict=True))
        elif owner.name.startswith("fused.") and all(
                not isinstance(m, torch.Tensor) or m.is_contiguous() for m in operands):
            # conv/linear/matmul + element-wise post-ops on contiguous operands: contiguous
            results = tuple(_fresh(r) for r in owner.results)
        else:
            raise Unprovable(f"{owner.name} has no eager layout")
        for res, meta in zip(owner.results, results, strict=True):
            self._meta[res] = meta
            if isinstance(meta, torch.Tensor):
                self._owner.setdefault(_storage_id(meta), res)
        return self._meta[value]


def _known(meta: Any) -> Any:
    if isinstance(meta, Unprovable):
        raise meta
    return meta


def _as_declared(name: str, declared: Any, meta: Any) -> Any:
    """``meta``, or an :class:`Unprovable` where it is not a tensor of the declared type."""
    if not isinstance(declared, TensorType) or not isinstance(meta, torch.Tensor):
        return meta
    shape = tuple(declared.get_shape())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if meta.dtype != dtype_of(declared) or len(shape) != meta.dim() or any(
            d >= 0 and d != n for d, n in zip(shape, meta.shape, strict=True)):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        return Unprovable(f"{name}'s meta function gives {tuple(meta.shape)} {meta.dtype} where the IR "
                          f"declares {declared}")
    return meta


def _storage_id(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata  # pyright: ignore[reportPrivateUsage]


def _fresh(value: SSAValue) -> Any:
    ty = value.type
    if not isinstance(ty, TensorType):
        raise Unprovable(f"a block argument of type {ty}")
    return torch.empty(shape_of(ty), dtype=dtype_of(ty), device="meta")  # pyright: ignore[reportArgumentType]


def _layouts(ctx: LoweringContext, op: Operation) -> EagerLayouts:
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    if fn is None:
        raise Unprovable("the op is not inside a function")
    layouts = ctx.eager_layouts
    if not isinstance(layouts, EagerLayouts) or layouts.fn is not fn:
        layouts = ctx.eager_layouts = EagerLayouts(fn)
    return layouts


def _refuse(op: Operation, reason: str) -> StorageLayoutError:
    return StorageLayoutError(
        f"{reason}; it addresses storage, so running it through torch on a row-major copy would give "
        "other numbers. Make the operand contiguous (.contiguous()) or index it with views instead",
        op=op_key(op), location=op_location(op))


def dense_order(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """``strides`` lay out ``shape`` densely (a permutation of contiguous strides)."""
    dims = sorted((s, n) for s, n in zip(strides, shape, strict=True) if n != 1)
    expected = 1
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True


def storage_view(ctx: LoweringContext, args: LoweringArgs, operand: SSAValue, size: Sequence[int],
                 stride: Sequence[int], offset: int | None) -> TensorValue:
    """``as_strided(operand, size, stride, offset)`` (``offset`` None: the operand's own storage
    offset, as ``_reshape_alias``) as index arithmetic on the operand's storage root."""
    try:
        layouts = _layouts(ctx, args.op)
        meta = layouts.meta(operand)
        if not isinstance(meta, torch.Tensor):
            raise Unprovable("the operand is not a tensor")
        root, root_meta = layouts.root(operand)
    except Unprovable as e:
        raise _refuse(args.op, f"the layout eager gives its operand cannot be proven ({e})") from None
    if offset is None:
        offset = int(meta.storage_offset())
    shape, strides = tuple(root_meta.shape), tuple(root_meta.stride())
    numel = root_meta.numel()
    if root_meta.storage_offset() != 0 or not dense_order(shape, strides) or \
            root_meta.untyped_storage().nbytes() != numel * root_meta.element_size():
        raise _refuse(args.op, f"its storage is laid out as strides {strides} at offset "
                            f"{root_meta.storage_offset()}, not densely")
    lo = offset + sum(min(0, (n - 1) * s) for n, s in zip(size, stride, strict=True))
    hi = offset + sum(max(0, (n - 1) * s) for n, s in zip(size, stride, strict=True))
    if any(n == 0 for n in size):
        lo, hi = 0, -1
    if lo < 0 or hi >= numel:
        raise _refuse(args.op, f"it reads storage elements [{lo}, {hi}] of a storage of {numel}")
    base = args.value_of(root)
    if not isinstance(base, TensorValue):
        raise _refuse(args.op, "its storage root has no lowered tensor")
    if isinstance(root, BlockArgument):
        ctx.storage_inputs.add(root.index)
    contiguous = all(s == c for s, c, n in zip(strides, _contiguous(shape), shape, strict=True) if n != 1)

    def index_map(idx: Index) -> list[IndexExpr]:
        flat = IndexExpr.of(offset)
        for i, s in zip(idx, stride, strict=True):
            flat = flat + IndexExpr.of(i) * s
        if contiguous:
            return unflatten(flat, shape)
        return [IndexExpr.of(0) if n == 1 else (flat // s) % n for s, n in zip(strides, shape, strict=True)]

    return map_tensor(ctx, base, tuple(size), base.dtype, index_map)


def _contiguous(shape: Sequence[int]) -> list[int]:
    out: list[int] = []
    acc = 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return out[::-1]


def check_storage_fallback(ctx: LoweringContext, op: Operation, key: str) -> None:
    """A storage-addressing op sent to torch sees its operand's buffer as a fresh row-major
    tensor (the runtime clones it): right only when eager's operand owns dense row-major
    storage of its own; otherwise stop the compile."""
    if key not in STORAGE_OPS or not op.operands:
        return
    operand = op.operands[0]
    try:
        layouts = _layouts(ctx, op)
        meta = layouts.meta(operand)
        root, root_meta = layouts.root(operand)
    except Unprovable as e:
        raise _refuse(op, f"the layout eager gives its operand cannot be proven ({e})") from None
    if root is not operand or not meta.is_contiguous() or meta.storage_offset() != 0 or \
            root_meta.untyped_storage().nbytes() != meta.numel() * meta.element_size():
        raise _refuse(op, "its operand shares storage with another value or is not row-major in eager")
    if isinstance(operand, BlockArgument):
        ctx.storage_inputs.add(operand.index)


__all__ = ["STORAGE_OPS", "EagerLayouts", "StorageLayoutError", "check_storage_fallback", "storage_view"]
