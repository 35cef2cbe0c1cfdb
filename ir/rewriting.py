"""Small helpers the graph passes share: literals, single-use checks, op construction."""

from __future__ import annotations

from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from ziggurat.dialects.torch import AtenOp, LiteralOp
from ziggurat.dialects.torch.meta_eval import CPU_FIRST_ELEMENTS, meta_only, numel
from ziggurat.dialects.torch.result_types import makes_dynamic_shapes
from ziggurat.ir.literals import literal_attr
from ziggurat.ir.types import has_dynamic_dims, tensor_type_of, zeros_of

#: A graph pass that leaves an op it would rewrite (``decompose-rnn`` on a too long sequence)
#: says why in this attribute of the op, as ``"<pass>: <reason>"``; backends that cannot take
#: the op add it to their report.
DECLINED_ATTR = "ziggurat.declined"


def declined_reason(op: Operation) -> str | None:
    """Why a graph pass left ``op`` alone (:data:`DECLINED_ATTR`), if one said so."""
    from xdsl.dialects.builtin import StringAttr

    attr = op.attributes.get(DECLINED_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def involves_dynamic_shape(op: Operation) -> bool:
    """Whether an operand or result of ``op`` has a ``?`` size (a data-dependent shape)."""
    return any(has_dynamic_dims(v.type) for v in (*op.operands, *op.results))


def declares_symbols(op: Operation) -> bool:
    """Whether ``op`` is inside a function of a dynamic-shape level, whose ``?`` sizes are
    declared symbols with ranges (``ziggurat.shape_symbols``), not data-dependent ones."""
    from ziggurat.ir.shape_symbols import SHAPE_SYMBOLS_ATTR
    from ziggurat.ir.signature import enclosing_function

    fn = enclosing_function(op)
    return fn is not None and SHAPE_SYMBOLS_ATTR in fn.attributes


class StaticShapesOnly(RewritePattern):
    """``pattern``, applied only to ops whose operands and results all have static shapes.
    Graph rewrites reason about sizes; a ``?`` size is known only when torch runs the op, so
    an op that involves one is left as it is (every backend runs it through torch).

    ``symbolic``: ``pattern`` holds whatever the sizes (a fusion of an activation into the
    GEMM before it), so it also applies where the ``?`` sizes are declared symbols of a
    dynamic-shape level; a pattern that compares sizes there reads them from
    :func:`ziggurat.ir.symbolic_shapes.infer_symbolic_shapes`."""

    def __init__(self, pattern: RewritePattern, symbolic: bool = False) -> None:
        self.pattern = pattern
        self.symbolic = symbolic

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not involves_dynamic_shape(op) or (self.symbolic and declares_symbols(op)):
            self.pattern.match_and_rewrite(op, rewriter)


def literal_value(value: SSAValue | None) -> torch.Tensor | None:
    """The tensor of a value defined by ``torch.literal``, else None."""
    if value is not None and isinstance(value.owner, LiteralOp):
        return value.owner.tensor()
    return None


def new_literal(tensor: torch.Tensor, name: str, given: bool = False) -> LiteralOp:
    """A literal of ``tensor``; ``given``: made for it alone (a packed or widened weight, no other
    reference kept), stored without a copy."""
    op = LiteralOp(literal_attr(tensor.contiguous(), name, given=given))
    op.result.name_hint = _hint(name)
    return op


def _hint(name: str) -> str | None:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


def single_use(value: SSAValue) -> bool:
    return value.has_one_use()


def result_tensor_type(value: SSAValue) -> TensorType[Any]:
    assert isinstance(value.type, TensorType)
    return value.type  # pyright: ignore[reportUnknownVariableType]


def replace_with_literal(rewriter: PatternRewriter, op: Operation, tensors: list[torch.Tensor],
                         name: str) -> list[LiteralOp]:
    literals = [new_literal(t, f"{name}_{i}" if len(tensors) > 1 else name) for i, t in enumerate(tensors)]
    rewriter.replace(op, literals, [lit.result for lit in literals])
    return literals


def literal_type_matches(tensor: torch.Tensor, ty: Any) -> bool:
    return tensor_type_of(tensor) == ty


def _example(value: Any, device: str) -> Any:
    """An operand of ``value``'s type on ``device`` (zeros on the CPU)."""
    if isinstance(value, SSAValue):
        return zeros_of(value.type, device)  # pyright: ignore[reportArgumentType]
    if isinstance(value, list):
        return [_example(v, device) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _elements(value: Any) -> int:
    if isinstance(value, SSAValue):
        return numel(value.type)
    if isinstance(value, list):
        return sum(_elements(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return 0


def build_aten_inferred(cls: type[AtenOp], args: dict[str, Any]) -> AtenOp:
    """``cls.from_arguments(args, result_types)`` with the result types computed by running the
    op: on small zero-filled CPU tensors, else (or where the CPU kernel refuses zeros) on meta
    tensors.  The ops built here are decompositions' arithmetic, whose result shapes never
    follow the data."""
    schema = cls.parsed_schema()
    values = {spec.name: args.get(spec.name, spec.default if spec.has_default else None) for spec in schema.args}
    overload = getattr(getattr(torch.ops.aten, schema.base_name), schema.overload or "default")

    def run(device: str) -> list[Any]:
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for spec in schema.args:
            value = _example(values[spec.name], device)
            if spec.kwarg_only:
                keywords[spec.name] = value
            else:
                positional.append(value)
        result = overload(*positional, **keywords)
        return list(result) if isinstance(result, tuple | list) else [result]  # pyright: ignore

    results: list[Any] | None = None
    # small operands on the CPU first, as the verifiers do (meta_eval.evaluate): some meta
    # kernels are Python references that import torch._dynamo and sympy on first use
    # (never for an op whose result shape follows the data: zeros would give a wrong static one)
    if (sum(_elements(v) for v in values.values()) <= CPU_FIRST_ELEMENTS and not makes_dynamic_shapes(schema)
            and not meta_only(schema.base_name)):
        try:
            with torch.no_grad():
                results = run("cpu")
        except Exception:  # noqa: BLE001 - a kernel refusing zeros: ask the meta kernels
            results = None
    if results is None:
        results = run("meta")
    return cls.from_arguments(args, [tensor_type_of(r) for r in results])
