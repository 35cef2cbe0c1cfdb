"""kPROD over several axes is one product in row-major order (like torch.prod), not a product
of per-axis products: those overflowed to inf before meeting a 0, NaN where eager gives -0.0
(seed 3 program 7467)."""

from __future__ import annotations

import torch

from conversion_harness import check_converts


def test_prod_of_all_meets_the_zeros_before_overflowing() -> None:
    # the first row holds the zeros: a row-major product meets them first and stays 0; the
    # product down each column of 4s is 4**64 = inf (float32) where no zero is, and inf * 0 NaN
    x = torch.full((64, 200), 4.0)
    x[0, :128] = 0.0
    x[0, 1] = -0.0
    assert x.prod().item() == 0.0
    check_converts(lambda t: (t * 1.0).prod(), [x])
