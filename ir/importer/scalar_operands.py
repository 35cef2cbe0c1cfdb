"""Run-time sizes passed for ``Tensor`` arguments of an exported graph.

With dynamic shapes, ``x / x.numel()`` or ``x * x.size(0)`` exports as
``aten.div.Tensor(x, sym_size)``: the second argument is a SymInt, which the importer holds
as an ``i64`` scalar, and a ``Tensor`` operand cannot take it. Eager passes such a number as
a *wrapped number* (a 0-d tensor that promotes by category only: ``float32 * int`` stays
float32, ``int64 / int`` is float), and the op's ``Scalar`` overload (``div.Scalar``,
``mul.Scalar``, ``add.Scalar``, ``floor_divide.Scalar``...) is defined as exactly that call,
so the scalar moves to it. (A specialization imports the size as a number, which
:func:`op_builder.wrap_number` makes a literal.)
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ziggurat.dialects.torch.schema import ArgKind, OpSchema, parse_schema
from ziggurat.ir.errors import ModelImportError
from ziggurat.ir.importer.values import Dynamic


#: Python arithmetic and comparisons on run-time sizes (what torch.export writes for ``u0 >= 0``
#: before an ``_assert_scalar``, or for ``x.size(0) * x.size(1)``), as TorchScript's aten ops
_INT_ARITHMETIC: dict[Any, Any] = {
    operator.ge: torch.ops.aten.ge.int, operator.le: torch.ops.aten.le.int,  # pyright: ignore
    operator.gt: torch.ops.aten.gt.int, operator.lt: torch.ops.aten.lt.int,  # pyright: ignore
    operator.eq: torch.ops.aten.eq.int, operator.ne: torch.ops.aten.ne.int,  # pyright: ignore
    operator.add: torch.ops.aten.add.int, operator.sub: torch.ops.aten.sub.int,  # pyright: ignore
    operator.mul: torch.ops.aten.mul.int, operator.floordiv: torch.ops.aten.floordiv.int,  # pyright: ignore
    operator.mod: torch.ops.aten.remainder.int,  # pyright: ignore
    operator.and_: torch.ops.aten.__and__.bool, operator.or_: torch.ops.aten.__or__.bool,  # pyright: ignore
}
#: size arithmetic that is float whatever its operands (``x / (x.size(0) / 2)``)
_FLOAT_ARITHMETIC: dict[Any, Any] = {
    torch.sym_float: torch.ops.aten.Float.Scalar, operator.truediv: torch.ops.aten.div.default,  # pyright: ignore
}


def _is_float(value: object) -> bool:
    example = value.meta.get("val") if isinstance(value, torch.fx.Node) else value
    return isinstance(example, torch.SymFloat | float)


def aten_of(target: Any, args: Sequence[Any]) -> Any:
    """The aten op for an FX node's ``target``: itself, or the aten op of Python size
    arithmetic; on a SymFloat (``x.size(0) * 0.5``) the op's ``Scalar`` form (``aten::mul(Scalar
    a, Scalar b) -> Scalar``), as ints are not floats."""
    if target in _FLOAT_ARITHMETIC:
        return _FLOAT_ARITHMETIC[target]
    if target not in _INT_ARITHMETIC:
        return target
    op = _INT_ARITHMETIC[target]
    if any(_is_float(a) for a in args) and target not in (operator.and_, operator.or_):
        return op.overloadpacket.default
    return op


def runtime_scalar_tensors(schema: OpSchema, args: Mapping[str, Any]) -> list[str]:
    """The ``Tensor`` arguments given a run-time scalar (a SymInt, SymFloat or SymBool)."""
    return [a.name for a in schema.args if a.kind == ArgKind.TENSOR
            and isinstance(v := args.get(a.name), Dynamic) and not isinstance(v.example, torch.Tensor)]


def _signature(schema: OpSchema, scalars: Sequence[str]) -> tuple[Any, ...]:
    args = tuple((a.name, ArgKind.SCALAR if a.name in scalars else a.kind, a.optional) for a in schema.args)
    return args, tuple(r.kind for r in schema.returns)


def scalar_overload(target: Any, schema: OpSchema, names: Sequence[str]) -> OpSchema | None:
    """The overload of ``target``'s op taking ``Scalar`` for the ``names`` arguments and
    otherwise what ``schema`` takes (``div.Tensor`` -> ``div.Scalar``), or None."""
    want = _signature(schema, names)
    packet = target.overloadpacket
    for name in packet.overloads():
        candidate = parse_schema(str(getattr(packet, name)._schema))  # pyright: ignore[reportPrivateUsage]
        if candidate.key != schema.key and not candidate.is_out_variant and _signature(candidate, ()) == want:
            return candidate
    return None


def place_runtime_scalars(target: Any, schema: OpSchema, args: Mapping[str, Any]) -> OpSchema:
    """The schema to build ``target`` with: ``schema``, or its ``Scalar`` overload when a
    ``Tensor`` argument holds a run-time scalar."""
    names = runtime_scalar_tensors(schema, args)
    if not names:
        return schema
    overload = scalar_overload(target, schema, names)
    if overload is None:
        raise ModelImportError(f"{', '.join(repr(n) for n in names)}: a Tensor argument given a run-time size "
                               f"(a SymInt), and the op has no overload taking a Scalar there", op=schema.key,
                               schema=schema.text)
    return overload
