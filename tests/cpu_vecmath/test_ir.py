"""The emitted IR: only LLVM intrinsics are called (no libm), code is straight-line (but sin and
cos: a branch, taken only for |x| >= 2^49, into their Payne-Hanek reduction, a function of the
module inlined there), types are kept."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import pytest
from llvmlite import ir

from ziggurat.backends.cpu import vecmath

from .harness import Kernels

F32, F64 = ir.FloatType(), ir.DoubleType()
TYPES: dict[str, ir.Type] = {
    "f32": F32, "v1f32": ir.VectorType(F32, 1), "v4f32": ir.VectorType(F32, 4), "v8f32": ir.VectorType(F32, 8),
    "v16f32": ir.VectorType(F32, 16), "f64": F64, "v2f64": ir.VectorType(F64, 2), "v4f64": ir.VectorType(F64, 4),
    "v8f64": ir.VectorType(F64, 8),
}
F32_ONLY = {"sin", "cos"}
#: kinds with a (rarely taken) branch: the huge-argument reduction of sin and cos (and of tan)
BRANCHING = {"sin", "cos", "tan"}
PARAMS: dict[str, dict[str, float]] = {"pow": {"exponent": 1.7}, "clamp": {"min": -1.0, "max": 2.0}}
LIBM = ("expf", "exp", "expm1f", "logf", "log", "log1pf", "tanhf", "tanh", "erff", "erf", "erfcf", "sinf", "cosf",
        "powf", "pow", "exp2f", "log2f", "log10f", "sqrtf", "fmaf", "fma")


def _module_with_all_kinds(ty: ir.Type) -> tuple[ir.Module, dict[str, ir.Function]]:
    mod = ir.Module(name="vecmath_ir_test")
    fns: dict[str, ir.Function] = {}
    is_f64 = isinstance(ty, ir.DoubleType) or (isinstance(ty, ir.VectorType) and isinstance(ty.element, ir.DoubleType))
    for kind in sorted(vecmath.UNARY_KINDS):
        if is_f64 and kind in F32_ONLY:
            continue
        fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name=f"k_{kind}")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        out = vecmath.apply_unary(b, kind, fn.args[0], PARAMS.get(kind, {}))
        assert out.type == ty, f"{kind}: result type {out.type} != {ty}"
        b.ret(out)
        fns[kind] = fn
    fn = ir.Function(mod, ir.FunctionType(ty, [ty, ty]), name="k_pow2")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(vecmath.pow(b, *fn.args))
    fns["pow(x, y)"] = fn
    return mod, fns


@pytest.mark.parametrize("tyname", sorted(TYPES))
def test_only_intrinsics_straight_line_and_valid(tyname: str) -> None:
    mod, fns = _module_with_all_kinds(TYPES[tyname])
    defined = {g.name for g in mod.globals.values() if isinstance(g, ir.Function) and not g.is_declaration}
    for kind, fn in fns.items():
        assert len(fn.blocks) == 1 or kind in BRANCHING, f"{kind}: created basic blocks"
        for instr in (i for block in fn.blocks for i in block.instructions):
            if isinstance(instr, ir.CallInstr):
                name = instr.callee.name
                assert name.startswith("llvm.") or (kind in BRANCHING and name in defined), f"{kind}: calls {name}"
    declared = [g.name for g in mod.globals.values() if isinstance(g, ir.Function) and g.is_declaration]
    assert declared and all(n.startswith("llvm.") for n in declared), declared
    text = str(mod)
    for name in LIBM:
        assert f'@"{name}"' not in text and f"@{name}(" not in text
    parsed = llvm.parse_assembly(text)
    parsed.verify()


def test_machine_code_has_no_calls(kwide: Kernels, k_avx2: Kernels) -> None:
    """After O3 and instruction selection nothing became a libcall (e.g. an FMA or a vector frem)."""
    for k in (kwide, k_avx2):
        calls = [ln for ln in k.asm.splitlines() if re.match(r"\s+call", ln)]
        assert calls == [], calls[:5]


def test_avx2_code_uses_no_avx512(kwide: Kernels, k_avx2: Kernels) -> None:
    assert ("zmm" in kwide.asm) == (kwide.target.name == "avx512")
    assert "zmm" not in k_avx2.asm and "ymm" in k_avx2.asm
    assert not re.search(r"\{%k[1-7]\}", k_avx2.asm)


def test_constants_are_splatted() -> None:
    mod = ir.Module()
    ty = ir.VectorType(F32, 8)
    fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name="f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(vecmath.exp(b, fn.args[0]))
    text = str(mod)
    assert "<8 x float> <float" in text
    assert not re.search(r"fmul <8 x float> %\S+, float ", text)
