"""Normalizations with NaN and infinite inputs, weights, biases and running statistics, on
every ISA, against eager (fuzz programs s1_g46 and s1_g699).

Eager's batch, instance and group norm kernels compute ``x * a + (bias - mean * a)`` with
``a = rstd * weight``, layer norm ``(x - mean) * rstd * weight + bias``.  The two agree on
finite values only: with an infinite weight the first is NaN wherever ``x`` or the mean is 0
or their signs differ, the second is +-inf except where ``x == mean``.  The lowering used the
second form for every norm.  The shapes leave vector tails (7 and 37 elements per channel);
the parameters are constants or inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

INF, NAN = float("inf"), float("nan")
C = 5
WEIGHT = torch.tensor([INF, -INF, NAN, 0.0, 2.0])
BIAS = torch.tensor([0.0, INF, 1.0, NAN, -1.0])
MEAN = torch.tensor([0.5, 0.0, INF, 1.0, -1.0])
VAR = torch.tensor([1.0, 0.0, 2.0, INF, -1e-5])  # var + eps == 0 in the last channel


def _input(spatial: int, seed: int = 0) -> torch.Tensor:
    """[2, C, spatial]: a constant instance (``x == mean``), an instance of zeros (``x`` and
    the mean 0), an infinity and a NaN; the other values normal, so that no mean is near 0
    and no element near its row's mean (there an infinite weight turns eager's rounding of
    the mean, a Welford accumulation for group and layer norm, into inf or NaN)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, C, spatial, generator=g) + 0.25
    x[0, 1] = 0.5
    x[0, 3] = 0.0
    x[1, 2, 0] = INF
    x[1, 4, spatial - 1] = NAN
    return x


def _same(got: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)
    zeros = (got == 0) & (expected == 0)
    assert torch.equal(got[zeros].signbit(), expected[zeros].signbit()), "a zero of the wrong sign"


def _check(fn: Callable[..., Any], inputs: list[torch.Tensor], isa: str, frontend: str = "torchscript") -> Any:
    compiled = compile_cpu(OpModule(fn), tuple(inputs), isa=isa, frontend=frontend)
    got, expected = compiled(*inputs), fn(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected, strict=True):
        _same(g, e)
    return compiled


NORMS: dict[str, Callable[..., Any]] = {
    "group_norm_per_channel": lambda x: F.group_norm(x, C, WEIGHT, BIAS),
    "group_norm_one_group_weight": lambda x: F.group_norm(x, 1, WEIGHT),
    "group_norm_bias_only": lambda x: F.group_norm(x, C, None, BIAS),
    "group_norm_plain": lambda x: F.group_norm(x, 1),
    "instance_norm": lambda x: F.instance_norm(x, weight=WEIGHT, bias=BIAS),
    "instance_norm_weight": lambda x: F.instance_norm(x, weight=WEIGHT),
    "instance_norm_running": lambda x: F.instance_norm(x, MEAN, VAR, WEIGHT, BIAS, use_input_stats=False),
    "batch_norm_eval": lambda x: F.batch_norm(x, MEAN, VAR, WEIGHT, BIAS),
    "batch_norm_eval_4d": lambda x: F.batch_norm(x.reshape(2, C, -1, 1), MEAN, VAR, WEIGHT, BIAS),
    "batch_norm_eval_2d": lambda x: F.batch_norm(x[:, :, 0] * 1.0, MEAN, VAR, WEIGHT, BIAS),
    "batch_norm_eval_no_affine": lambda x: F.batch_norm(x, MEAN, VAR),
    "batch_norm_train": lambda x: F.batch_norm(x, None, None, WEIGHT, BIAS, training=True),
    "native_batch_norm_train": lambda x: torch.native_batch_norm(x, WEIGHT, BIAS, None, None, True, 0.1, 1e-5),
    "layer_norm": lambda x: F.layer_norm(x.transpose(1, 2), (C,), WEIGHT, BIAS),
    "layer_norm_weight": lambda x: F.layer_norm(x.transpose(1, 2), (C,), WEIGHT),
    "rms_norm": lambda x: F.rms_norm(x.transpose(1, 2), (C,), WEIGHT),
    "native_layer_norm_out": lambda x: torch.native_layer_norm(x.transpose(1, 2), [C], WEIGHT, BIAS, 1e-5)[0],
    "native_group_norm_out": lambda x: torch.native_group_norm(x, WEIGHT, BIAS, 2, C, x.shape[2], 5, 1e-5)[0],
}


@pytest.mark.parametrize("spatial", [7, 37])
@pytest.mark.parametrize("case", sorted(NORMS))
def test_norm_special_parameters(isa: str, case: str, spatial: int) -> None:
    _check(NORMS[case], [_input(spatial)], isa)


@pytest.mark.parametrize("case", ["group_norm", "instance_norm", "batch_norm_eval", "batch_norm_train"])
def test_norm_parameters_as_inputs(isa: str, case: str) -> None:
    """The same with weight, bias and running statistics read at run time (export frontend)."""
    fns: dict[str, Callable[..., Any]] = {
        "group_norm": lambda x, w, b, m, v: F.group_norm(x, C, w, b),
        "instance_norm": lambda x, w, b, m, v: F.instance_norm(x, weight=w, bias=b),
        "batch_norm_eval": lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b),
        "batch_norm_train": lambda x, w, b, m, v: F.batch_norm(x, None, None, w, b, training=True),
    }
    _check(fns[case], [_input(7), WEIGHT, BIAS, MEAN, VAR], isa, frontend="export")


def test_native_norm_means_run_in_torch() -> None:
    """Eager accumulates native_layer_norm's / native_group_norm's mean with a vectorized
    Welford cascade: a row holding an infinity gives NaN or inf by position and vector width.
    Those outputs run in torch (the report says why); the rest stays native."""
    x = _input(37)
    x[0, 0, 36] = INF  # an infinity as the last element: Welford's mean stays inf there

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        ln = torch.native_layer_norm(t, [37], None, None, 1e-5)
        gn = torch.native_group_norm(t, WEIGHT, BIAS, 2, C, 37, 5, 1e-5)
        return (*ln, *gn)

    compiled = _check(fn, [x], "avx2")
    reasons = compiled.report.fallback_ops
    assert "Welford" in " ".join(reasons["aten::native_layer_norm"]), reasons
    assert "Welford" in " ".join(reasons["aten::native_group_norm"]), reasons
