"""What a converter works with: where trt ops go, torch -> trt values, weights, layer names.

The :class:`ConversionContext` of one TensorRT segment owns

* the builder inserting ``trt`` ops into the segment's function,
* the map from torch SSA values to the ``trt`` values that compute them,
* the weights: every ``torch.literal`` used by the segment becomes one
  ``trt.constant`` sharing the literal's (``dense_resource``) attribute, and
  tensors created by converters are kept in :attr:`weights` until the build ends,
* naming: :meth:`name` is the node info of the torch op being converted
  (``aten::conv2d @ model.py:12 [%x.3 (conv1)]``), with a suffix for the extra
  layers one op needs (``... (post-op relu)``).  Names are unique in the segment
  (TensorRT rejects repeated layer names): a second op with the same node info
  (two ops decomposed from one source op) is ``... #2``, a repeated layer name
  gets `` #2`` as well.  Every layer also takes the torch op's source location,
  so verifier errors and ``ziggurat.bisect`` point at the source line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import torch
from xdsl.builder import Builder
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.tensorrt.converter_args import ConverterArgs, DynamicSizeError, Scalar, node_info
from ziggurat.dialects.torch import LiteralOp
from ziggurat.dialects.torch.op_registry import schema_text
from ziggurat.dialects.trt import ConstantOp, DequantizeOp, TrtLayerOp
from ziggurat.dialects.trt.base import element_of, shape_of
from ziggurat.dialects.trt.shapes import DYNAMIC
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.literals import literal_attr, literal_tensor
from ziggurat.ir.statistics import record
from ziggurat.ir.types import dtype_of, element_type
from ziggurat.passes.decompose_quantize import int8_rows, row_scales

OpT = TypeVar("OpT", bound=TrtLayerOp)

#: The pass name under which converters count what they did (``compiled.report``'s
#: ``convert-torch-to-trt: ...``, ``explain``'s "TensorRT int8").
STATISTICS = "convert-torch-to-trt"


class ConversionError(ZigguratError):
    """A converter that cannot convert this op instance (the op then stays in torch)."""


class ConversionContext:
    """State shared by the converters of one TensorRT segment."""

    def __init__(self, builder: Builder,
                 size_exprs: Callable[[SSAValue], tuple[str, ...] | None] | None = None) -> None:
        self.builder = builder
        #: a torch value's size expressions over the shape symbols (``("2*batch", "15")``), or
        #: None where unknown (a function without symbols)
        self.size_exprs: Callable[[SSAValue], tuple[str, ...] | None] = size_exprs or (lambda _v: None)
        self.values: dict[SSAValue, SSAValue] = {}
        #: tensors created at conversion time, kept alive until the engine is built
        self.weights: list[torch.Tensor] = []
        self._constants: dict[SSAValue, SSAValue] = {}
        self._trt_values: set[SSAValue] = set()
        self._op: Operation | None = None
        self._node_info = "ziggurat"
        self._node_infos: set[str] = set()
        self._layer_names: set[str] = set()
        #: the op is being converted in float32 (``half_float_widening``): its 16-bit float
        #: results are reported as float32 by ``result_types``/``result_dtype``
        self.widening = False

    # -- the op being converted -----------------------------------------------------------
    def begin(self, op: Operation) -> ConverterArgs:
        """Start converting ``op``: layers are named after it from now on."""
        self._op = op
        self._node_info = _unique(node_info(op), self._node_infos)
        return ConverterArgs(op)

    @property
    def op(self) -> Operation:
        if self._op is None:
            raise ConversionError("no torch op is being converted", op="conversion context")
        return self._op

    def name(self, suffix: str = "") -> str:
        """The layer name: the node info, plus ``suffix`` for helper layers."""
        return f"{self._node_info} ({suffix})" if suffix else self._node_info

    def error(self, message: str) -> ConversionError:
        op = self._op
        return ConversionError(message, op=self._node_info, schema=schema_text(op) if op is not None else None)

    # -- inserting layers ---------------------------------------------------------------------
    def add(self, op: OpT) -> OpT:
        """Insert a ``trt`` op (built with ``name=ctx.name(...)``) at the end of the segment;
        its name is made unique and it takes the source location of the torch op."""
        unique = _unique(op.layer, self._layer_names)
        if unique != op.layer:
            op.properties["name"] = StringAttr(unique)
        if self._op is not None:
            op.location = self._op.location
        self.builder.insert(op)
        self._trt_values.update(op.results)
        return op

    def discard(self, layers: Sequence[Operation]) -> None:
        """Erase ``layers``, the last ones added for the current op (read by nothing else),
        forgetting their names and the literals they hold: a first attempt converted again."""
        for op in reversed(layers):
            for r in op.results:
                assert not any(use.operation not in layers for use in r.uses), "a discarded layer is read"
                self._trt_values.discard(r)
            self._constants = {k: v for k, v in self._constants.items() if v.owner is not op}
            if isinstance(op, TrtLayerOp):
                self._layer_names.discard(op.layer)
            op.detach()
            op.erase(safe_erase=False)

    # -- values ----------------------------------------------------------------------------------
    def map(self, torch_value: SSAValue, trt_value: SSAValue) -> None:
        self.values[torch_value] = trt_value
        self._trt_values.add(trt_value)

    def is_trt(self, value: SSAValue) -> bool:
        """Whether ``value`` is already a value of the trt segment."""
        return value in self._trt_values

    def tensor(
        self,
        value: SSAValue | Scalar | torch.Tensor,
        *,
        like: SSAValue | None = None,
        dtype: torch.dtype | None = None,
    ) -> SSAValue:
        """The ``trt`` value of a torch value, a literal, or a number.

        A number becomes a constant of rank ``rank(like)`` (all dims 1, so that
        TensorRT's broadcast applies) with ``dtype`` (default: ``like``'s dtype).
        """
        if isinstance(value, SSAValue):
            if value in self._trt_values:
                return value
            if value in self.values:
                return self.values[value]
            owner = value.owner
            if isinstance(owner, LiteralOp):
                return self._literal(owner)
            raise self.error(f"{value} is not computed inside this TensorRT segment")
        if isinstance(value, torch.Tensor):
            return self.constant(value)
        rank = len(shape_of(like)) if like is not None else 0
        if dtype is None:
            if like is not None:
                dtype = dtype_of(like.type)
            else:
                dtype = torch.bool if isinstance(value, bool) else torch.int64 if isinstance(value, int) else torch.float32
        return self.constant(torch.full([1] * rank, value, dtype=dtype), "scalar")

    def _literal(self, op: LiteralOp) -> SSAValue:
        cached = self._constants.get(op.result)
        if cached is None:
            hint = op.result.name_hint or "literal"
            cached = self._dequantized_weight(op, hint)
            if cached is None:
                const = self.add(ConstantOp(op.value, name=hint))
                const.output.name_hint = hint
                cached = const.output
            self._constants[op.result] = cached
        return cached

    def _dequantized_weight(self, op: LiteralOp, hint: str) -> SSAValue | None:
        """A folded int8 weight (``ziggurat.row_scales``: its rows are int8 times their scales)
        as its int8 constant and a per-channel dequantize along dim 0, TensorRT's int8 weights;
        None for any other literal."""
        scales = row_scales(op.result)
        w8 = None if scales is None else int8_rows(literal_tensor(op.value), scales)
        if scales is None or w8 is None:
            return None
        record(STATISTICS, "int8 weights as int8 constants and a dequantize")
        integers = self.constant(w8, f"{hint} int8")
        integers.name_hint = f"{hint}_int8"
        dequantize = self.add(DequantizeOp(integers, self.constant(scales, f"{hint} scales"),
                                           name=self.name(f"dequantize {hint}"), axis=0))
        dequantize.output.name_hint = hint
        return dequantize.output

    def constant(self, value: torch.Tensor, suffix: str = "constant") -> SSAValue:
        """A ``trt.constant`` holding ``value`` (kept alive in :attr:`weights`)."""
        value = value.detach().to("cpu").contiguous()
        self.weights.append(value)
        return self.add(ConstantOp(literal_attr(value, self.name(suffix)), name=self.name(suffix))).output

    def literal(self, value: SSAValue) -> torch.Tensor | None:
        """The compile-time tensor behind a torch or trt value, if it is a constant."""
        owner = value.owner
        if isinstance(owner, LiteralOp):
            return literal_tensor(owner.value)
        mapped = self.values.get(value)
        if mapped is not None and isinstance(mapped.owner, ConstantOp):
            return literal_tensor(mapped.owner.weights)
        if isinstance(owner, ConstantOp):
            return literal_tensor(owner.weights)
        return None

    # -- types --------------------------------------------------------------------------------------
    @staticmethod
    def shape(value: SSAValue, dynamic: bool = False) -> tuple[int, ...]:
        """``value``'s sizes.  A dynamic dim (-1) is an error unless the caller passes ``dynamic``
        (it handles -1 as a run-time size): a converter must not compute with it as a number."""
        shape = shape_of(value)
        if not dynamic and DYNAMIC in shape:
            raise DynamicSizeError(value.type)
        return shape

    @staticmethod
    def dims(value: SSAValue, which: Sequence[int]) -> tuple[int, ...]:
        """The sizes of dims ``which`` (negative: from the end), each static (else a
        :class:`DynamicSizeError`): what a converter may compute with when other dims are dynamic."""
        shape = shape_of(value)
        picked = tuple(shape[d] for d in which)
        if DYNAMIC in picked:
            raise DynamicSizeError(value.type)
        return picked

    @staticmethod
    def rank(value: SSAValue) -> int:
        return len(shape_of(value))

    @staticmethod
    def dtype(value: SSAValue) -> torch.dtype:
        return dtype_of(value.type)

    @staticmethod
    def element(dtype: torch.dtype) -> Attribute:
        return element_type(dtype)

    def result_types(self) -> Sequence[TensorType[Attribute]]:
        """The types the torch op's results must have after conversion."""
        types: list[TensorType[Attribute]] = []
        for r in self.op.results:
            assert isinstance(r.type, TensorType)
            ty: TensorType[Attribute] = r.type  # pyright: ignore[reportUnknownVariableType]
            if self.widening and dtype_of(ty) in (torch.bfloat16, torch.float16):
                ty = TensorType(element_type(torch.float32), ty.get_shape())
            types.append(ty)
        return types

    def result_dtype(self, index: int = 0) -> torch.dtype:
        dtype = dtype_of(self.op.results[index].type)
        return torch.float32 if self.widening and dtype in (torch.bfloat16, torch.float16) else dtype

    def result_shape(self, index: int = 0) -> tuple[int, ...]:
        return self.shape(self.op.results[index])

    @staticmethod
    def element_of(value: SSAValue) -> Attribute:
        return element_of(value)


def _unique(wanted: str, taken: set[str]) -> str:
    name, n = wanted, 1
    while name in taken:
        n += 1
        name = f"{wanted} #{n}"
    taken.add(name)
    return name

