"""The GEMM microkernel's register tile per ISA, and the B-panel width (``nr`` of the
``KN{nr}n`` layouts in ``dialects/fused/pack.py``) that follows from it."""

from __future__ import annotations

from ziggurat.backends.cpu.isa import Isa, vector_width

# Microkernel tile for each ISA: (rows, vectors per row).  12x2 zmm keeps 24
# accumulators in the 32 AVX-512 registers and needs half the B bandwidth of
# 6x4; 6x2 ymm is the classic AVX2 shape (12 of 16 registers).
MICROKERNEL_TILE: dict[Isa, tuple[int, int]] = {
    Isa.AVX512: (12, 2),
    Isa.AVX2: (6, 2),
    Isa.SCALAR: (4, 4),
}


def choose_nr(isa: Isa) -> int:
    """Panel width the GEMM microkernel of ``isa`` is built for (a multiple of
    the vector width): 32 on AVX-512, 16 on AVX2, 4 scalar."""
    _mr, nvec = MICROKERNEL_TILE[isa]
    return nvec * vector_width(isa, 32)
