"""The polynomial tables are what tools/vecmath_fit.py derives, exactly representable, and as accurate as claimed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ziggurat.backends.cpu.vecmath import coeffs as K
from ziggurat.tools import vecmath_fit as fit
from ziggurat.backends.cpu.vecmath.builder import f32_round

COEFFS_PY = Path(K.__file__).read_text()


def _claimed_error(name: str) -> float:
    m = re.search(rf"max rel err of P part: ([0-9.e+-]+)\n{name}:", COEFFS_PY)
    assert m, name
    return float(m.group(1))


@pytest.mark.parametrize("spec", fit.specs(), ids=lambda s: s.name)
def test_table_matches_spec_and_claim(spec: fit.PolySpec) -> None:
    coeffs = getattr(K, spec.name)
    assert len(coeffs) == spec.degree + 1
    if spec.fmt == "f32":
        assert all(f32_round(c) == c for c in coeffs), "coefficients must be exact f32 values"
    claimed = _claimed_error(spec.name)
    # an independent grid (different size from the one used when fitting)
    measured = fit.check(spec, coeffs, n=333)
    assert measured <= claimed * 1.01
    assert claimed < (2.0 ** -26 if spec.fmt == "f32" else 2.0 ** -55)  # well below half an ulp


def test_constants_are_correct_splits() -> None:
    import mpmath as mp

    mp.mp.dps = 50
    for name, _doc, parts in fit.constants():
        assert tuple(getattr(K, name)) == tuple(parts)
    hi, lo = K.LN2_F32
    assert abs(mp.mpf(hi) + mp.mpf(lo) - mp.log(2)) < mp.mpf(2) ** -50


@pytest.mark.slow
def test_regeneration_is_reproducible() -> None:
    for spec in fit.specs():
        coeffs, _ = fit.fit(spec)
        assert tuple(coeffs) == tuple(getattr(K, spec.name)), spec.name
