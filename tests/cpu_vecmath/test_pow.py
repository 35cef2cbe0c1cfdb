"""pow(x, y) with tensor exponents: accuracy over a wide grid and C99/torch special cases."""

from __future__ import annotations

import itertools
import math

import torch

from .bounds import MAX_REL_POW_F32
from .harness import Kernels
from .references import pow_grid, rel_err

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -2.5, math.inf, -math.inf, math.nan,
           2.0 ** -149, -(2.0 ** -149), 1e10, -1e10, 16777217.0, -16777215.0, 1e-10]


def test_accuracy_wide_grid(kwide: Kernels) -> None:
    x, y = pow_grid()
    got = kwide.binary("pow", x, y)
    truth = torch.pow(x.double(), y.double())
    err = rel_err(got, truth)
    i = int(err.argmax())
    assert float(err[i]) <= MAX_REL_POW_F32, (x[i].item(), y[i].item(), got[i].item(), truth[i].item())


def test_special_cases_match_eager(kwide: Kernels) -> None:
    pairs = list(itertools.product(SPECIAL, SPECIAL))
    x = torch.tensor([p[0] for p in pairs], dtype=torch.float32)
    y = torch.tensor([p[1] for p in pairs], dtype=torch.float32)
    got, eager = kwide.binary("pow", x, y), torch.pow(x, y)
    truth = torch.pow(x.double(), y.double())
    for xi, yi, o, e, t in zip(x.tolist(), y.tolist(), got.tolist(), eager.tolist(), truth.tolist()):
        if math.isnan(e) or math.isinf(e) or e == 0.0:
            same = (math.isnan(o) and math.isnan(e)) or (o == e and math.copysign(1, o) == math.copysign(1, e))
            assert same, f"pow({xi!r}, {yi!r}) = {o!r}, eager {e!r}"
        else:
            assert abs(o - t) <= 1e-6 * max(abs(t), 2.0 ** -126), f"pow({xi!r}, {yi!r}) = {o!r}, truth {t!r}"


def test_avx2_and_scalar_match_avx512(kwide: Kernels, k_avx2: Kernels) -> None:
    x, y = pow_grid()
    x, y = x[:20001].contiguous(), y[:20001].contiguous()
    a, b = kwide.binary("pow", x, y), k_avx2.binary("pow", x, y)
    assert bool(((a.view(torch.int32) == b.view(torch.int32)) | (a.isnan() & b.isnan())).all())
