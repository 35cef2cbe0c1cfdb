"""``arith``, ``math`` and ``vector`` ops (scalars or vectors) as LLVM instructions."""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    VectorType,
)
from xdsl.ir import Attribute, Operation

from ziggurat.backends.cpu.codegen.bf16 import bf16_to_f32, f32_to_bf16
from ziggurat.backends.cpu.codegen.f16 import f16_to_f32, f32_to_f16
from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter, handles
from ziggurat.backends.cpu.codegen.types import CodegenError, llvm_type
from ziggurat.backends.cpu.codegen.unary import emit_unary
from ziggurat.backends.cpu.llvm_ir import I32, instr, intrinsic_suffix, value_type
from ziggurat.backends.cpu.vecmath.builder import VB
from ziggurat.dialects import loop


def splat(b: ir.IRBuilder, x: ir.Value, ty: ir.VectorType) -> ir.Value:
    if isinstance(x, ir.Constant) and x.constant is not ir.Undefined and not isinstance(x.constant, list):
        # a constant vector: stays a constant where it is used, also inside an outlined
        # parallel body (see loop_ops._parallel), so a division by it is strength-reduced
        return ir.Constant(ty, [x.constant] * ty.count)
    undef = ir.Constant(ty, ir.Undefined)
    v = b.insert_element(undef, x, I32(0))
    return b.shuffle_vector(v, undef, ir.Constant(ir.VectorType(I32, ty.count), [0] * ty.count))


@handles(arith.ConstantOp)
def _constant(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    ty = llvm_type(op.result.type)
    value = op.value
    rtype = op.result.type
    element = rtype.element_type if isinstance(rtype, VectorType) else rtype  # pyright: ignore[reportUnknownMemberType]
    if isinstance(value, IntegerAttr | FloatAttr):
        data = value.value.data  # pyright: ignore
        em.set(op.result, ir.Constant(ty, _half_float_bits(element, data)))
    elif isinstance(value, DenseIntOrFPElementsAttr):
        vals = [_half_float_bits(element, v) for v in value.get_values()]  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        assert isinstance(ty, ir.VectorType)
        if len(vals) == 1:
            vals = vals * ty.count
        em.set(op.result, ir.Constant(ty, vals))
    else:
        raise CodegenError(f"unsupported constant {value}")


def _half_float_bits(element: Attribute, value: object) -> object:
    """``value`` as the constant an element of type ``element`` is in LLVM: a bf16 or float16
    one as the ``i16`` of its bits, anything else as it is."""
    if isinstance(element, BFloat16Type):
        return _bf16_bits(float(value))  # pyright: ignore[reportArgumentType]
    if isinstance(element, Float16Type):
        return _f16_bits(float(value))  # pyright: ignore[reportArgumentType]
    return value


def _f16_bits(value: float) -> int:
    """A float16 constant as the ``i16`` its bits are stored as, rounded as ``c10::Half`` rounds
    a scalar (through float32 first, to nearest even; a NaN is ``0x7E00``)."""
    import struct

    x = float(value)
    if x != x:
        return 0x7E00
    try:
        single = struct.unpack("<f", struct.pack("<f", x))[0]
        bits = struct.unpack("<H", struct.pack("<e", single))[0]
    except OverflowError:  # past float32's or float16's range: an infinity
        bits = 0xFC00 if x < 0 else 0x7C00
    return bits - 0x10000 if bits >= 0x8000 else bits


def _bf16_bits(value: float) -> int:
    """A bf16 constant as the ``i16`` its bits are stored as, rounded as ``c10::BFloat16``
    rounds a scalar (to nearest even; a NaN is ``0x7FC0``)."""
    import struct

    x = float(value)
    if x != x:
        return 0x7FC0
    bits = struct.unpack("<I", struct.pack("<f", x))[0]  # float32 first, as torch's Scalar conversion
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    return rounded - 0x10000 if rounded >= 0x8000 else rounded


def _binary(fn_name: str):  # type: ignore[no-untyped-def]
    def emit(em: FunctionEmitter, op: Operation) -> None:
        a, c = em.get(op.operands[0]), em.get(op.operands[1])
        em.set(op.results[0], getattr(em.b, fn_name)(a, c))

    return emit


for _op, _name in ((arith.AddfOp, "fadd"), (arith.SubfOp, "fsub"), (arith.MulfOp, "fmul"), (arith.DivfOp, "fdiv"),
                   (arith.AddiOp, "add"), (arith.SubiOp, "sub"), (arith.MuliOp, "mul"), (arith.AndIOp, "and_"),
                   (arith.OrIOp, "or_"), (arith.XOrIOp, "xor"), (arith.ShLIOp, "shl"), (arith.ShRSIOp, "ashr"),
                   (arith.DivUIOp, "udiv"), (arith.RemUIOp, "urem"), (arith.DivSIOp, "sdiv"),
                   (arith.RemSIOp, "srem")):
    handles(_op)(_binary(_name))


def _intrinsic(name: str):  # type: ignore[no-untyped-def]
    def emit(em: FunctionEmitter, op: Operation) -> None:
        a, c = em.get(op.operands[0]), em.get(op.operands[1])
        em.set(op.results[0], VB(em.b, a).intrinsic(name, value_type(a), [a, c]))

    return emit


for _op, _name in ((arith.MaximumfOp, "maximum"), (arith.MinimumfOp, "minimum"), (arith.MaxnumfOp, "maxnum"),
                   (arith.MinnumfOp, "minnum"), (math.CopySignOp, "copysign")):
    handles(_op)(_intrinsic(_name))


@handles(math.FmaOp)
def _fma(em: FunctionEmitter, op: Operation) -> None:
    a, c, d = (em.get(v) for v in op.operands)
    em.set(op.results[0], VB(em.b, a).intrinsic("fma", value_type(a), [a, c, d]))


@handles(arith.IndexCastOp)
def _index_cast(em: FunctionEmitter, op: Operation) -> None:
    """``index`` is ``i64``: a cast to or from it truncates or sign-extends other widths."""
    x = em.get(op.operands[0])
    src, dst = value_type(x), llvm_type(op.results[0].type)
    assert isinstance(src, ir.IntType) and isinstance(dst, ir.IntType)
    em.set(op.results[0], x if src.width == dst.width else
           instr(em.b.trunc(x, dst) if src.width > dst.width else em.b.sext(x, dst)))


@handles(arith.MaxSIOp, arith.MinSIOp)
def _int_minmax(em: FunctionEmitter, op: Operation) -> None:
    a, c = em.get(op.operands[0]), em.get(op.operands[1])
    pred = ">" if isinstance(op, arith.MaxSIOp) else "<"
    em.set(op.results[0], em.b.select(em.b.icmp_signed(pred, a, c), a, c))


@handles(arith.FloorDivSIOp)
def _floordiv(em: FunctionEmitter, op: Operation) -> None:
    b = em.b
    a, d = em.get(op.operands[0]), em.get(op.operands[1])
    q = b.sdiv(a, d)
    r = b.srem(a, d)
    ty = value_type(a)
    zero = ir.Constant(ty, [0] * ty.count) if isinstance(ty, ir.VectorType) else ir.Constant(ty, 0)
    one = ir.Constant(ty, [1] * ty.count) if isinstance(ty, ir.VectorType) else ir.Constant(ty, 1)
    fix = b.and_(b.icmp_signed("!=", r, zero), b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", d, zero)))
    em.set(op.results[0], b.sub(q, b.select(fix, one, zero)))  # pyright: ignore[reportArgumentType]  # llvmlite: decorated IRBuilder ops infer as None


_FCMP = {"oeq": ("==", True), "one": ("!=", True), "olt": ("<", True), "ole": ("<=", True), "ogt": (">", True),
         "oge": (">=", True), "ueq": ("==", False), "une": ("!=", False), "ult": ("<", False),
         "ule": ("<=", False), "ugt": (">", False), "uge": (">=", False), "ord": ("ord", True),
         "uno": ("uno", False)}
_ICMP = {"eq": ("==", True), "ne": ("!=", True), "slt": ("<", True), "sle": ("<=", True), "sgt": (">", True),
         "sge": (">=", True), "ult": ("<", False), "ule": ("<=", False), "ugt": (">", False), "uge": (">=", False)}


@handles(arith.CmpfOp)
def _cmpf(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, arith.CmpfOp)
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, c = em.get(op.lhs), em.get(op.rhs)
    sym, ordered = _FCMP[pred]
    res = em.b.fcmp_ordered(sym, a, c) if ordered else em.b.fcmp_unordered(sym, a, c)
    em.set(op.result, res)


@handles(arith.CmpiOp)
def _cmpi(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, arith.CmpiOp)
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, c = em.get(op.lhs), em.get(op.rhs)
    sym, signed = _ICMP[pred]
    res = em.b.icmp_signed(sym, a, c) if signed else em.b.icmp_unsigned(sym, a, c)
    em.set(op.result, res)


@handles(arith.SelectOp)
def _select(em: FunctionEmitter, op: Operation) -> None:
    c, a, d = (em.get(v) for v in op.operands)
    a_ty, c_ty = value_type(a), value_type(c)
    if isinstance(a_ty, ir.VectorType) and not isinstance(c_ty, ir.VectorType):
        c = splat(em.b, c, ir.VectorType(c_ty, a_ty.count))
    em.set(op.results[0], em.b.select(c, a, d))


def _cast(kind: str):  # type: ignore[no-untyped-def]
    def emit(em: FunctionEmitter, op: Operation) -> None:
        x = em.get(op.operands[0])
        ty = llvm_type(op.results[0].type)
        if kind == "int":
            x_elem, t_elem = _elem(value_type(x)), _elem(ty)
            assert isinstance(x_elem, ir.IntType) and isinstance(t_elem, ir.IntType)  # index casts are integer-only
            xw, tw = x_elem.width, t_elem.width
            if xw == tw:
                em.set(op.results[0], x)
                return
            res = em.b.sext(x, ty) if tw > xw else em.b.trunc(x, ty)
            em.set(op.results[0], res)  # pyright: ignore[reportArgumentType]  # llvmlite: decorated IRBuilder ops infer as None
        elif kind in ("fpext", "fptrunc") and _half_float_cast(op.operands[0].type, op.results[0].type):
            em.set(op.results[0], _half_float_convert(em, x, op.operands[0].type, op.results[0].type))
        else:
            em.set(op.results[0], getattr(em.b, kind)(x, ty))

    return emit


def _element_type(attr: Attribute) -> Attribute:
    return attr.element_type if isinstance(attr, VectorType) else attr  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _half_float_cast(src: Attribute, dst: Attribute) -> bool:
    """A float32 <-> bfloat16 or float16 conversion (both are ``i16`` bits in LLVM: ``bf16.py``,
    ``f16.py``)."""
    pair = {type(_element_type(src)), type(_element_type(dst))}
    return pair in ({Float32Type, BFloat16Type}, {Float32Type, Float16Type})


def _half_float_convert(em: FunctionEmitter, x: ir.Value, src: Attribute, dst: Attribute) -> ir.Value:
    b = em.b
    if isinstance(_element_type(dst), BFloat16Type):
        return f32_to_bf16(b, x)
    if isinstance(_element_type(src), BFloat16Type):
        return bf16_to_f32(b, x)
    if not em.f16c:
        return f32_to_f16(b, x) if isinstance(_element_type(dst), Float16Type) else f16_to_f32(b, x)
    # F16C: vcvtps2ph (to nearest even; a NaN keeps its payload's top bits, quieted) and
    # vcvtph2ps, the instructions eager's vectorized conversions use
    ty = value_type(x)
    half = ir.VectorType(ir.HalfType(), ty.count) if isinstance(ty, ir.VectorType) else ir.HalfType()
    if isinstance(_element_type(dst), Float16Type):
        return instr(b.bitcast(instr(b.fptrunc(x, half)), llvm_type(dst)))
    return instr(b.fpext(instr(b.bitcast(x, half)), llvm_type(dst)))


handles(arith.ExtSIOp)(_cast("sext"))
handles(arith.ExtUIOp)(_cast("zext"))
handles(arith.TruncIOp)(_cast("trunc"))
handles(arith.IndexCastOp)(_cast("int"))
handles(arith.SIToFPOp)(_cast("sitofp"))
handles(arith.UIToFPOp)(_cast("uitofp"))
handles(arith.FPToSIOp)(_cast("fptosi"))
handles(arith.ExtFOp)(_cast("fpext"))
handles(arith.TruncFOp)(_cast("fptrunc"))


@handles(arith.NegfOp)
def _negf(em: FunctionEmitter, op: Operation) -> None:
    em.set(op.results[0], em.b.fneg(em.get(op.operands[0])))  # pyright: ignore[reportArgumentType]  # llvmlite: decorated IRBuilder ops infer as None


@handles(vector.BroadcastOp)
def _broadcast(em: FunctionEmitter, op: Operation) -> None:
    ty = llvm_type(op.results[0].type)
    assert isinstance(ty, ir.VectorType)
    em.set(op.results[0], splat(em.b, em.get(op.operands[0]), ty))


@handles(loop.UnaryOp)
def _unary(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.UnaryOp)
    x = em.get(op.input)
    em.set(op.result, emit_unary(em.b, op.kind.data, x, op.parameters, llvm_type(op.result.type)))


@handles(loop.ReduceOp)
def _reduce(em: FunctionEmitter, op: Operation) -> None:
    from ziggurat.backends.cpu import vecmath

    assert isinstance(op, loop.ReduceOp)
    x = em.get(op.input)
    x_ty = value_type(x)
    assert isinstance(x_ty, ir.VectorType)  # loop.reduce folds the lanes of a vector
    kind = op.kind.data
    elem = x_ty.element
    if isinstance(elem, ir.IntType):
        name = {"add": "add", "mul": "mul", "max": "smax", "max_nonan": "smax", "min": "smin", "and": "and", "or": "or"}[kind]
        if elem.width == 1:
            name = {"add": "or", "mul": "and", "max": "or", "max_nonan": "or", "min": "and", "and": "and", "or": "or"}[kind]
        em.set(op.result, _vector_reduce(em, f"vector.reduce.{name}", elem, x))
        return
    if kind == "add":
        em.set(op.result, vecmath.reduce_add(em.b, x))
    elif kind == "max":
        em.set(op.result, vecmath.reduce_max(em.b, x))
    elif kind == "max_nonan":
        em.set(op.result, vecmath.reduce_max(em.b, x, propagate_nan=False, nan_free=True))
    elif kind == "min":
        em.set(op.result, vecmath.reduce_min(em.b, x))
    elif kind == "mul":
        fn = em.declare(f"llvm.vector.reduce.fmul.v{x_ty.count}{intrinsic_suffix(elem)}", elem, [elem, x_ty])
        em.set(op.result, em.b.call(fn, [ir.Constant(elem, 1.0), x], fastmath=("reassoc",)))
    else:
        raise CodegenError(f"loop.reduce {kind} on floats")


def _vector_reduce(em: FunctionEmitter, base: str, elem: ir.Type, x: ir.Value) -> ir.Value:
    x_ty = value_type(x)
    assert isinstance(x_ty, ir.VectorType)
    fn = em.declare(f"llvm.{base}.v{x_ty.count}{intrinsic_suffix(elem)}", elem, [x_ty])
    return em.b.call(fn, [x])


__all__ = ["VectorType", "splat"]


@handles(loop.CmpOp)
def _loop_cmp(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.CmpOp)
    a, c = em.get(op.lhs), em.get(op.rhs)
    pred = op.predicate.data
    if pred in _FCMP and not (pred in _ICMP and isinstance(_elem(value_type(a)), ir.IntType)):
        sym, ordered = _FCMP[pred]
        res = em.b.fcmp_ordered(sym, a, c) if ordered else em.b.fcmp_unordered(sym, a, c)
    else:
        sym, signed = _ICMP[pred]
        res = em.b.icmp_signed(sym, a, c) if signed else em.b.icmp_unsigned(sym, a, c)
    em.set(op.result, res)


def _elem(t: ir.Type) -> ir.Type:
    return t.element if isinstance(t, ir.VectorType) else t


@handles(loop.SelectOp)
def _loop_select(em: FunctionEmitter, op: Operation) -> None:
    _select(em, op)


_CAST_BUILDERS = {"sitofp": "sitofp", "uitofp": "uitofp", "fptosi": "fptosi", "extsi": "sext", "extui": "zext",
                  "trunci": "trunc", "extf": "fpext", "truncf": "fptrunc"}


@handles(loop.CastOp)
def _loop_cast(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.CastOp)
    x = em.get(op.input)
    ty = llvm_type(op.result.type)
    if op.kind.data in ("extf", "truncf") and _half_float_cast(op.input.type, op.result.type):
        em.set(op.result, _half_float_convert(em, x, op.input.type, op.result.type))
        return
    em.set(op.result, getattr(em.b, _CAST_BUILDERS[op.kind.data])(x, ty))
