"""``widen-half-floats``' first step: a 16-bit fused op bound for the float32 kernels gives
back the post-ops eager rounds between (``SplitHalfFloatEpilogue``).

A fused op of 16-bit tensors stands for eager's separate 16-bit ops: the GEMM or convolution
rounds its result to the 16-bit type, and so does each post-op.  The float32 kernels (float16
GEMMs and convolutions, bf16 grouped ones), and the bf16 kernel after an addend (``addmm``'s
``beta * input``), run the whole epilogue in float32 and round once,
which is not eager's result: a GELU after a float16 linear differed from eager on 23 % of its
values (up to 3 ulps), a residual add on 25 % (a sum that cancels: hundreds of ulps).

So such an op keeps only the post-ops that commute with rounding (relu, relu6, and clamps
whose bounds are values of the 16-bit type: rounding the clamp's result or its input gives
the same value), and the post-ops from the first other one on (a matmul's scale first, when it
has one) become the 16-bit aten ops they were, each widened after this with eager's roundings (``widen_half_floats.py``).  The
bf16 GEMM kernels round between the steps themselves (``Bf16GemmSpec.rounded_steps``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from xdsl.dialects.builtin import FloatAttr, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.backends.cpu.half_float_rewrites import NAME, Float32Builder, value_dtype
from ziggurat.backends.cpu.kernels.unary import commutes_with_rounding as activation_commutes
from ziggurat.dialects.fused import BinaryPostOpAttr, Conv2dOp, FusedOp, MatmulOp, UnaryPostOpAttr
from ziggurat.dialects.torch import AtenOp
from ziggurat.dialects.torch.aten_ops import (
    AtenAddTensorOp,
    AtenMulScalarOp,
    AtenClamp_Op,
    AtenGelu_Op,
    AtenHardtanh_Op,
    AtenLeakyRelu_Op,
    AtenSubTensorOp,
)
from ziggurat.ir.rewriting import build_aten_inferred
from ziggurat.ir.statistics import record
from ziggurat.passes.fuse_post_ops import ACTIVATIONS, rebuild

HALF_TYPES = (torch.float16, torch.bfloat16)


def rounds_once(op: FusedOp, bf16_kernels: bool) -> bool:
    """Whether this 16-bit fused op's kernel runs its post-ops on the float32 product and rounds
    once: the float32 kernels (every float16 op, bf16 grouped convolutions, and every bf16 op
    without ``bf16_kernels``: an AVX2 host, or AVX-512 without BF16), and a bf16 matmul whose
    bias is an addend (``addmm``/``baddbmm``'s ``beta * input``, part of the product)."""
    dtype = value_dtype(op.results[0])
    if dtype == torch.float16:
        return True
    if dtype != torch.bfloat16:
        return False
    if not bf16_kernels:
        return True
    if isinstance(op, Conv2dOp):
        return int(op.groups.value.data) != 1
    return isinstance(op, MatmulOp) and op.bias is not None and not _row_bias(op)


def _row_bias(op: MatmulOp) -> bool:
    """Whether the matmul's bias is one per column, added as the epilogue's bias (not an
    addend): ``lowering/fused_ops.py``'s condition."""
    if float(op.alpha.value.data) != 1.0 or float(op.beta.value.data) != 1.0 or op.bias is None:
        return False
    shape = [int(d) for d in op.bias.type.get_shape()]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType, reportUnknownArgumentType]
    n = int(op.results[0].type.get_shape()[-1])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    return math.prod(shape) == n and all(d == 1 for d in shape[:-1])


def commutes_with_rounding(post: Attribute, dtype: torch.dtype) -> bool:
    """Whether rounding to ``dtype`` before ``post`` gives what rounding after it gives
    (``kernels/unary.py``'s rule, on a post-op)."""
    return isinstance(post, UnaryPostOpAttr) and activation_commutes(
        post.kind.data, [float(v) for v in post.values], "bf16" if dtype == torch.bfloat16 else "f16")


#: The activation op of each parameterless unary post-op: ``fuse-post-ops``' table read
#: backwards, its out-of-place ops (``torch.aten.relu``, not ``torch.aten.relu_``).
_PARAMLESS: dict[str, type[AtenOp]] = {kind: cls for cls, kind in ACTIVATIONS.items() if not cls.name.endswith("_")}


def post_op_as_aten(post: Attribute, x: SSAValue, other: SSAValue | None) -> Operation:
    """The aten op a unary or binary post-op stands for, on ``x`` (and ``other``)."""
    if isinstance(post, BinaryPostOpAttr):
        cls = AtenAddTensorOp if post.kind.data == "add" else AtenSubTensorOp
        return build_aten_inferred(cls, {"self": x, "other": other, "alpha": post.alpha.value.data})
    assert isinstance(post, UnaryPostOpAttr)
    kind, p = post.kind.data, [float(v) for v in post.values]
    if kind in _PARAMLESS:
        return build_aten_inferred(_PARAMLESS[kind], {"self": x})
    match kind:
        case "gelu_erf" | "gelu_tanh":
            return build_aten_inferred(AtenGelu_Op, {"self": x, "approximate": "tanh" if kind == "gelu_tanh" else "none"})
        case "hardtanh":
            return build_aten_inferred(AtenHardtanh_Op, {"self": x, "min_val": p[0], "max_val": p[1]})
        case "leaky_relu":
            return build_aten_inferred(AtenLeakyRelu_Op, {"self": x, "negative_slope": p[0]})
        case "clamp":
            return build_aten_inferred(AtenClamp_Op, {"self": x, "min": None if p[0] == -math.inf else p[0],
                                                      "max": None if p[1] == math.inf else p[1]})
        case _:
            raise ValueError(f"unknown unary post-op {kind!r}")


def _scale(op: FusedOp) -> float | None:
    """A bias-free matmul's ``alpha`` other than 1 (``fuse-post-ops``' ``matmul * c``)."""
    if not isinstance(op, MatmulOp) or op.bias is not None:
        return None
    alpha = float(op.alpha.value.data)
    return None if alpha == 1.0 else alpha


@dataclass
class SplitHalfFloatEpilogue(RewritePattern):
    """A 16-bit fused op on the float32 kernels -> the op with the post-ops that commute with
    rounding, then the others as 16-bit aten ops (see the module docstring).  ``bf16_kernels``:
    whether bf16 GEMMs and convolutions run on bf16 kernels (which round between the steps) or
    are widened to the float32 ones (which round once)."""

    bf16_kernels: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FusedOp, rewriter: PatternRewriter) -> None:
        dtype = value_dtype(op.results[0])
        if dtype not in HALF_TYPES or not rounds_once(op, self.bf16_kernels):
            return
        posts: list[Attribute] = list(op.post_ops.data)
        if not all(isinstance(p, UnaryPostOpAttr | BinaryPostOpAttr) for p in posts):
            return  # a requantize post-op (float32 results only)
        # a matmul's scale (``matmul * c``: eager rounds the product, then its multiple)
        scale = _scale(op)
        keep = 0
        while scale is None and keep < len(posts) and commutes_with_rounding(posts[keep], dtype):
            keep += 1
        if scale is None and keep == len(posts):
            return
        other = getattr(op, "other", None)
        base = rebuild(op, posts[:keep], None, op.results[0].type)  # (a binary never commutes: not kept)
        base.results[0].name_hint = op.results[0].name_hint
        new_ops: list[Operation] = [base]
        x = base.results[0]
        if scale is not None:  # float32 times float32(c), rounded: eager's 16-bit mul by a number
            base.properties["alpha"] = FloatAttr(1.0, f64)
            wide = Float32Builder(dtype, op.results[0].type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
            wide.narrow(wide.aten(AtenMulScalarOp, {"self": wide.widen(x), "other": scale}))
            for step in wide.ops:
                step.location = op.location
            new_ops.extend(wide.ops)
            x = wide.ops[-1].results[0]
        for post in posts[keep:]:
            step = post_op_as_aten(post, x, other)
            step.location = op.location
            new_ops.append(step)
            x = step.results[0]
        rewriter.replace(op, new_ops, [x])
        record(NAME, "16-bit epilogues given back to eager's roundings")
