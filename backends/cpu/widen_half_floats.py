"""``widen-half-floats``: bf16 and float16 ops computed in float32, each result rounded once.

Eager's CPU kernels for these ops on bfloat16 and float16 tensors load the operands as float32,
compute in float32 and round the result once (``Vectorized<BFloat16>`` and
``Vectorized<Half>`` convert to float). The pass makes that explicit, so the native float32
kernels take them::

    %y = torch.aten.gelu %x : (tensor<8xbf16>) -> tensor<8xbf16>
  ->
    %0 = torch.aten._to_copy %x {dtype = f32, ...} : (tensor<8xbf16>) -> tensor<8xf32>
    %1 = torch.aten.gelu %0 : (tensor<8xf32>) -> tensor<8xf32>
    %y = torch.aten._to_copy %1 {dtype = bf16, ...} : (tensor<8xf32>) -> tensor<8xbf16>

The casts are native (``codegen/bf16.py``, ``codegen/f16.py``) and fuse with the ops around
them, so a chain of widened ops runs as one float32 loop nest that rounds after each op, as
eager does (a ``to_bf16`` read by a ``to_f32`` is the rounding). Only ops on the list, whose
operands are of one 16-bit float type, float32 or bool and whose one result is of that type
(bool for a comparison or predicate, int64 for an index or count, ``INDEX_RESULT``; float32
for a binary op that promotes a 16-bit operand, ``MIXED``, which only has that operand
widened), are widened; anything else stays as it is (and runs through torch). The float32
element functions may differ from eager's by an ulp of float32, which moves a result across a
rounding boundary rarely: one ulp of the 16-bit type, the precision's own tolerance
(``tests/cpu_backend/test_widen_half_floats.py``, ``test_widen_half_floats_exhaustive.py``,
``test_half_float_opinfo.py``).

``Bf16Products``: a float32 ``fused.matmul`` of two exact bf16 -> float32 casts (the float32
scores of a bf16 attention) becomes a ``fused.matmul`` of the bf16 operands with a float32
result, which the bf16 kernels compute.

float16 GEMMs and convolutions (``WidenGemm``, in ``widen_half_float_gemms.py`` with the bf16
ones' patterns) are widened whole: eager's float16
GEMM on a CPU without AVX512-FP16 converts its operands to float32, accumulates in float32
and rounds the result once, and the native float32 kernels do that 3-4x faster than eager's
(literal weights become float32 literals at compile time, exactly). bf16 GEMMs keep their
own kernels (AMX, AVX512-BF16) where the host has one for the ISA, and are widened too where
it has neither (an AVX2 host: option ``bf16_kernels``); a grouped bf16 convolution, and one the bf16 kernels do not
take (1-d, 3-d, transposed), is widened.

``log_softmax``, ``logsumexp``, ``xlogy``, ``logit`` and trunc division, whose eager 16-bit
kernels round inside, are written out as float32 ops with those roundings
(``widen_half_float_reductions.py``, ``widen_half_float_intermediates.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.backends.cpu.half_float_rewrites import NAME, cast_to, value_dtype, widen_whole
from ziggurat.backends.cpu.isa import pass_isa
from ziggurat.backends.cpu.kernels.amx import bf16_kernel_for
from ziggurat.backends.cpu.loopgen.types import HALF_FLOATS
from ziggurat.backends.cpu.widen_half_float_gemms import Bf16Products, WidenGemm, WidenGroupedConv
from ziggurat.backends.cpu.split_half_float_epilogues import SplitHalfFloatEpilogue
from ziggurat.backends.cpu.widen_half_float_intermediates import WidenLogit, WidenTruncDivision, WidenXlogy
from ziggurat.backends.cpu.widen_half_float_reductions import WidenLogSoftmax, WidenLogsumexp
from ziggurat.dialects.torch import AtenOp, TorchOp
from ziggurat.dialects.torch.aten_ops import (
    AtenHardshrink_Op,
    AtenMulTensorOp,
    AtenNanToNum_Op,
    AtenPowTensorScalarOp,
    AtenReciprocal_Op,
)
from ziggurat.dialects.torch.checked_scalars import overflowing_scalar
from ziggurat.dialects.torch.eager_half_floats import (
    COMPARISONS,
    INDEX_RESULT,
    INDEXED,
    MIXED,
    PREDICATES,
    WIDENED,
    rounds_inside_for,
)
from ziggurat.dialects.torch.op_registry import op_key
from ziggurat.ir.rewriting import StaticShapesOnly, build_aten_inferred
from ziggurat.ir.statistics import record


_BOOL_RESULT = COMPARISONS | PREDICATES
_OPERAND_DTYPES = (*HALF_FLOATS, torch.float32, torch.bool)


@dataclass
class WidenOp(RewritePattern):
    """One op of ``WIDENED`` with a bf16 or float16 result: float32 operands in, that type out."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        key = op_key(op)
        if key in INDEXED:
            _widen_indexed(op, rewriter)
            return
        if key not in WIDENED | _BOOL_RESULT | INDEX_RESULT | MIXED or len(op.results) != 1 or "dtype" in op.properties:
            return
        if overflowing_scalar(op) is not None:
            return  # eager raises on a number past the 16-bit type's range: torch runs it
        result = op.results[0]
        dtypes = [value_dtype(v) for v in op.operands]
        if any(d not in _OPERAND_DTYPES for d in dtypes):
            return
        halves = {d for d in dtypes if d in HALF_FLOATS}
        if len(halves) != 1:
            return  # nothing to widen, or bf16 with float16 (eager promotes to float32 first)
        half = halves.pop()
        promoted = key in MIXED and value_dtype(result) == torch.float32
        if key in _BOOL_RESULT | INDEX_RESULT:
            if value_dtype(result) != (torch.bool if key in _BOOL_RESULT else torch.int64):
                return
        elif not promoted and (key not in WIDENED or value_dtype(result) != half):
            return
        if rounds_inside_for(op):  # align_corners, a softmax over another dim than the last
            return
        new_ops: list[Operation] = []
        operands: list[SSAValue] = []
        for value, dtype in zip(op.operands, dtypes, strict=True):
            if dtype == half:
                up = cast_to(value, torch.float32, f32)
                new_ops.append(up)
                operands.append(up.results[0])
            else:
                operands.append(value)
        if key in _BOOL_RESULT | INDEX_RESULT or promoted:
            wide = type(op).create(operands=operands, result_types=[result.type], properties=dict(op.properties),
                                   attributes=dict(op.attributes))
            wide.results[0].name_hint = result.name_hint
            rewriter.replace(op, [*new_ops, wide], [wide.results[0]])
            record(NAME, "comparisons and predicates widened" if key in _BOOL_RESULT else
                   "index results widened" if key in INDEX_RESULT else "promoted operands widened")
            return
        wide_type = TensorType(f32, result.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        wide = type(op).create(operands=operands, result_types=[wide_type], properties=dict(op.properties),
                               attributes=dict(op.attributes))
        down = cast_to(wide.results[0], half, result.type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        wide.results[0].name_hint = result.name_hint
        rewriter.replace(op, [*new_ops, wide, down], [down.results[0]])
        record(NAME, "ops widened")


def _widen_with(op: AtenOp, half: torch.dtype, arguments: dict[str, object], rewriter: PatternRewriter) -> None:
    """``op`` rebuilt on its operand cast to float32, with ``arguments`` for its static ones (the
    values eager uses for the 16-bit type), and its float32 result rounded back to ``half`` once."""
    result = op.results[0]
    up = cast_to(op.operands[0], torch.float32, f32)
    wide = type(op).from_arguments({"self": up.results[0], **arguments},
                                   [TensorType(f32, result.type.get_shape())])  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    down = cast_to(wide.results[0], half, result.type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    wide.results[0].name_hint = result.name_hint
    rewriter.replace(op, [up, wide, down], [down.results[0]])
    record(NAME, "ops widened")


def _half_with_number(op: AtenOp, name: str) -> tuple[torch.dtype, float] | None:
    """The 16-bit type of ``op``'s operand and result, and its number argument ``name`` rounded to
    that type as eager rounds it (through float32, as c10 converts); None for another op, a
    number that is not an int or float, or one eager raises on."""
    half = value_dtype(op.results[0])
    number = op.static_value(name)
    if half not in HALF_FLOATS or value_dtype(op.operands[0]) != half or isinstance(number, bool) \
            or not isinstance(number, int | float) or overflowing_scalar(op) is not None:
        return None
    return half, float(torch.tensor(float(number)).to(half))


@dataclass
class WidenPowScalar(RewritePattern):
    """``x ** e`` of a bf16 or float16 ``x`` and a number ``e``, as eager's 16-bit kernel computes
    it: ``e`` rounded to the tensor's type first (``0.1`` is bf16's ``0.10009765625``), then
    ``pow`` in float32 rounded once, but for two exponents of bf16, which eager multiplies in
    bf16 (each product rounded): ``x ** 3`` is ``(x * x) * x`` and ``x ** -2`` is
    ``1 / (x * x)``, each product rounded to bf16 as widened bf16 ops would round it.  A float16
    ``x ** 0.5`` and ``x ** -0.5`` stay in torch: eager takes float32's ``pow`` there (``+0`` of
    ``-0``, ``+inf`` of ``-inf``), where float32's own kernel takes ``sqrt``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenPowTensorScalarOp, rewriter: PatternRewriter) -> None:
        found = _half_with_number(op, "exponent")
        if found is None:
            return
        half, e = found
        if half == torch.float16 and e in (0.5, -0.5):
            return
        if half != torch.bfloat16 or e not in (3.0, -2.0):
            _widen_with(op, half, {"exponent": e}, rewriter)
            return
        element = op.results[0].type.get_element_type()  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
        up = cast_to(op.operands[0], torch.float32, f32)
        square = build_aten_inferred(AtenMulTensorOp, {"self": up.results[0], "other": up.results[0]})
        rounded = cast_to(square.results[0], half, element)  # pyright: ignore[reportUnknownArgumentType]
        back = cast_to(rounded.results[0], torch.float32, f32)
        last = build_aten_inferred(AtenMulTensorOp, {"self": back.results[0], "other": up.results[0]}) if e == 3.0 \
            else build_aten_inferred(AtenReciprocal_Op, {"self": back.results[0]})
        down = cast_to(last.results[0], half, element)  # pyright: ignore[reportUnknownArgumentType]
        last.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, [up, square, rounded, back, last, down], [down.results[0]])
        record(NAME, "bf16 powers multiplied out")


#: Ops whose ``dtype`` argument casts the input first: eager's ``softmax(x, dim, dtype=float32)``
#: of a bf16 ``x`` is ``softmax(x.float(), dim)``.
_CASTING_DTYPE = frozenset({"aten::softmax.int", "aten::log_softmax.int", "aten::sum.dim_IntList", "aten::sum",
                            "aten::mean.dim", "aten::mean", "aten::cumsum", "aten::prod", "aten::prod.dim_int"})


@dataclass
class WidenDtypeArgument(RewritePattern):
    """An op of ``_CASTING_DTYPE`` on a bf16 or float16 operand with ``dtype=float32`` (Bloom's and
    Gemma 2's attention softmax): the operand cast first, exactly, and the op on float32."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenOp, rewriter: PatternRewriter) -> None:
        if op_key(op) not in _CASTING_DTYPE or "dtype" not in op.properties or len(op.results) != 1:
            return
        if op.static_value("dtype") != torch.float32 or value_dtype(op.operands[0]) not in HALF_FLOATS:
            return
        if value_dtype(op.results[0]) != torch.float32 or any(value_dtype(v) != value_dtype(op.operands[0]) for v in op.operands):
            return
        up = cast_to(op.operands[0], torch.float32, f32)
        wide = type(op).create(operands=[up.results[0]], result_types=[op.results[0].type],
                               properties=dict(op.properties), attributes=dict(op.attributes))
        wide.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, [up, wide], [wide.results[0]])
        record(NAME, "float32 dtype arguments made casts")


@dataclass
class WidenHardshrink(RewritePattern):
    """``hardshrink`` of a bf16 or float16 tensor: eager compares with ``lambd`` rounded to the
    tensor's type (through float32, as c10 converts), so the float32 op takes that rounded value
    (bit for bit over every value, in eager's vector and scalar loops alike)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenHardshrink_Op, rewriter: PatternRewriter) -> None:
        found = _half_with_number(op, "lambd")
        if found is not None:
            _widen_with(op, found[0], {"lambd": found[1]}, rewriter)


@dataclass
class WidenNanToNum(RewritePattern):
    """``nan_to_num`` of a bf16 or float16 tensor: eager's defaults for the infinities are the
    16-bit type's largest and smallest values, written out for the float32 op (exact in float32
    and rounded back exactly; a given replacement rounds through float32 as eager's does)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AtenNanToNum_Op, rewriter: PatternRewriter) -> None:
        half = value_dtype(op.results[0])
        if half not in HALF_FLOATS or value_dtype(op.operands[0]) != half:
            return
        info = torch.finfo(half)
        defaults = {"nan": 0.0, "posinf": float(info.max), "neginf": float(info.min)}
        given = {name: op.static_value(name) for name in defaults}
        _widen_with(op, half, {name: defaults[name] if value is None else float(value) for name, value in given.items()},
                    rewriter)


#: Casts of a 16-bit float to and from these types go through float32 (``WidenCast``).
_CAST_PARTNERS = frozenset({torch.int64, torch.int32, torch.bool, *HALF_FLOATS})
_CASTS = frozenset({"aten::_to_copy", "aten::to.dtype", "aten::to.dtype_layout"})


@dataclass
class WidenCast(RewritePattern):
    """A cast between a 16-bit float and int64, int32, bool or the other 16-bit float, as two
    casts through float32: eager's ``static_cast`` converts c10's ``BFloat16`` and ``Half`` to
    and from ``float`` (an int64 of ``2**31 + 2**23 + 1`` becomes bf16 ``2**31``, rounded twice;
    a NaN or out-of-range float becomes the integer float32's does), and both halves are
    native."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op_key(op) not in _CASTS or len(op.results) != 1 or not isinstance(op, TorchOp):
            return  # (``to.dtype_layout`` is a ``torch.operator``)
        source, target = value_dtype(op.operands[0]), value_dtype(op.results[0])
        if source == target or source not in _CAST_PARTNERS or target not in _CAST_PARTNERS \
                or not {source, target} & set(HALF_FLOATS):
            return
        arguments = op.arguments()
        device, memory_format = arguments.get("device"), arguments.get("memory_format")
        if (device is not None and str(device) != "cpu") or \
                memory_format not in (None, torch.preserve_format, torch.contiguous_format):
            return
        up = cast_to(op.operands[0], torch.float32, f32)
        down = cast_to(up.results[0], target, op.results[0].type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
        down.results[0].name_hint = op.results[0].name_hint
        rewriter.replace(op, [up, down], [down.results[0]])
        record(NAME, "casts through float32")


def _widen_indexed(op: AtenOp, rewriter: PatternRewriter) -> None:
    """``INDEXED``: the bf16 operand widened, the value rounded back (exactly), the indices kept."""
    values = op.results[0]
    half = value_dtype(values)
    if half not in HALF_FLOATS or value_dtype(op.operands[0]) != half:
        return
    if any(value_dtype(r) != torch.int64 for r in op.results[1:]):
        return
    up = cast_to(op.operands[0], torch.float32, f32)
    wide_type = TensorType(f32, values.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    wide = type(op).create(operands=[up.results[0], *op.operands[1:]],
                           result_types=[wide_type, *(r.type for r in op.results[1:])],
                           properties=dict(op.properties), attributes=dict(op.attributes))
    down = cast_to(wide.results[0], half, values.type.get_element_type())  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
    for old, new in zip(op.results, wide.results, strict=True):
        new.name_hint = old.name_hint
    rewriter.replace(op, [up, wide, down], [down.results[0], *wide.results[1:]])
    record(NAME, "indexed ops widened")


#: Ops widened whole (``_widen_whole``: every result, one or several) when their input is bf16 or float16:
#: eager's batch norm of a 16-bit input computes in float32 and rounds once (bit for bit the
#: float32 one rounded, checked on both types in eval mode), its parameters 16-bit or float32.
#: In training mode (batch statistics) it is not widened: not checked against eager.
WIDENED_WHOLE = frozenset({"aten::_native_batch_norm_legit_no_training", "aten::batch_norm", "aten::aminmax",
                           "aten::var_mean.dim", "aten::var_mean.correction", "aten::std_mean.dim",
                           "aten::std_mean.correction"})


@dataclass
class WidenWhole(RewritePattern):
    """An op of ``WIDENED_WHOLE`` on a bf16 or float16 input: float32 in, each 16-bit result
    rounded back once."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op_key(op) not in WIDENED_WHOLE or not op.operands:
            return
        half = value_dtype(op.operands[0])
        if half not in HALF_FLOATS or value_dtype(op.results[0]) != half:
            return
        if any(isinstance(v.type, TensorType) and value_dtype(v) not in (half, torch.float32) for v in op.operands):
            return
        if isinstance(op, AtenOp) and "training" in op.properties and op.static_value("training") is not False:
            return
        widen_whole(op, half, rewriter)
        key = op_key(op)
        record(NAME, "batch norms widened" if "batch_norm" in key else "multi-result reductions widened")


@dataclass(frozen=True)
class WidenHalfFloatsPass(ModulePass):
    name = NAME

    isa: str = "auto"
    #: Whether bf16 GEMMs keep their bf16 kernels; None: where the host has one for ``isa``
    #: (AMX-BF16 or AVX512-BF16, :func:`~ziggurat.backends.cpu.kernels.amx.bf16_kernel_for`).
    #: Without, they are widened like float16's, and attention's products stay float32.
    bf16_kernels: bool | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        bf16_kernels = self.bf16_kernels
        if bf16_kernels is None:
            bf16_kernels = bf16_kernel_for(pass_isa(self.isa, NAME).value) is not None
        PatternRewriteWalker(StaticShapesOnly(SplitHalfFloatEpilogue(bf16_kernels)),
                             apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(StaticShapesOnly(GreedyRewritePatternApplier([
            WidenOp(), WidenPowScalar(), WidenNanToNum(), WidenHardshrink(), WidenCast(), WidenDtypeArgument(), WidenLogSoftmax(),
            WidenLogsumexp(), WidenXlogy(), WidenLogit(), WidenTruncDivision(), WidenGroupedConv(),
            WidenGemm(bf16_kernels), WidenWhole(), *([Bf16Products()] if bf16_kernels else [])])),
                             apply_recursively=False).rewrite_module(op)
