"""Odd sizes (vector tails), broadcasting and every claimed dtype, under all ISAs.

Claimed dtypes: float32 for every op; int64 and int32 for integer arithmetic, comparisons,
min/max, integer division/remainder, reductions (sum/prod/max/min/argmax); bool for
comparisons, logic, masks, where, any/all.  Other dtypes run through torch.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule

SIZES = (1, 3, 17, 1023)


def _run(fn: Callable[..., torch.Tensor], inputs: tuple[torch.Tensor, ...], isa: str, rtol: float = 1e-5,
         atol: float = 1e-6) -> None:
    model = OpModule(fn)
    compiled = compile_cpu(model, inputs, isa=isa)
    expected = fn(*inputs)
    actual = compiled(*inputs)
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops


FLOAT_FNS: dict[str, Callable[..., torch.Tensor]] = {
    "add_relu_broadcast": lambda x, y: torch.relu(x + y),
    "sigmoid_mul": lambda x, y: torch.sigmoid(x) * y,
    "where_gt": lambda x, y: torch.where(x > 0, x, y * 2),
    "gelu_tanh_exp": lambda x, y: torch.nn.functional.gelu(x) + torch.tanh(y) * torch.exp(-x.abs()),
    "clamp_div": lambda x, y: torch.clamp(x / (y.abs() + 1), -0.5, 0.5),
    "pow_log": lambda x, y: torch.pow(x.abs() + 1, 2.5) + torch.log1p(y.abs()),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", list(FLOAT_FNS))
def test_float_elementwise(name: str, n: int, isa: str) -> None:
    torch.manual_seed(n)
    x, y = torch.randn(n), torch.randn(3, n)
    _run(FLOAT_FNS[name], (x, y), isa)


INT_FNS: dict[str, Callable[..., torch.Tensor]] = {
    "arith": lambda x, y: x * 3 + y - 7,
    "floordiv_mod": lambda x, y: torch.div(x, 3, rounding_mode="floor") + torch.remainder(y, 5),
    "max_min": lambda x, y: torch.maximum(x, y) - torch.minimum(x, y),
    "compare_select": lambda x, y: torch.where(x > y, x, y * 2),
    "int_to_float": lambda x, y: (x.float() / 3.0 + y).to(x.dtype),
}


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("n", (3, 17, 1023))
@pytest.mark.parametrize("name", list(INT_FNS))
def test_integer_elementwise(name: str, n: int, dtype: torch.dtype, isa: str) -> None:
    gen = torch.Generator().manual_seed(n)
    x = torch.randint(-50, 50, (n,), generator=gen, dtype=dtype)
    y = torch.randint(-50, 50, (2, n), generator=gen, dtype=dtype)
    _run(INT_FNS[name], (x, y), isa)


BOOL_FNS: dict[str, Callable[..., torch.Tensor]] = {
    "logic": lambda a, b: (a & ~b) | (b ^ a),
    "mask_where": lambda a, b: torch.where(a, b.float() * 2, torch.ones(()) * -1),
    "any_all": lambda a, b: torch.stack([a.any(-1), b.all(-1), (a | b).any(-1)]),
    "bool_sum": lambda a, b: a.sum(-1) + b.to(torch.int64).sum(-1),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", list(BOOL_FNS))
def test_bool(name: str, n: int, isa: str) -> None:
    gen = torch.Generator().manual_seed(n)
    a = torch.rand(4, n, generator=gen) > 0.5
    b = torch.rand(4, n, generator=gen) > 0.3
    _run(BOOL_FNS[name], (a, b), isa)


REDUCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sum_last": lambda x: x.sum(-1),
    "mean_first": lambda x: x.mean(0),
    "amax_amin": lambda x: x.amax(-1) - x.amin(0).sum(),
    "argmax_argmin": lambda x: torch.stack([x.argmax(-1), x.argmin(0)[:1].expand(x.shape[0])]),
    "var_std": lambda x: x.var(-1) + x.std(0).mean(),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
    "norm": lambda x: torch.linalg.vector_norm(x, dim=-1) + x.norm(p=1),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions(name: str, n: int, isa: str) -> None:
    torch.manual_seed(n)
    x = torch.randn(5, n)
    if name == "var_std" and n == 1:
        pytest.skip("variance of one element is NaN (tested by OpInfo)")
    _run(REDUCTIONS[name], (x,), isa, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("n", (3, 17, 1023))
def test_integer_reductions(n: int, dtype: torch.dtype, isa: str) -> None:
    gen = torch.Generator().manual_seed(n)
    x = torch.randint(-9, 9, (3, n), generator=gen, dtype=dtype)
    _run(lambda t: torch.stack([t.sum(-1), t.amax(-1), t.amin(-1), t.argmax(-1), (t % 3 + 1).prod(-1) % 1000]),
         (x,), isa)


NORMS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax_dim0": lambda x: torch.log_softmax(x, 0),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, (x.shape[-1],), torch.linspace(0.5, 1.5, x.shape[-1]),
                                                           torch.linspace(-1, 1, x.shape[-1])),
    "cumsum": lambda x: torch.cumsum(x, -1) + torch.cumsum(x, 0),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", list(NORMS))
def test_rows(name: str, n: int, isa: str) -> None:
    torch.manual_seed(n)
    _run(NORMS[name], (torch.randn(6, n) * 3,), isa, rtol=1e-4, atol=1e-5)


def test_casts(isa: str) -> None:
    x = torch.tensor([-2.7, -0.5, 0.0, 0.4, 1.5, 3.9, 1e3, float("nan")])
    _run(lambda t: torch.stack([t.to(torch.int64).to(torch.float32).nan_to_num(), t.to(torch.bool).float(),
                                (t > 0).to(torch.int32).float(), t.round(), t.trunc().nan_to_num()]),
         (x,), isa)


def test_data_movement(isa: str) -> None:
    x = torch.randn(2, 3, 5, 7)
    fn = lambda t: torch.cat([t.permute(0, 2, 1, 3).reshape(2, 5, 21),  # noqa: E731
                              t.flip(-1)[:, :, ::2].permute(0, 2, 1, 3).reshape(2, 3, 21)], 1).transpose(1, 2)[:, 1:20:3]
    _run(fn, (x,), isa)
