"""``prepack-weights{isa=auto|avx512|avx2|scalar int8=true|false}``: constant weights of fused linear/matmul/conv
ops -> the blocked layouts the CPU kernels consume (``dialects/fused/pack.py``).

* ``fused.linear`` weight ``W[N, K]`` and ``fused.matmul`` constant right operand ``B[K, N]``
  -> GEMM B panels ``KN{nr}n`` (``[ceil(N/nr), K, nr]``), ``nr`` a multiple of the vector
  width of ``isa`` (32 on AVX-512, 16 on AVX2);
* ``fused.conv2d`` weight ``[O, I/g, kh, kw]`` -> per-group panels ``KN{nr}n`` over
  ``K = kh*kw*I/g`` (implicit GEMM on NHWC activations).  Depthwise convs keep their weights.

* with ``int8`` (by default: when the ISA is avx512 and the host has AVX512-VNNI), a ``fused.linear``
  of a PT2E-quantized uint8 input (the ops ``decompose-quantize`` makes of a pair, read back by
  ``decompose_quantize.dequantized_parameters``) whose
  weight is an int8 tensor times its row scales (``ziggurat.row_scales``) -> ``KN32n4k``, the
  int8 weight in VNNI-4 panels behind its epilogue table (``dialects/fused/pack_int8.py``),
  the input's scale and zero point in ``ziggurat.input_quantization``: the backend runs it on
  the ``vpdpbusd`` kernel (``kernels/gemm_int8.py``); a ``fused.conv2d`` of one group of such
  an input and weight -> ``KN32n4k`` over ``W[O, kh*kw*I]``, the same GEMM over the output
  pixels, channels-last (a KxK one on the implicit im2col of the input).

The layout is visible in the IR (``weight_layout``, ``weight_shape``); the pass records the
bytes it packed and the extra bytes the zero padding costs.  A pass of the CPU backend (the
panel width is its microkernel's): the backend runs it after the target-independent
``graph-opt``.  Prepacking trades memory for speed: ``ziggurat.compile(..., prepack=False)``
leaves this pass out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FloatAttr, IntegerAttr, ModuleOp, StringAttr, f64, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.backends.cpu.isa import Isa, pass_isa
from ziggurat.backends.cpu.kernels.tiles import choose_nr
from ziggurat.dialects.fused import INPUT_QUANTIZATION_ATTR, Conv2dOp, FusedOp, LinearOp, MatmulOp, is_depthwise_conv, pack
from ziggurat.ir.rewriting import StaticShapesOnly, literal_value, new_literal
from ziggurat.ir.statistics import record

NAME = "prepack-weights"


def _packed(op: FusedOp, weight: torch.Tensor, nr: int) -> torch.Tensor | None:
    if weight.dtype != torch.float32:
        return None  # the kernels read float32 panels; a bf16/fp16 op runs in torch, on the plain weight
    if isinstance(op, LinearOp) and weight.dim() == 2:
        return pack.pack_linear_weight(weight, nr)
    if isinstance(op, MatmulOp) and weight.dim() == 2 and len(op.a.type.get_shape()) >= 2:  # pyright: ignore
        return pack.pack_gemm_b(weight, nr)
    if isinstance(op, Conv2dOp):
        groups = int(op.groups.value.data)
        if is_depthwise_conv(op):
            return None
        return pack.pack_conv_weight_gemm(weight, nr, groups)
    return None


@dataclass
class PackWeight(RewritePattern):
    """Packs each constant weight once per layout: the packed literal follows the weight's
    own literal, and every op packing that weight the same way reads it (the step GEMMs of an
    unrolled LSTM share one packed ``w_hh``)."""

    nr: int
    packed: dict[tuple[SSAValue, str, int], SSAValue] = field(default_factory=dict)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FusedOp, rewriter: PatternRewriter) -> None:
        if op.weight_layout is not None:
            return
        weight_value = op.b if isinstance(op, MatmulOp) else op.weight  # pyright: ignore
        weight = literal_value(weight_value)
        if weight is None:
            return
        key = (weight_value, type(op).__name__, int(op.groups.value.data) if isinstance(op, Conv2dOp) else 1)
        packed_value = self.packed.get(key)
        if packed_value is None:
            packed = _packed(op, weight, self.nr)
            if packed is None:
                return
            literal = new_literal(packed, (weight_value.name_hint or "weight") + f"_KN{self.nr}n", given=True)
            rewriter.insert(literal, InsertPoint.after(weight_value.owner))  # pyright: ignore
            packed_value = self.packed[key] = literal.result
            record(NAME, "weights packed")
            record(NAME, "bytes packed", packed.numel() * packed.element_size())
            record(NAME, "extra bytes (padding)", (packed.numel() - weight.numel()) * packed.element_size())
        else:
            record(NAME, "packed weights shared")
        index = 1  # the weight / b operand
        op.operands[index] = packed_value
        op.properties["weight_layout"] = StringAttr(f"KN{self.nr}n")
        op.properties["weight_shape"] = DenseArrayBase.from_list(i64, list(weight.shape))  # pyright: ignore
        rewriter.notify_op_modified(op)


def int8_weight(weight: torch.Tensor, scales: torch.Tensor) -> torch.Tensor | None:
    """The int8 ``W`` with ``W * scales[:, None] == weight`` in float32, or None."""
    from ziggurat.passes.decompose_quantize import int8_rows

    return int8_rows(weight, scales) if weight.dim() == 2 else None


def _pack_int8(op: LinearOp | Conv2dOp, rewriter: PatternRewriter) -> None:
    """``op``'s weight packed as ``KN32n4k`` when its input is uint8-quantized and its weight an
    int8 tensor times its row scales (a convolution's as ``[O, kh*kw*I]``); else unchanged."""
    from ziggurat.backends.cpu.kernels.gemm_int8 import MAX_K
    from ziggurat.dialects.fused.pack_int8 import LAYOUT, conv_rows, pack_quantized_linear
    from ziggurat.passes.decompose_quantize import dequantized_parameters, row_scales

    quantization = dequantized_parameters(op.input)
    scales = row_scales(op.weight)
    weight = literal_value(op.weight)
    if op.weight_layout is not None or quantization is None or scales is None or weight is None:
        return
    if weight.dim() != (4 if isinstance(op, Conv2dOp) else 2):
        return
    a_scale, zero_point, low, high = quantization
    if not (0 <= low <= zero_point <= high <= 255) or weight[0].numel() > MAX_K:
        return
    w8 = int8_weight(conv_rows(weight) if isinstance(op, Conv2dOp) else weight, scales)
    if w8 is None:
        return
    try:
        packed = pack_quantized_linear(w8, scales, a_scale, zero_point)
    except ValueError:  # the zero point's correction would overflow int32
        return
    literal = new_literal(packed, (op.weight.name_hint or "weight") + f"_{LAYOUT}")
    rewriter.insert(literal, InsertPoint.after(op.weight.owner))  # pyright: ignore
    op.operands[1] = literal.result
    op.properties["weight_layout"] = StringAttr(LAYOUT)
    op.properties["weight_shape"] = DenseArrayBase.from_list(i64, list(weight.shape))  # pyright: ignore
    op.attributes[INPUT_QUANTIZATION_ATTR] = ArrayAttr([FloatAttr(a_scale, f64), IntegerAttr(zero_point, i64)])
    rewriter.notify_op_modified(op)
    record(NAME, "int8 weights packed")
    record(NAME, "bytes packed", packed.numel())


@dataclass
class PackInt8Linear(RewritePattern):
    """A ``fused.linear`` of a uint8-quantized input and an int8-times-scales weight ->
    ``KN32n4k`` (see the module's docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LinearOp, rewriter: PatternRewriter) -> None:
        _pack_int8(op, rewriter)


@dataclass
class PackInt8Conv(RewritePattern):
    """A ``fused.conv2d`` of one group (any kernel size, stride, padding, dilation) of a
    uint8-quantized input and an int8-times-scales weight -> ``KN32n4k`` over
    ``W[O, kh*kw*I]``: the int8 GEMM over the output pixels, channels-last, its A the implicit
    im2col of the input (``lowering/gemm_int8.py``)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2dOp, rewriter: PatternRewriter) -> None:
        if int(op.groups.value.data) == 1:
            _pack_int8(op, rewriter)


def _int8_enabled(option: bool | None, isa: Isa) -> bool:
    if option is None:  # auto
        from ziggurat.backends.cpu.kernels.gemm_int8 import int8_kernel_available

        return int8_kernel_available(isa)
    return option


@dataclass(frozen=True)
class PrepackWeightsPass(ModulePass):
    name = NAME

    isa: str = "auto"
    #: None: when the ISA is avx512 and the host has AVX512-VNNI
    int8: bool | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        isa = pass_isa(self.isa, NAME)
        nr = choose_nr(isa)
        patterns: list[RewritePattern] = [PackInt8Linear(), PackInt8Conv()] if _int8_enabled(self.int8, isa) else []
        patterns.append(PackWeight(nr))
        PatternRewriteWalker(StaticShapesOnly(GreedyRewritePatternApplier(patterns))).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
        for conv in op.walk():
            if isinstance(conv, Conv2dOp) and conv.weight_layout is None and is_depthwise_conv(conv):
                record(NAME, "depthwise convs left unpacked")
