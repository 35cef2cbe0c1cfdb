"""f32 accuracy of every smooth kind: dense sweeps + OpInfo samples, on AVX-512, AVX2 and scalar code."""

from __future__ import annotations

import pytest
import torch

from .accuracy import SMOOTH_KINDS, measure
from .bounds import MAX_REL_F32, REQUIREMENT
from .harness import Kernels
from .references import OPINFO_NAME, inputs

def _domain(kind: str, opinfo: dict[str, torch.Tensor], scale: float) -> torch.Tensor:
    x = inputs(kind, scale)
    extra = opinfo.get(OPINFO_NAME[kind])
    if extra is not None:
        x = torch.cat([x, extra])
    return x.contiguous()


def test_bounds_meet_requirement() -> None:
    assert set(MAX_REL_F32) == set(SMOOTH_KINDS)
    assert max(MAX_REL_F32.values()) <= REQUIREMENT


@pytest.mark.parametrize("kind", SMOOTH_KINDS)
def test_avx512_accuracy(kwide: Kernels, opinfo: dict[str, torch.Tensor], kind: str) -> None:
    m = measure(kwide, kind, _domain(kind, opinfo, 0.2))
    assert m.max_rel <= MAX_REL_F32[kind], m.row()
    # vs torch f32, wherever torch itself is within 2 ulp of the truth
    assert m.max_rel_vs_eager <= REQUIREMENT, m.row()
    # everywhere: |ours - eager| <= 1e-6 |truth| + |eager - truth|, specials equal eager or truth
    assert m.consistency_violations == 0, m.row()


@pytest.mark.slow
@pytest.mark.parametrize("kind", SMOOTH_KINDS)
def test_avx512_accuracy_dense(kwide: Kernels, opinfo: dict[str, torch.Tensor], kind: str) -> None:
    """The sweep behind the documented table (4x denser than measure_accuracy.py's default)."""
    m = measure(kwide, kind, _domain(kind, opinfo, 4.0))
    assert m.max_rel <= MAX_REL_F32[kind], m.row()
    assert m.max_rel_vs_eager <= REQUIREMENT, m.row()
    assert m.consistency_violations == 0, m.row()


def test_opinfo_samples_present(opinfo: dict[str, torch.Tensor]) -> None:
    """The sweeps include torch's OpInfo samples; without them the other tests run on the dense
    sweeps alone, and this test says why (torch.testing._internal imports 'expecttest')."""
    assert getattr(opinfo, "error", None) is None, f"OpInfo samples unavailable ({opinfo.error}); pip install expecttest"  # type: ignore[attr-defined]
    # every smooth kind with an OpInfo entry contributes samples (guards against silent renames)
    missing = sorted(k for k in SMOOTH_KINDS if OPINFO_NAME[k] not in opinfo)
    assert missing == [], missing


@pytest.mark.parametrize("kind", SMOOTH_KINDS)
@pytest.mark.parametrize("target", ["avx2", "scalar"])
def test_other_targets_match_avx512_bitwise(kwide: Kernels, k_avx2: Kernels, opinfo: dict[str, torch.Tensor],
                                            kind: str, target: str) -> None:
    """AVX2 (W=8, Haswell target) and scalar (W=1) code computes the identical IEEE operations.

    The scalar code is the W=1 tail loop of the AVX-512 module, driven on chunks of 15.
    """
    x = _domain(kind, opinfo, 0.02 if target == "scalar" else 0.05)
    x = torch.cat([x, x[:13]])  # odd length: the vector loops end in their scalar tail
    ref = kwide.unary(kind, x)
    got = k_avx2.unary(kind, x) if target == "avx2" else kwide.unary_tail(kind, x)
    same = (ref.view(torch.int32) == got.view(torch.int32)) | (ref.isnan() & got.isnan())
    assert bool(same.all()), f"{kind}/{target}: first mismatch at x={x[~same][0].item()!r}"


@pytest.mark.slow
def test_docstring_table_is_current() -> None:
    """The table in vecmath's docstring is what measure_accuracy.py measures today."""
    import re
    import sys
    from pathlib import Path

    from ziggurat.backends.cpu import vecmath

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from measure_accuracy import f32_rows  # type: ignore[import-not-found]

    doc = vecmath.__doc__ or ""
    for m in f32_rows("avx512", list(SMOOTH_KINDS)):
        row = re.search(rf"^{m.kind}\s+.*?([0-9.]+e[-+][0-9]+)\s+([0-9.]+)\s", doc, re.M)
        assert row, m.kind
        assert float(row.group(1)) == float(f"{m.max_rel:.2e}"), m.row()
        assert float(row.group(2)) == float(f"{m.max_ulp:.2f}"), m.row()


@pytest.mark.parametrize("kind", ["sin", "cos"])
def test_trig_past_cody_waite_every_isa(kwide: Kernels, k_avx2: Kernels, kind: str) -> None:
    """Finite |x| >= 2^49 take the Payne-Hanek reduction (they were NaN): 2^18 random f32 of
    exponents 40..127 (both sides of 2^49, both signs), the largest float and 2^49 itself,
    within the bound of the smaller arguments against float64, on the vector path and the
    scalar tail of both ISAs."""
    g = torch.Generator().manual_seed(5)
    n = 1 << 18
    bits = (torch.randint(0, 1 << 23, (n,), generator=g) | (torch.randint(167, 255, (n,), generator=g) << 23)
            | (torch.randint(0, 2, (n,), generator=g) << 31)).to(torch.int32)
    x = torch.cat([bits.view(torch.float32), torch.tensor([2.0 ** 49, -(2.0 ** 49), 3.4028234663852886e38, 2.0 ** 49 - 2.0 ** 25])])
    x = torch.cat([x, x[:13]])  # a tail that is not a whole vector
    truth = (torch.sin if kind == "sin" else torch.cos)(x.double())
    for k in (kwide, k_avx2):
        got = k.unary(kind, x).double()
        err = ((got - truth).abs() / truth.abs().clamp_min(2.0 ** -20)).max().item()
        assert err <= MAX_REL_F32[kind], (kind, err)

