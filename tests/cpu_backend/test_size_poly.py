"""The exact fit of a range build's sizes (``backends/cpu/size_poly.py``): polynomials with
integer coefficients, each symbol up to degree 2, through values on a grid of sizes."""

from __future__ import annotations

import pytest

from ziggurat.backends.cpu.size_poly import SizePoly, fit_polys, grid_basis


def test_a_grid_fits_products_and_squares() -> None:
    points, basis = grid_basis([[63, 61, 59], [15, 13, 11]])
    assert len(points) == len(basis) == 9
    sizes = [lambda b, s: 3 * b * s * s + 2 * s + 7 - b, lambda b, s: b * s, lambda b, s: 768 * s, lambda b, s: 5]
    fitted = fit_polys(points, basis, [[f(*p) for p in points] for f in sizes])
    for f, poly in zip(sizes, fitted, strict=True):
        assert poly is not None
        for b in (2, 9, 40, 64):
            for s in (2, 3, 16, 384):
                assert poly.at([b, s]) == f(b, s)
    assert fitted[1] == SizePoly.of({(1, 1): 1}, 2)
    assert fitted[0] is not None and fitted[0].text(["b", "s"]) == "3*b*s^2 + 2*s - b + 7"


def test_sizes_that_are_no_such_polynomial_fit_nothing() -> None:
    points, basis = grid_basis([[63, 61, 59]])
    half, cube = fit_polys(points, basis, [[p[0] // 2 for p in points], [p[0] ** 3 for p in points]])
    assert half is None  # 31, 30, 29: slope 1/2
    # a cube through three points is some quadratic: the range build's checks elsewhere catch it
    assert cube is not None and cube.at([2]) != 8


def test_an_affine_basis_from_the_template_and_one_variant() -> None:
    points, basis = [[63, 9], [61, 9]], [(0, 0), (1, 0)]
    (poly,) = fit_polys(points, basis, [[24 * p[0] + 1 for p in points]])
    assert poly == SizePoly.of({(0, 0): 1, (1, 0): 24}, 2)
    assert poly.unit_symbol is None and SizePoly.symbol(1, 2).unit_symbol == 1
    assert poly.bounds([2, 1], [64, 9]) == (49, 1537)


def test_points_that_do_not_determine_the_fit_are_refused() -> None:
    with pytest.raises(ValueError, match="do not determine"):
        fit_polys([[3], [3]], [(0,), (1,)], [[1, 1]])
