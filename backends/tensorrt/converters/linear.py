"""Matrix products -> IMatrixMultiplyLayer / IEinsumLayer (+ bias and scaling elementwise layers)."""

from __future__ import annotations

import re

from xdsl.ir import SSAValue

from ziggurat.backends.tensorrt.conversion_context import ConversionContext
from ziggurat.backends.tensorrt.converter_args import ConverterArgs
from ziggurat.backends.tensorrt.converters.common import (
    FLOAT_DTYPES,
    cast,
    elementwise,
    reshape,
)
from ziggurat.backends.tensorrt.registry import converter
from ziggurat.dialects.trt import EinsumOp, ElementWiseOperation, MatrixMultiplyOp, MatrixOperation

E = ElementWiseOperation
M = MatrixOperation


def _float_operands(*names: str):  # noqa: ANN202
    def check(args: ConverterArgs) -> str | None:
        for name in names:
            if args.dtype(name) not in FLOAT_DTYPES:
                return f"IMatrixMultiplyLayer takes float tensors, '{name}' is {args.dtype(name)}"
        return None

    return check


def matmul(
    ctx: ConversionContext, a: SSAValue, b: SSAValue, *, transpose_b: bool = False, suffix: str = ""
) -> SSAValue:
    """torch.matmul semantics (1-D operands are vectors, batch dims broadcast after rank alignment)."""
    a, b = ctx.tensor(a), ctx.tensor(b)
    dtype = ctx.result_dtype() if ctx.result_dtype() in FLOAT_DTYPES else ctx.dtype(a)
    a, b = cast(ctx, a, dtype, f"{suffix} a cast".strip()), cast(ctx, b, dtype, f"{suffix} b cast".strip())
    ra, rb = ctx.rank(a), ctx.rank(b)
    op0 = M.kVECTOR if ra == 1 else M.kNONE
    op1 = M.kVECTOR if rb == 1 else (M.kTRANSPOSE if transpose_b else M.kNONE)
    batch_a = ra - (1 if ra == 1 else 2)
    batch_b = rb - (1 if rb == 1 else 2)
    if batch_a < batch_b:
        a = reshape(ctx, a, [1] * (batch_b - batch_a) + list(ctx.shape(a, dynamic=True)), f"{suffix} a batch".strip())
    elif batch_b < batch_a:
        b = reshape(ctx, b, [1] * (batch_a - batch_b) + list(ctx.shape(b, dynamic=True)), f"{suffix} b batch".strip())
    return ctx.add(MatrixMultiplyOp(a, op0, b, op1, name=ctx.name(suffix))).output


@converter(
    "aten::matmul(Tensor self, Tensor other) -> Tensor",
    "aten::mm(Tensor self, Tensor mat2) -> Tensor",
    "aten::bmm(Tensor self, Tensor mat2) -> Tensor",
    "aten::mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "aten::bmm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    validator=_float_operands("self"),
)
def mm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    other = args.tensor("other" if args.has("other") else "mat2")
    y = matmul(ctx, args.tensor("self"), other)
    return reshape(ctx, y, ctx.result_shape(), "result shape")


@converter("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", validator=_float_operands("input"))
def linear(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    """input @ weight^T (+ bias)."""
    y = matmul(ctx, args.tensor("input"), args.tensor("weight"), transpose_b=ctx.rank(args.tensor("weight")) == 2,
               suffix="" if args.is_none("bias") else "matmul")
    y = reshape(ctx, y, ctx.result_shape(), "result shape")
    if args.is_none("bias"):
        return y
    return elementwise(ctx, y, args.tensor("bias"), E.kSUM, dtype=ctx.result_dtype())


def _scaled_sum(ctx: ConversionContext, args: ConverterArgs, product: SSAValue) -> SSAValue:
    """beta * self + alpha * product (terms with factor 0 / 1 simplified as torch does)."""
    dtype = ctx.result_dtype()
    alpha, beta = args.get_scalar("alpha"), args.get_scalar("beta")
    if alpha != 1:
        product = elementwise(ctx, product, alpha, E.kPROD, dtype=dtype, suffix="alpha")
    if beta == 0:
        return product
    base: SSAValue = ctx.tensor(args.tensor("self"))
    if beta != 1:
        base = elementwise(ctx, base, beta, E.kPROD, dtype=dtype, suffix="beta")
    return elementwise(ctx, base, product, E.kSUM, dtype=dtype)


@converter(
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::addmm.dtype(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    validator=_float_operands("mat1", "mat2"),
)
def addmm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _scaled_sum(ctx, args, matmul(ctx, args.tensor("mat1"), args.tensor("mat2"), suffix="matmul"))


@converter(
    "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::baddbmm.dtype(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    validator=_float_operands("batch1", "batch2"),
)
def baddbmm(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    return _scaled_sum(ctx, args, matmul(ctx, args.tensor("batch1"), args.tensor("batch2"), suffix="bmm"))


def _einsum_ok(args: ConverterArgs) -> str | None:
    equation = args.get_str("equation")
    tensors = args.tensors("tensors")
    if "." in equation:
        return "IEinsumLayer does not take ellipses"
    if len(tensors) not in (1, 2):
        return f"IEinsumLayer takes 1 or 2 operands, got {len(tensors)}"
    for term in equation.replace(" ", "").split("->")[0].split(","):
        if len(set(term)) != len(term):
            return f"IEinsumLayer does not take repeated subscripts ({term!r})"
    from ziggurat.ir.types import dtype_of

    if any(dtype_of(t.type) not in FLOAT_DTYPES for t in tensors):
        return "IEinsumLayer takes float tensors"
    return None


@converter("aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", validator=_einsum_ok)
def einsum(ctx: ConversionContext, args: ConverterArgs) -> SSAValue:
    equation = args.get_str("equation").replace(" ", "")
    letters = sorted(set(re.findall(r"[A-Za-z]", equation)))
    if len(letters) > 26:
        raise ctx.error("einsum with more than 26 subscripts")
    mapping = {ch: chr(ord("a") + i) for i, ch in enumerate(letters)}
    # Relabel to lower case in first-seen order (TensorRT subscripts are a-z); the implicit output
    # order (sorted subscripts) must survive the relabelling, so keep the sorted order.
    equation = "".join(mapping.get(ch, ch) for ch in equation)
    dtype = ctx.result_dtype()
    operands = [cast(ctx, ctx.tensor(t), dtype, f"operand {i} cast") for i, t in enumerate(args.tensors("tensors"))]
    return ctx.add(EinsumOp(operands, equation, name=ctx.name())).output
