"""ISA selection: host detection, parsing, and that forcing a narrower ISA
really changes the generated code."""

from __future__ import annotations

import pytest
from llvmlite import ir

from ziggurat.backends.cpu.isa import (
    Isa,
    IsaError,
    feature_string,
    host_features,
    host_isa,
    host_supports,
    parse_isa,
    target_machine,
    vector_width,
)
from ziggurat.backends.cpu.jit import emit_assembly
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32P, VOID

from .helpers import ALL_ISAS


def test_vector_width() -> None:
    assert vector_width(Isa.AVX512) == 16
    assert vector_width(Isa.AVX2) == 8
    assert vector_width(Isa.SCALAR) == 1
    assert vector_width(Isa.AVX512, 64) == 8
    assert vector_width(Isa.AVX2, 16) == 16
    with pytest.raises(IsaError, match="element width"):
        vector_width(Isa.AVX2, 12)


def test_host_isa_matches_features() -> None:
    feats = host_features()
    isa = host_isa()
    if feats.get("avx512f") and feats.get("avx512bw") and feats.get("avx512vl") and feats.get("avx512dq"):
        assert isa is Isa.AVX512
    elif feats.get("avx2") and feats.get("fma"):
        assert isa is Isa.AVX2
    else:
        assert isa is Isa.SCALAR
    assert host_supports(Isa.SCALAR)


def test_parse_isa() -> None:
    assert parse_isa("auto") is host_isa()
    assert parse_isa("Scalar") is Isa.SCALAR
    assert parse_isa(Isa.SCALAR) is Isa.SCALAR
    with pytest.raises(IsaError, match="unknown isa 'avx3'.*auto, avx512, avx2, scalar"):
        parse_isa("avx3")
    with pytest.raises(IsaError, match="must be a string"):
        parse_isa(3)  # type: ignore[arg-type]


def test_parse_isa_rejects_missing_host_features(monkeypatch: pytest.MonkeyPatch) -> None:
    import ziggurat.backends.cpu.isa as isa_mod

    fake = dict(host_features())
    fake["avx512f"] = False
    monkeypatch.setattr(isa_mod, "host_features", lambda: fake)
    with pytest.raises(IsaError, match="not supported by this host.*avx512f"):
        parse_isa("avx512")


def test_feature_strings_disable_wide_units() -> None:
    avx2 = feature_string(Isa.AVX2).split(",")
    assert "-avx512f" in avx2 and "+avx2" in avx2 and "+fma" in avx2
    scalar = feature_string(Isa.SCALAR).split(",")
    assert "-avx" in scalar and "-avx2" in scalar and "-fma" in scalar and "-avx512f" in scalar
    assert not any(f.startswith("+avx") for f in scalar)
    with pytest.raises(IsaError):
        target_machine(Isa.AVX2, opt=7)


def _vector_copy_module(isa: Isa) -> ir.Module:
    """``dst[0:W] = fma(src, src, dst)`` written with the ISA's native vector type."""
    m = ir.Module("vcopy")
    vec = VecOps(m, isa)
    fn = ir.Function(m, ir.FunctionType(VOID, [F32P, F32P]), name="f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    x = vec.load(b, fn.args[0])
    y = vec.load(b, fn.args[1])
    vec.store(b, vec.fma(b, x, x, y), fn.args[1])
    vec.store(b, x, fn.args[0], max(1, vec.width - 3))  # masked tail store
    b.ret_void()
    return m


@pytest.mark.parametrize("isa", ALL_ISAS, ids=lambda i: i.value)
def test_generated_code_uses_the_isa(isa: Isa) -> None:
    m = _vector_copy_module(isa)
    text = str(m)
    asm = emit_assembly(m, isa)
    if isa is Isa.AVX512:
        assert "<16 x float>" in text
        assert "zmm" in asm
        assert "vfmadd" in asm
    elif isa is Isa.AVX2:
        assert "<8 x float>" in text and "<16 x float>" not in text
        assert "ymm" in asm
        assert "zmm" not in asm
        assert "vmaskmovps" in asm
    else:
        assert "x float>" not in text
        assert "ymm" not in asm and "zmm" not in asm
        assert "vfmadd" not in asm


@pytest.mark.skipif(Isa.AVX2 not in ALL_ISAS, reason="host lacks AVX2")
def test_forced_avx2_has_no_zmm_even_for_wide_vectors() -> None:
    """IR written with <16 x float> is legalised to ymm halves under Isa.AVX2."""
    src = """
    define void @f(<16 x float>* %p) {
      %a = load <16 x float>, <16 x float>* %p
      %b = fadd <16 x float> %a, %a
      store <16 x float> %b, <16 x float>* %p
      ret void
    }
    """
    asm = emit_assembly(src, Isa.AVX2)
    assert "ymm" in asm and "zmm" not in asm


def test_passes_lower_for_an_isa_the_host_lacks_and_compile_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The IR is lowered for a target, as ``llc -mattr`` takes one (``ziggurat-opt`` writes
    avx512 IR on an AVX2 host); code that would run here is refused, as a ZigguratError."""
    import torch

    import ziggurat
    import ziggurat.backends.cpu.isa as isa_mod
    from ziggurat.backends.cpu.isa import pass_isa
    from ziggurat.ir.errors import ZigguratError

    fake = dict(host_features())
    fake["avx512f"] = False
    monkeypatch.setattr(isa_mod, "host_features", lambda: fake)
    assert parse_isa("avx512", host=False) is Isa.AVX512
    assert pass_isa("avx512", "prepack-weights") is Isa.AVX512
    with pytest.raises(ZigguratError, match="compile: isa 'avx512' is not supported by this host.*avx512f"):
        ziggurat.compile(torch.nn.ReLU(), (torch.randn(3),), backend="cpu", isa="avx512")
