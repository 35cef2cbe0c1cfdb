"""What this host's CPU runs, for tests that compile natively.

The machines this project runs on change: Intel hosts with AVX-512 and AMX, AMD ones with
AVX-512 and ones with AVX2 only.  A test that is not about one ISA compiles for
:data:`WIDEST_ISA`; one that is skips where the host lacks it, saying so."""

from __future__ import annotations

ISAS = ("avx512", "avx2", "scalar")


def host_isas() -> tuple[str, ...]:
    """The ISAs of :data:`ISAS` this host runs, widest first (``scalar`` always)."""
    from ziggurat.backends.cpu.isa import Isa, host_supports

    return tuple(i for i in ISAS if host_supports(Isa(i)))


#: The widest ISA this host runs: what ``compile(..., isa="auto")`` builds for.
WIDEST_ISA = host_isas()[0]


def weight_panels() -> str:
    """The layout :data:`WIDEST_ISA`'s float32 GEMMs prepack a weight into (``KN32n`` on
    avx512, ``KN16n`` on avx2): part of a prepacked weight's name."""
    from ziggurat.backends.cpu.isa import Isa
    from ziggurat.backends.cpu.kernels.tiles import choose_nr

    return f"KN{choose_nr(Isa(WIDEST_ISA))}n"


def bf16_gemm_kernel() -> str | None:
    """The bf16 GEMM kernel code for :data:`WIDEST_ISA` takes here (``"amx"``,
    ``"avx512bf16"``), or None: there bf16 GEMMs are widened to the float32 kernels."""
    from ziggurat.backends.cpu.kernels.amx import bf16_kernel_for

    return bf16_kernel_for(WIDEST_ISA)


def each_isa(isas: tuple[str, ...] = ISAS) -> list[object]:
    """``isas`` as ``pytest.mark.parametrize`` values, each the host lacks skipped with the reason."""
    import pytest

    runs = host_isas()
    return [pytest.param(i, marks=pytest.mark.skipif(i not in runs, reason=f"this host cannot run {i} code"))
            for i in isas]
