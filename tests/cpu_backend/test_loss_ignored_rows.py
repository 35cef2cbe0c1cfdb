"""nll_loss and cross_entropy with ``ignore_index`` where ignored rows hold NaN or
infinities, on every ISA, against eager (fuzz program s1_g355).

Eager skips an ignored element: its loss is exactly 0 and it adds nothing to the sum or to
the total weight.  The lowering multiplied it by a weight of 0, and ``0 * NaN`` / ``0 * inf``
made it (and every reduction over it) NaN.  Cases: reductions none/mean/sum, class weights
(one infinite), [N, C] and [N, C, H, W] inputs, a NaN or infinite logit in a row that counts
(NaN as in eager), every row ignored (mean: 0 / 0 = NaN as in eager), label smoothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

INF, NAN = float("inf"), float("nan")
IGNORE = 1


def _logits(shape: tuple[int, ...]) -> torch.Tensor:
    """Logits whose ignored rows (target IGNORE, see _targets) hold NaN, inf and -inf."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(3))
    x[0, 0] = NAN
    x[1, 2] = INF
    x[2, 1] = -INF
    return x


def _targets(shape: tuple[int, ...]) -> torch.Tensor:
    t = torch.randint(0, 4, shape, generator=torch.Generator().manual_seed(4))
    t[0] = IGNORE  # the rows (or [H, W] maps) holding NaN / inf are ignored
    t[1] = IGNORE
    t[2] = IGNORE
    return t


def _check(fn: Callable[..., Any], inputs: list[torch.Tensor], isa: str) -> None:
    compiled = compile_cpu(OpModule(fn), tuple(inputs), isa=isa, frontend="torchscript")
    got, expected = compiled(*inputs), fn(*inputs)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


WEIGHT = torch.tensor([0.5, INF, 2.0, 1.0])  # the ignored class's weight is infinite

LOSSES: dict[str, Callable[..., Any]] = {
    "nll": lambda x, t, r: F.nll_loss(torch.log_softmax(x, 1), t, ignore_index=IGNORE, reduction=r),
    "nll_weight": lambda x, t, r: F.nll_loss(torch.log_softmax(x, 1), t, WEIGHT, ignore_index=IGNORE, reduction=r),
    "nll_raw": lambda x, t, r: F.nll_loss(x, t, ignore_index=IGNORE, reduction=r),
    "cross_entropy": lambda x, t, r: F.cross_entropy(x, t, ignore_index=IGNORE, reduction=r),
    "cross_entropy_weight": lambda x, t, r: F.cross_entropy(x, t, WEIGHT, ignore_index=IGNORE, reduction=r),
    "cross_entropy_smoothing": lambda x, t, r: F.cross_entropy(x, t, ignore_index=IGNORE, reduction=r,
                                                               label_smoothing=0.2),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(7, 4), (5, 4, 3, 17)], ids=["NC", "NCHW"])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_ignored_rows_with_nan_and_inf(isa: str, loss: str, shape: tuple[int, ...], reduction: str) -> None:
    fn = LOSSES[loss]
    target_shape = (shape[0], *shape[2:])
    _check(lambda x, t: fn(x, t, reduction), [_logits(shape), _targets(target_shape)], isa)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_counted_row_with_nan(isa: str, reduction: str) -> None:
    """A NaN in a row that counts stays NaN."""
    x = _logits((7, 4))
    t = _targets((7,))
    t[0] = 3
    _check(lambda a, b: F.cross_entropy(a, b, ignore_index=IGNORE, reduction=reduction), [x, t], isa)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_every_row_ignored(isa: str, reduction: str) -> None:
    x = _logits((7, 4))
    t = torch.full((7,), IGNORE)
    _check(lambda a, b: F.nll_loss(a, b, WEIGHT, ignore_index=IGNORE, reduction=reduction), [x, t], isa)
    _check(lambda a, b: F.cross_entropy(a, b, ignore_index=IGNORE, reduction=reduction), [x, t], isa)
