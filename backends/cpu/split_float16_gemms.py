"""``split-float16-gemms{isa=... amx=auto|true|false}``: a float16 GEMM on the bf16 tile unit, as
a bf16 GEMM four times as deep whose products are exact.

A float16 value is the exact sum of two bf16 values: ``hi``, its rounding to bf16 (8 of its 11
significand bits), and ``lo = x - hi`` (the other 3; no float16 value, subnormals included, is
out of bf16's range, and ``lo`` is never a bf16 subnormal: both are multiples of 2^-24).  So
``a * b = a_hi*b_hi + a_hi*b_lo + a_lo*b_hi + a_lo*b_lo``, each product exact in float32, and
a float16 GEMM over K is a bf16 GEMM over K' = 4K of::

    A' row:    [a_hi, a_hi, a_lo, a_lo]   (four blocks of K elements)
    B' column: [b_hi, b_lo, b_hi, b_lo]

summed in float32, as eager's float16 GEMM and the float32 kernels sum the exact products (in
another order: a float32 ulp apart, a float16 one where that crosses a rounding boundary).  An
infinite or NaN value appears once, paired with the other side's whole value:
``[a, 0, 0, 0]`` (and ``[b, 0, 0, 0]`` in B'), so ``inf * b`` is not joined by ``inf * 0``.
Blocks rather than each k's four parts side by side: A' is then a concatenation, four
vector copies, where interleaving the parts made a strided kernel 5x the GEMM's time.

``widen-half-floats`` leaves a float16 linear as a float32 one of a cast input and a float32
weight literal; this pass matches that (a float32 ``fused.linear``, or a ``fused.matmul`` with a
2-D literal right operand, whose left operand is a float16 -> float32 cast and whose weight's
values are all float16 values) and writes it as ``fused.matmul`` of bf16 operands with a
float32 result (``MatmulOp.bf16_products_in_float32``: the bf16 kernels store it unrounded),
the split of A as aten ops that fuse into one element-wise kernel, B' a bf16 literal made at
compile time, bias, residual and post-ops kept::

    %a = torch.aten._to_copy %x {dtype = f32} : (tensor<64x96xf16>) -> tensor<64x96xf32>
    %y = fused.linear %a, %w bias(%b : tensor<384xf32>) : (tensor<64x96xf32>, tensor<384x96xf32>) -> tensor<64x384xf32>
  ->
    ... %parts = torch.aten.cat [...] {dim = -1 : i64} : (...) -> tensor<64x384xbf16>
    %y = fused.matmul %parts, %w_split bias(%b : tensor<384xf32>) : (tensor<64x384xbf16>, tensor<384x384xbf16>) -> tensor<64x384xf32>

Only where it pays (``amx`` None): an ``avx512`` build on a host whose bf16 GEMM kernel is AMX
(AVX512-BF16's ``vdpbf16ps`` would do four times the float32 kernels' work at twice their
rate), and a GEMM of at least :data:`MIN_ROWS` rows, :data:`MIN_N` columns and K from
:data:`MIN_K` to :data:`MAX_K`.  Measured on the Emerald Rapids host, 1 thread, the two builds
interleaved in one process (float32 kernels -> split):

- One GEMM, its weights warm: 128x768x3072 1.45x, 128x768x2304 1.29x, 128x384x3072 1.45x,
  128x256x3072 1.30x, 128x1024x3072 1.11x, 512x768x3072 1.30x.  It lost where B is narrow (A'
  is written once and read by every panel of B', four times A's elements as bf16: 128x768x768
  0.90x, 3136x96x384 0.64x, 784x768x192 0.43x), where K' = 4K is short (3136x96x1536 0.93x)
  and with few rows (16x768x3072 0.70x: B' is twice the float32 weight's bytes).
- In a model, whose weights come cold from memory at each call, B' streams twice the bytes:
  BERT-base in float16 with 128 rows (batch 1) 0.98x, GPT-2 small (64 rows) 0.85x, BERT at
  batch 2 (256 rows) 0.99x, GPT-2 at batch 4 (256 rows) 1.02x; BERT at batch 4 (512 rows)
  629 -> 568 ms, 1.11x.  Hence :data:`MIN_ROWS`.

``amx`` True splits every GEMM the pattern takes, on any host (tests, FileCheck); False none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, ModuleOp, bf16, f32, f64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.backends.cpu.half_float_rewrites import cast_to, value_dtype
from ziggurat.backends.cpu.isa import Isa, pass_isa
from ziggurat.dialects.fused import LinearOp, MatmulOp
from ziggurat.dialects.torch.aten_ops import (
    Aten_ToCopy_Op,
    AtenCat_Op,
    AtenIsinf_Op,
    AtenMaskedFillScalarOp,
    AtenNanToNum_Op,
    AtenSubTensorOp,
)
from ziggurat.ir.rewriting import StaticShapesOnly, build_aten_inferred, literal_value, new_literal
from ziggurat.ir.statistics import record

NAME = "split-float16-gemms"

#: the shapes split where the pass chooses (the module's docstring has the measurements)
MIN_ROWS = 512
MIN_N = 1536
MIN_K = 256
MAX_K = 1024


def float16_exact(tensor: torch.Tensor) -> bool:
    """Whether every value of a float32 tensor is a float16 value (NaN included)."""
    if tensor.dtype != torch.float32:
        return False
    return bool(((tensor.half().float() == tensor) | tensor.isnan()).all())


def split_weight(b: torch.Tensor) -> torch.Tensor:
    """B' of a float16-exact ``B[K, N]``: ``[4K, N]`` bf16, the blocks ``b_hi, b_lo, b_hi, b_lo``
    of K rows each; an infinite or NaN value ``b, 0, 0, 0``."""
    hi = b.bfloat16()
    lo = torch.where(torch.isfinite(b), b - hi.float(), 0.0).bfloat16()
    return torch.cat([hi, lo, hi.masked_fill(~torch.isfinite(b), 0.0), lo]).contiguous()


def _float16_source(value: SSAValue) -> SSAValue | None:
    """The float16 tensor ``value`` is a float32 cast of."""
    owner = value.owner
    if isinstance(owner, Aten_ToCopy_Op) and value_dtype(value) == torch.float32 \
            and value_dtype(owner.operands[0]) == torch.float16:
        return owner.operands[0]
    return None


def split_parts(x: SSAValue) -> tuple[list[Operation], SSAValue]:
    """A' of the float16 ``x[..., K]``: ``[..., 4K]`` bf16, the blocks ``hi, hi, lo, lo`` of K
    elements each, an infinite value ``x, 0, 0, 0`` (and a NaN NaN, NaN, NaN, NaN).  Each block
    is its own chain of element-wise ops from ``x``, so that the concatenation and its four
    producers are one kernel (a value read twice would be a kernel of its own)."""
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def widened() -> SSAValue:
        return add(cast_to(x, torch.float32, f32))

    def hi() -> SSAValue:
        return add(cast_to(widened(), torch.bfloat16, bf16))

    def lo() -> SSAValue:  # x - hi: exact for a finite x, NaN for an infinite one, then 0
        wide = widened()
        rest = add(build_aten_inferred(AtenSubTensorOp, {"self": wide, "other": add(cast_to(hi(), torch.float32, f32)),
                                                         "alpha": 1}))
        return add(cast_to(add(build_aten_inferred(AtenNanToNum_Op, {"self": rest, "nan": 0.0})), torch.bfloat16, bf16))

    def hi_finite() -> SSAValue:
        infinite = add(build_aten_inferred(AtenIsinf_Op, {"self": widened()}))
        return add(build_aten_inferred(AtenMaskedFillScalarOp, {"self": hi(), "mask": infinite, "value": 0.0}))

    blocks = [hi(), hi_finite(), lo(), lo()]
    parts = add(build_aten_inferred(AtenCat_Op, {"tensors": blocks, "dim": -1}))
    parts.name_hint = (x.name_hint or "x") + "_split"
    return ops, parts


def pays_for(rows: int, k: int, n: int) -> bool:
    """Whether a ``rows x k x n`` float16 GEMM is faster split (the module's docstring)."""
    return rows >= MIN_ROWS and n >= MIN_N and MIN_K <= k <= MAX_K


@dataclass
class SplitFloat16Gemm(RewritePattern):
    """A float32 ``fused.linear`` or ``fused.matmul`` of a float16 cast and a float16-exact 2-D
    weight literal -> the bf16 ``fused.matmul`` of their splits (the module's docstring);
    with ``by_shape``, only the shapes :func:`pays_for`."""

    by_shape: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, LinearOp | MatmulOp) or op.weight_layout is not None or op.post_ops.data and op.requantize():
            return
        if value_dtype(op.results[0]) != torch.float32:
            return
        left, right = (op.input, op.weight) if isinstance(op, LinearOp) else (op.a, op.b)
        x = _float16_source(left)
        weight = literal_value(right)
        if x is None or weight is None or weight.dim() != 2 or not float16_exact(weight):
            return
        b = weight.t() if isinstance(op, LinearOp) else weight
        if isinstance(op, MatmulOp):
            if float(op.alpha.value.data) != 1.0 or (op.bias is not None and float(op.beta.value.data) != 1.0):
                return
            if left.type.get_shape()[-1] != b.shape[0]:  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
                return  # a vector operand (matmul's 1-d forms)
        shape = list(left.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        if len(shape) < 2 or (self.by_shape and not pays_for(math.prod(shape[:-1]), b.shape[0], b.shape[1])):
            return
        ops, parts = split_parts(x)
        packed = new_literal(split_weight(b), (right.name_hint or "w") + "_split")
        operands = [parts, packed.results[0], *([op.bias] if op.bias is not None else []),
                    *([op.other] if op.other is not None else [])]
        # linear's operands (input, weight, bias?, other?) are matmul's (a, b, bias?, other?)
        properties = dict(op.properties)
        if isinstance(op, LinearOp):
            properties.update(alpha=FloatAttr(1.0, f64), beta=FloatAttr(1.0, f64))
        product = MatmulOp.create(operands=operands, result_types=[op.results[0].type], properties=properties,
                                  attributes=dict(op.attributes))
        product.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, [*ops, packed, product], [product.results[0]])
        record(NAME, "float16 GEMMs split into bf16 products")


def split_pays(isa: Isa) -> bool:
    """Whether this host's bf16 GEMMs run on AMX, for an ``avx512`` build."""
    if isa is not Isa.AVX512:
        return False
    from ziggurat.backends.cpu.kernels import amx

    return amx.host_bf16_kernel() == "amx"


@dataclass(frozen=True)
class SplitFloat16GemmsPass(ModulePass):
    name = NAME

    isa: str = "auto"
    #: None: where :func:`split_pays`, the shapes :func:`pays_for`; True: every GEMM it can
    amx: bool | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        isa = pass_isa(self.isa, NAME)
        if not (split_pays(isa) if self.amx is None else self.amx):
            return
        pattern = SplitFloat16Gemm(by_shape=self.amx is None)
        PatternRewriteWalker(StaticShapesOnly(GreedyRewritePatternApplier([pattern]))).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
