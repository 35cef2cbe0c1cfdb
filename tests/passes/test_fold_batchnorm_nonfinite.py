"""fold-batchnorm with non-finite batch-norm parameters, on inputs holding NaN and inf, against
eager on every backend.

Eager computes ``y * a + (beta - mean * a)`` on the conv/linear output ``y`` with
``a = gamma / sqrt(var + eps)``.  Folded, ``a`` multiplies every weight inside the sums: an
infinite ``a`` makes ``0 * inf`` = NaN of every zero weight or input, so the folded conv gave
NaN where eager gives +-inf.  Such batch norms are not folded (the pass counts them); finite
ones still are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat

INF, NAN = float("inf"), float("nan")
CW = torch.tensor([[1.0, 0.0], [0.0, -1.0], [1.0, 1.0], [3.0, 0.5], [-2.0, 0.25]])
PARAMS = {  # running_mean, running_var, weight, bias
    "infinite_weight": ([0.5, 0.0, 1.0, 1.0, -1.0], [1.0, 0.0, 2.0, 3.0, 0.5], [INF, -INF, 2.0, 0.5, 1.0],
                        [0.0, 1.0, 1.0, 2.0, -1.0]),
    "nan_bias": ([0.5, 0.0, 1.0, 1.0, -1.0], [1.0, 0.0, 2.0, 3.0, 0.5], [0.5, 1.0, 2.0, 0.0, -2.0],
                 [0.0, NAN, 1.0, INF, -1.0]),
    "zero_variance_no_eps": ([0.5, 0.0, 1.0, 1.0, -1.0], [-1e-5, 0.0, 2.0, 3.0, 0.5], [1.0, 1.0, 2.0, 0.0, -2.0],
                             [0.0, 1.0, 1.0, 2.0, -1.0]),
    "infinite_statistics": ([INF, 0.0, 1.0, NAN, -1.0], [1.0, INF, 2.0, 3.0, 0.5], [1.0, 1.0, 2.0, 0.0, -2.0],
                            [0.0, 1.0, 1.0, 2.0, -1.0]),
    "finite": ([0.5, 0.0, 1.0, 1.0, -1.0], [1.0, 0.0, 2.0, 3.0, 0.5], [0.5, 1.0, 2.0, 0.0, -2.0],
               [0.0, 1.0, 1.0, 2.0, -1.0]),
}
X = torch.tensor([[0.0, 1.0], [2.0, -3.0], [NAN, 0.5], [INF, 1.0], [-5.0, 0.0], [0.0, -INF], [0.25, 2.0]])


def _models(params: tuple[list[float], ...]) -> dict[str, tuple[Callable[..., Any], torch.Tensor]]:
    mean, var, weight, bias = (torch.tensor(p) for p in params)
    return {
        "conv2d": (lambda t: F.batch_norm(F.conv2d(t, CW.reshape(5, 2, 1, 1)), mean, var, weight, bias),
                   X.t().reshape(1, 2, 7, 1).contiguous()),
        "linear": (lambda t: F.batch_norm(F.linear(t, CW), mean, var, weight, bias), X),
    }


class _Module(torch.nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> Any:
        return self.fn(x)


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference", "reference"])
@pytest.mark.parametrize("producer", ["conv2d", "linear"])
@pytest.mark.parametrize("case", sorted(PARAMS))
def test_fold_batchnorm_nonfinite(case: str, producer: str, backend: str) -> None:
    fn, x = _models(PARAMS[case])[producer]
    options: dict[str, Any] = {"min_block_size": 1} if backend == "tensorrt-reference" else {}
    compiled = ziggurat.compile(_Module(fn), (x,), backend=backend, frontend="torchscript", **options)
    torch.testing.assert_close(compiled(x), fn(x), rtol=1e-5, atol=1e-5, equal_nan=True)
    stats = compiled.report.pass_stats.get("fold-batchnorm", {})
    if backend != "reference":
        folded = any("folded" in key for key in stats)
        assert folded == (case == "finite"), stats
        assert ("kept: non-finite" in stats) == (case != "finite"), stats
