"""``fuse-requantize``: a decomposed quantize -> dequantize pair after an int8 GEMM becomes the
GEMM's last post-op, ``#fused.requantize``.

PT2E writes a ``quantize_per_tensor -> dequantize_per_tensor`` pair after every quantized
convolution and linear; ``decompose-quantize`` turns it into eight float32 element-wise ops,
which ran as their own kernel, reading and writing the GEMM's float32 output once more.
On a ``fused.linear``/``fused.conv2d`` that ``prepack-weights`` packed for the int8 kernel
(``KN32n4k``), this pass folds those ops into the op::

    %y = fused.conv2d %x, %w ... {post_ops = [#fused.unary<relu6>]}
    %s = torch.aten.mul.Scalar %y {other = 1/scale} ... %z = torch.aten.mul.Scalar %t {other = scale}
      ->
    %z = fused.conv2d %x, %w ... {post_ops = [#fused.unary<relu6>, #fused.requantize<scale, zp, lo, hi>]}

so the kernel's epilogue computes them (``Int8GemmSpec.requantize``), each the float32
operation eager's pair computes: the results are bit for bit the unfused ones.  It rewrites only
where the pair's ops are all the op's result feeds and each of them feeds only the next one
(the pair's value itself may have any users), with the multiplier ``1.0 / scale`` that
``decompose-quantize`` writes.  A consumer's int8 packing reads the pair's parameters back from
the post-op (``decompose_quantize.dequantized_parameters``).

Then, where every reader of such an op's result is another int8 op, as its ``input`` (whose
``ziggurat.input_quantization`` is the post-op's scale and zero point) or as the ``other`` of
its binary post-op (never as a weight or a bias, which the kernels read as floats), the value
is stored as its integers: the post-op becomes
``#fused.quantize`` (the result ``ui8``), the readers take the ``ui8`` tensor (an ``other``
with ``ziggurat.other_quantization = [scale, zero_point]``), and the kernels read a byte per
element where they read four (the first phase copies the bytes instead of requantizing floats;
the epilogue dequantizes the residual as eager's ``dequantize_per_tensor`` does).  A pair left
as ops (after any other op: the model's input, a layer norm) whose readers are all such ops
stops at its integers the same way: ``where(...)`` (``q``) cast to ``ui8`` (exact: an integer
of ``[0, 255]``) instead of ``(q - zero_point) * scale``.  The values the readers compute on
are the float32 ones they read before, bit for bit.

With ``isa`` one that has the native depthwise kernel (avx512, avx2), a depthwise convolution of
a float32 weight of static sizes (``conv_native.native_depthwise``) is such a producer and
reader too (its input only): its kernel dequantizes a ``ui8`` input in registers and quantizes
its output in its epilogue, its float32 arithmetic unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, ModuleOp, TensorType, UnitAttr, f64, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.dialects.fused import (
    INPUT_QUANTIZATION_ATTR,
    OTHER_QUANTIZATION_ATTR,
    Conv2dOp,
    LinearOp,
    QuantizePostOpAttr,
    RequantizePostOpAttr,
    quantization_of,
)
from ziggurat.backends.cpu.lowering.conv_native import native_depthwise
from ziggurat.backends.cpu.lowering.driver import QUANTIZED_INTEGERS_ATTR
from ziggurat.dialects.fused.layouts import INT8_LINEAR
from ziggurat.dialects.torch.aten_ops import AtenMulScalarOp, AtenToDtypeOp
from ziggurat.ir.rewriting import involves_dynamic_shape
from ziggurat.ir.statistics import record
from ziggurat.ir.types import ui8
from ziggurat.passes.decompose_quantize import DecomposedPair, decomposed_pair

NAME = "fuse-requantize"


def _private_chain(pair: DecomposedPair) -> bool:
    """Whether the producer's result and every intermediate value feed only the pair's ops."""
    inside: set[Operation] = set(pair.ops)
    if any(use.operation not in inside for use in pair.x.uses):
        return False
    return all(use.operation in inside for op in pair.ops[:-1] for result in op.results for use in result.uses)


@dataclass
class FuseRequantize(RewritePattern):
    """The pair ending at this ``mul.Scalar`` -> ``#fused.requantize`` on its int8 (or native
    depthwise) producer."""

    depthwise: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenMulScalarOp, rewriter: PatternRewriter) -> None:
        pair = decomposed_pair(op.results[0])
        if pair is None:
            return
        producer = pair.x.owner
        if not isinstance(producer, Operation) or not _quantizing(producer, self.depthwise):
            return
        assert isinstance(producer, LinearOp | Conv2dOp)
        if producer.requantize() is not None:
            return
        if pair.multiplier != 1.0 / pair.scale or producer.results[0].type != op.results[0].type:
            return
        if not _private_chain(pair):
            record(NAME, "pairs left: their values have other users")
            return
        post = RequantizePostOpAttr(pair.scale, pair.zero_point, pair.quant_min, pair.quant_max)
        producer.properties["post_ops"] = ArrayAttr([*producer.post_ops.data, post])
        rewriter.notify_op_modified(producer)
        rewriter.replace_all_uses_with(op.results[0], producer.results[0])
        for dead in reversed(pair.ops):
            rewriter.erase(dead)
        record(NAME, "pairs fused into int8 GEMMs" if _int8(producer) else "pairs fused into depthwise convolutions")


def _int8(op: Operation) -> bool:
    return isinstance(op, LinearOp | Conv2dOp) and op.weight_layout is not None and op.weight_layout.data == INT8_LINEAR


def _quantizing(op: Operation, depthwise: bool) -> bool:
    """An op whose kernel quantizes its output and reads a uint8 input: an int8 GEMM, or (on an ISA
    with the native depthwise kernel) a depthwise convolution of a float32 weight of static sizes
    (a range build lowers static specializations; the kernel then takes their batch at run time)."""
    return _int8(op) or (depthwise and native_depthwise(op) and not involves_dynamic_shape(op))


def _quantization(scale: float, zero_point: int) -> ArrayAttr[FloatAttr | IntegerAttr]:
    return ArrayAttr([FloatAttr(scale, f64), IntegerAttr(zero_point, i64)])


def _reads_bytes(reader: Operation, value: SSAValue, scale: float, zero_point: int, depthwise: bool) -> bool:
    """Whether ``reader`` can take ``value`` as its uint8 integers: an int8 op reading it as its
    input (which it dequantizes with ``(scale, zero_point)``) and/or as its binary post-op's
    residual, or a native depthwise convolution reading it as its input; never as a weight or a
    bias, which the kernels read as floats."""
    if not isinstance(reader, LinearOp | Conv2dOp) or not _quantizing(reader, depthwise):
        return False
    if value is reader.weight or value is reader.bias:
        return False
    if not _int8(reader):  # a depthwise convolution: its kernel dequantizes the input only
        return reader.input is value and reader.other is not value
    if reader.input is value and quantization_of(reader, INPUT_QUANTIZATION_ATTR) != (scale, zero_point):
        return False
    return reader.other is not value or reader.binary() is not None


def _readers_take_bytes_of(value: SSAValue, scale: float, zero_point: int, depthwise: bool) -> bool:
    """Whether ``value`` has readers and every one can take its uint8 integers (:func:`_reads_bytes`)."""
    return bool(value.uses) and all(_reads_bytes(use.operation, value, scale, zero_point, depthwise)
                                    for use in value.uses)


def _mark_readers(value: SSAValue, scale: float, zero_point: int) -> None:
    """The quantization attributes of the readers of ``value`` once it holds its integers."""
    for use in list(value.uses):
        reader = use.operation
        if isinstance(reader, LinearOp | Conv2dOp) and reader.other is value:
            reader.attributes[OTHER_QUANTIZATION_ATTR] = _quantization(scale, zero_point)
        if isinstance(reader, LinearOp | Conv2dOp) and reader.input is value:
            reader.attributes[INPUT_QUANTIZATION_ATTR] = _quantization(scale, zero_point)


def pairs_as_bytes(module: ModuleOp, depthwise: bool) -> None:
    """A decomposed pair whose value only int8 ops read: its ``q`` cast to ``ui8`` instead."""
    for op in list(module.walk()):
        if not isinstance(op, AtenMulScalarOp) or op.parent is None:
            continue
        pair = decomposed_pair(op.results[0])
        if pair is None or not 0 <= pair.quant_min <= pair.quant_max <= 255:
            continue
        value, where, sub = op.results[0], pair.ops[5], pair.ops[6]
        if where.results[0].uses.get_length() != 1 or sub.results[0].uses.get_length() != 1:
            continue
        if not _readers_take_bytes_of(value, pair.scale, pair.zero_point, depthwise):
            continue
        ty = value.type
        assert isinstance(ty, TensorType)
        cast = AtenToDtypeOp.from_arguments(
            {"self": where.results[0], "dtype": torch.uint8, "non_blocking": False, "copy": False, "memory_format": None},
            [TensorType(ui8, ty.get_shape())])  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        cast.location = op.location
        cast.attributes[QUANTIZED_INTEGERS_ATTR] = UnitAttr()
        Rewriter.insert_op(cast, InsertPoint.after(where))
        cast.results[0].name_hint = value.name_hint
        _mark_readers(value, pair.scale, pair.zero_point)
        value.replace_all_uses_with(cast.results[0])
        Rewriter.erase_op(op)
        Rewriter.erase_op(sub)
        record(NAME, "pairs stored as uint8")


def store_as_bytes(module: ModuleOp, depthwise: bool) -> None:
    """``#fused.requantize`` -> ``#fused.quantize`` where every reader takes the ``ui8`` tensor."""
    for op in list(module.walk()):
        if not _quantizing(op, depthwise):
            continue
        assert isinstance(op, LinearOp | Conv2dOp)
        post = op.requantize()
        if not isinstance(post, RequantizePostOpAttr):
            continue
        scale, zero_point, low, high = post.values
        result = op.results[0]
        if not 0 <= low <= high <= 255 or not _readers_take_bytes_of(result, scale, zero_point, depthwise):
            continue
        _mark_readers(result, scale, zero_point)
        ty = result.type
        assert isinstance(ty, TensorType)
        properties = dict(op.properties)
        properties["post_ops"] = ArrayAttr([*op.post_ops.data[:-1], QuantizePostOpAttr(scale, zero_point, low, high)])
        stored = type(op).create(operands=list(op.operands), properties=properties, attributes=dict(op.attributes),
                                 result_types=[TensorType(ui8, ty.get_shape())])  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        stored.location = op.location
        Rewriter.replace_op(op, stored)
        stored.results[0].name_hint = result.name_hint
        record(NAME, "results stored as uint8")


@dataclass(frozen=True)
class FuseRequantizePass(ModulePass):
    name = NAME

    #: the ISA the CPU backend builds for: depthwise convolutions take quantized operands where
    #: it has the native depthwise kernel (avx512, avx2)
    isa: str = "auto"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.backends.cpu.isa import pass_isa
        from ziggurat.backends.cpu.kernels.depthwise import depthwise_supported

        depthwise = depthwise_supported(pass_isa(self.isa, NAME))
        PatternRewriteWalker(FuseRequantize(depthwise), apply_recursively=False).rewrite_module(op)
        store_as_bytes(op, depthwise)
        pairs_as_bytes(op, depthwise)
