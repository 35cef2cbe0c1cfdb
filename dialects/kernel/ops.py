"""The ``kernel`` ops: one op per kernel the CPU backend will run, on tensors.

Each op is a region that is isolated from above: its block arguments are the op's inputs,
its body the ``torch``/``fused`` ops the kernel computes, and ``kernel.yield`` returns the
kernel's results.  The op's kind says how the kernel iterates (over its output's elements,
over a reduced window, along a scanned dimension, through checked indirect indices, as a
library GEMM/convolution, or through torch), and its properties hold the decisions made about
it, so that every decision can be printed and tested:

* ``realize``: per result, why it is written to memory (``"read twice"``, ``"graph output"``,
  ``"feeds a library call"``...); an empty string: its one reader computes it (fused);
* ``layout``: per result, the order it is stored in (``"contiguous"``, ``"channels_last"``); an
  empty string: this kernel does not store it (its reader computes it, or lays it out);
* ``isa``: the instruction set the kernel is generated for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, IntegerAttr, StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects.kernel.specs import ConvSpecAttr, GemmSpecAttr

#: Values ``layout`` may take ("": the kernel does not store the result).
LAYOUTS = ("contiguous", "channels_last", "")

_FORMAT = "`ins` `(` ($inputs^ `:` type($inputs))? `)` attr-dict `->` type($outputs) $body"


def _shape(ty: Attribute) -> tuple[int, ...] | None:
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else None


class KernelOp(IRDLOperation):
    """What every kernel op has: inputs, tensor results, a body and the decisions made about it."""

    inputs = var_operand_def()
    #: tensors, and the scalars some kernels compute (``aten::Int``, ``item``, sizes)
    outputs = var_result_def()
    body = region_def("single_block")
    #: per result: why it is written to memory ("" = fused into its one reader)
    realize = opt_prop_def(ArrayAttr[StringAttr])
    #: per result: the order it is stored in ("" = not stored by this kernel)
    layout = opt_prop_def(ArrayAttr[StringAttr])
    isa = opt_prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    KIND: ClassVar[str]

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 properties: dict[str, Attribute] | None = None) -> None:
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         properties=dict(properties or {}))

    @property
    def block(self) -> Block:
        return self.body.block

    def yielded(self) -> Sequence[SSAValue]:
        last = self.block.last_op
        assert isinstance(last, YieldOp)
        return last.values

    def computed_ops(self) -> list[Operation]:
        """The ops of the body, without the terminator."""
        return [op for op in self.block.ops if not isinstance(op, YieldOp)]

    def realize_reasons(self) -> list[str]:
        if self.realize is None:
            return [""] * len(self.outputs)
        return [r.data for r in self.realize.data]

    def layouts(self) -> list[str]:
        """Per result, the order it is stored in ("" where this kernel does not store it, or
        where no ``kernel-layout`` has decided)."""
        if self.layout is None:
            return [""] * len(self.outputs)
        return [r.data for r in self.layout.data]

    def verify_(self) -> None:
        args = self.block.args
        if len(args) != len(self.inputs):
            raise VerifyException(f"{self.name}: the body takes {len(args)} arguments for {len(self.inputs)} inputs")
        for i, (arg, value) in enumerate(zip(args, self.inputs, strict=True)):
            if arg.type != value.type:
                raise VerifyException(f"{self.name}: body argument {i} is {arg.type}, input {i} is {value.type}")
        last = self.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"{self.name}: the body must end in kernel.yield")
        got = [v.type for v in last.values]
        want = [r.type for r in self.outputs]
        if got != want:
            raise VerifyException(f"{self.name}: kernel.yield gives ({', '.join(map(str, got))}), "
                                  f"the op returns ({', '.join(map(str, want))})")
        if self.realize is not None and len(self.realize.data) != len(self.outputs):
            raise VerifyException(f"{self.name}: realize has {len(self.realize.data)} entries for "
                                  f"{len(self.outputs)} results")
        if self.layout is not None:
            if len(self.layout.data) != len(self.outputs):
                raise VerifyException(f"{self.name}: layout has {len(self.layout.data)} entries for "
                                      f"{len(self.outputs)} results")
            for entry in self.layout.data:
                if entry.data not in LAYOUTS:
                    raise VerifyException(f"{self.name}: unknown layout {entry.data!r}; known: "
                                          f"{', '.join(repr(x) for x in LAYOUTS)}")
        self.verify_kind()

    def verify_kind(self) -> None:
        """The checks of one kind of kernel."""


@irdl_op_definition
class PointwiseOp(KernelOp):
    """Each output element from input elements at affine indices: ``indexing_maps`` gives one
    map per tensor input, then one per result, from the iteration space (the first result's
    indices); absent where an input is not read affinely (a concatenation's pieces)."""

    name = "kernel.pointwise"
    KIND: ClassVar[str] = "pointwise"
    indexing_maps = opt_prop_def(ArrayAttr[AffineMapAttr])
    #: the body only re-indexes its inputs (a view): each reader recomputes it
    view = opt_prop_def(UnitAttr)
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        if self.indexing_maps is None:
            return
        tensors = [v for v in [*self.inputs, *self.outputs] if isinstance(v.type, TensorType)]
        maps = self.indexing_maps.data
        if len(maps) != len(tensors):
            raise VerifyException(f"kernel.pointwise: {len(maps)} indexing maps for {len(tensors)} tensor "
                                  "inputs and results")
        out = _shape(self.outputs[0].type) if self.outputs else None
        if out is None:
            raise VerifyException("kernel.pointwise: indexing maps need a tensor first result")
        for i, (amap, value) in enumerate(zip(maps, tensors, strict=True)):
            shape = _shape(value.type)
            assert shape is not None
            if amap.data.num_dims != len(out) or len(amap.data.results) != len(shape):
                raise VerifyException(
                    f"kernel.pointwise: indexing map {i} is {amap.data}, which maps {amap.data.num_dims} "
                    f"loops to {len(amap.data.results)} indices; operand {i} needs {len(out)} to {len(shape)}")


@irdl_op_definition
class ReductionOp(KernelOp):
    """Each output element combines ``window`` input elements (a sum, a max, a norm's mean...)."""

    name = "kernel.reduction"
    KIND: ClassVar[str] = "reduction"
    window = prop_def(IntegerAttr)
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        if self.window.value.data < 1:
            raise VerifyException(f"kernel.reduction: window must be positive, got {self.window.value.data}")


@irdl_op_definition
class ScanOp(KernelOp):
    """A running combination along ``dim`` of its result (cumsum, cumprod, logcumsumexp).  The
    dimension is the result's: once ``kernel-fuse`` has merged a producer in (a broadcast, an
    ``expand``), the inputs may have another rank."""

    name = "kernel.scan"
    KIND: ClassVar[str] = "scan"
    dim = prop_def(IntegerAttr)
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        shape = _shape(self.outputs[0].type) if self.outputs else None
        dim = self.dim.value.data
        if shape is None or not 0 <= dim < max(len(shape), 1):
            raise VerifyException(f"kernel.scan: dim {dim} is not a dimension of the result")


@irdl_op_definition
class GatherOp(KernelOp):
    """Reads input elements at indices held in an integer tensor, each index checked against
    the bounds at run time (``index``, ``index_select``, ``embedding``, ``gather``).  The
    indices are an input, or computed in the body (``kernel-fuse`` merged their producer in:
    ``embedding(table, arange(seq))`` where ``seq`` is a run-time size)."""

    name = "kernel.gather"
    KIND: ClassVar[str] = "gather"
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        from xdsl.dialects.builtin import IntegerType

        def integers(v: SSAValue) -> bool:
            return isinstance(v.type, TensorType) and isinstance(v.type.get_element_type(), IntegerType)

        if not any(integers(v) for v in self.inputs) and not any(
                integers(r) for op in self.computed_ops() for r in op.results):
            raise VerifyException("kernel.gather: no input holds integer indices, and the body computes none")


@irdl_op_definition
class GemmOp(KernelOp):
    """A (batched) matrix multiplication by the GEMM library kernel, with its epilogue."""

    name = "kernel.gemm"
    KIND: ClassVar[str] = "gemm"
    spec = prop_def(GemmSpecAttr)
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        out = _shape(self.outputs[0].type) if self.outputs else None
        if out is None:
            raise VerifyException("kernel.gemm: the first result must be a tensor")
        s = self.spec
        if math.prod(out) != s.batch.data * s.m.data * s.n.data:
            raise VerifyException(f"kernel.gemm: the result {list(out)} does not hold batch x m x n = "
                                  f"{s.batch.data} x {s.m.data} x {s.n.data} elements")


@irdl_op_definition
class ConvOp(KernelOp):
    """A 2-d convolution by the convolution library kernel (direct or as an implicit GEMM)."""

    name = "kernel.conv"
    KIND: ClassVar[str] = "conv"
    spec = prop_def(ConvSpecAttr)
    traits = traits_def(IsolatedFromAbove())

    def verify_kind(self) -> None:
        out = _shape(self.outputs[0].type) if self.outputs else None
        s = self.spec
        want = (s.n.data, s.o.data, s.oh.data, s.ow.data)
        if out != want:
            raise VerifyException(f"kernel.conv: the result is {list(out or ())}, the spec gives {list(want)}")
        first = _shape(self.inputs[0].type) if self.inputs else None
        if first != (s.n.data, s.c.data, s.h.data, s.w.data):
            raise VerifyException(f"kernel.conv: the input is {list(first or ())}, the spec gives "
                                  f"{[s.n.data, s.c.data, s.h.data, s.w.data]}")


@irdl_op_definition
class CompositeOp(KernelOp):
    """A native kernel of several phases that is not split further at this level (a norm,
    softmax, pooling, sorting, attention, a recurrent cell); ``family`` names it and
    ``window`` (when it combines elements) how many each output element reads."""

    name = "kernel.composite"
    KIND: ClassVar[str] = "composite"
    family = prop_def(StringAttr)
    window = opt_prop_def(IntegerAttr)
    traits = traits_def(IsolatedFromAbove())


@irdl_op_definition
class FallbackOp(KernelOp):
    """Runs its body through torch at run time; ``reason`` says why it has no native kernel."""

    name = "kernel.fallback"
    KIND: ClassVar[str] = "fallback"
    reason = prop_def(StringAttr)
    traits = traits_def(IsolatedFromAbove())


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The results of a kernel's body."""

    name = "kernel.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(PointwiseOp, ReductionOp, ScanOp, GatherOp, GemmOp, ConvOp,
                                                  CompositeOp, FallbackOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]) -> None:
        super().__init__(operands=[list(values)])


KERNEL_OPS: tuple[type[KernelOp], ...] = (PointwiseOp, ReductionOp, ScanOp, GatherOp, GemmOp, ConvOp, CompositeOp,
                                          FallbackOp)
