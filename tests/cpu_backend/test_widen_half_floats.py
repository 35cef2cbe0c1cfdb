"""bf16 and float16 ops on the CPU backend: computed natively in float32 with each result
rounded once (``widen-half-floats``), against eager's bf16 and float16 kernels.

Bit for bit, except where the float32 element functions differ from eager's: gelu's negative
tail, which eager's float32 erf computes as 0 or with a 1 % error and ours within an ulp, so
there the bound is eager's own float32 deviation: one ulp (of the 16-bit type) of the true value
or 1e-6 of the output's scale.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ziggurat

from tests.cpu_backend.conftest import compile_cpu, host_isas

Fn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

HALF_FLOATS = [torch.bfloat16, torch.float16]
#: one ulp of the 16-bit type, relative to the value (8 and 11 significant bits)
ULP = {torch.bfloat16: 2.0 ** -7, torch.float16: 2.0 ** -10}

OPS: dict[str, Fn] = {
    "add": lambda x, y: x + y,
    "sub_alpha": lambda x, y: torch.sub(x, y, alpha=0.5),
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "neg": lambda x, y: -x,
    "relu": lambda x, y: torch.relu(x),
    "silu": lambda x, y: F.silu(x),
    "sigmoid": lambda x, y: torch.sigmoid(x),
    "tanh": lambda x, y: torch.tanh(x),
    "exp": lambda x, y: torch.exp(x),
    "hardtanh": lambda x, y: F.hardtanh(x, -0.5, 0.7),
    "hardswish": lambda x, y: F.hardswish(x),
    "hardsigmoid": lambda x, y: F.hardsigmoid(x),
    "leaky_relu": lambda x, y: F.leaky_relu(x, 0.1),
    "clamp": lambda x, y: x.clamp(-0.3, 0.9),
    "softmax": lambda x, y: torch.softmax(x, -1),
    "layer_norm": lambda x, y: F.layer_norm(x, (x.shape[-1],)),
    "where": lambda x, y: torch.where(x > y, x, y),
    "compare": lambda x, y: (x <= y) | (x == 0.5),
    "chain": lambda x, y: torch.softmax(torch.sigmoid(x) * y + x, -1),
    "abs": lambda x, y: torch.abs(x),
    "relu6": lambda x, y: F.relu6(x),
    "ceil": lambda x, y: torch.ceil(x),
    "floor": lambda x, y: torch.floor(x),
    "trunc": lambda x, y: torch.trunc(x),
    "sign": lambda x, y: torch.sign(x),
    "sqrt": lambda x, y: torch.sqrt(x),
    "rsub": lambda x, y: torch.rsub(x, y, alpha=2),
    "addcmul": lambda x, y: torch.addcmul(x, x, y, value=0.5),
    "reciprocal": lambda x, y: torch.reciprocal(x),
    "square": lambda x, y: torch.square(x),
    "maximum": lambda x, y: torch.maximum(x, y),
    "minimum": lambda x, y: torch.minimum(x, y),
    "log": lambda x, y: torch.log(x.abs()),
    "exp2": lambda x, y: torch.exp2(x),
    "elu": lambda x, y: F.elu(x),
    "softplus": lambda x, y: F.softplus(x),
    "log2": lambda x, y: torch.log2(x),
    "log10": lambda x, y: torch.log10(x),
    "log1p": lambda x, y: torch.log1p(x),
    "expm1": lambda x, y: torch.expm1(x),
    "cosh": lambda x, y: torch.cosh(x),
    "sinh": lambda x, y: torch.sinh(x),
    "asin": lambda x, y: torch.asin(x / 4),
    "acos": lambda x, y: torch.acos(x / 4),
    "atan": lambda x, y: torch.atan(x),
    "atanh": lambda x, y: torch.atanh(x / 4),
    "asinh": lambda x, y: torch.asinh(x),
    "acosh": lambda x, y: torch.acosh(x),
    "erfc": lambda x, y: torch.erfc(x),
    "round": lambda x, y: torch.round(x),
    "frac": lambda x, y: torch.frac(x),
    "deg2rad": lambda x, y: torch.deg2rad(x),
    "rad2deg": lambda x, y: torch.rad2deg(x),
    "selu": lambda x, y: F.selu(x),
    "celu": lambda x, y: F.celu(x, 0.7),
    "threshold": lambda x, y: F.threshold(x, 0.1, 20.0),
    "sgn": lambda x, y: torch.sgn(x),
    "sin": lambda x, y: torch.sin(x),
    "cos": lambda x, y: torch.cos(x),
    "tan": lambda x, y: torch.tan(x),
    "fmax": lambda x, y: torch.fmax(x, y.flip(1)), "fmin": lambda x, y: torch.fmin(y, x.flip(0)),
    "predicates": lambda x, y: torch.isnan(x) | torch.isinf(y) ^ torch.isfinite(x) & torch.signbit(y) | torch.logical_not(x),
}
#: eager's float32 gelu is inaccurate in its negative tail (see the module docstring)
APPROXIMATE: dict[str, Fn] = {
    "gelu": lambda x, y: F.gelu(x),
    "gelu_tanh": lambda x, y: F.gelu(x, approximate="tanh"),
}


class Binary(nn.Module):
    def __init__(self, fn: Fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.fn(x, y)


def _inputs(seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(3, 67, generator=g) * 3).to(dtype)  # 67: a vector tail on every ISA
    y = (torch.randn(3, 67, generator=g) * 3).to(dtype)
    x[0, :5] = torch.tensor([float("inf"), float("-inf"), float("nan"), 0.0, -0.0])
    return x, y


def _compiled(fn: Fn, dtype: torch.dtype, isa: str = "auto") -> tuple[nn.Module, object]:
    model = Binary(fn)
    compiled = compile_cpu(model, _inputs(0, dtype), isa=isa)
    report = compiled.report  # pyright: ignore[reportAttributeAccessIssue]
    assert not report.fallback_ops, report.fallback_ops
    return model, compiled


def _same_bits(got: torch.Tensor, expected: torch.Tensor) -> bool:
    if expected.dtype == torch.bool:
        return torch.equal(got, expected)
    nan = got.isnan() & expected.isnan()
    return got.dtype == expected.dtype and bool(((got.view(torch.int16) == expected.view(torch.int16)) | nan).all())


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("name", sorted(OPS))
def test_widened_op_bit_exact(name: str, dtype: torch.dtype) -> None:
    model, compiled = _compiled(OPS[name], dtype)
    x, y = _inputs(1, dtype)
    assert _same_bits(compiled(x, y), model(x, y))  # pyright: ignore[reportCallIssue]


def test_softmax_over_another_dim_stays_in_torch() -> None:
    """Eager's bf16 softmax over a dim that is not the last rounds inside: not widened."""
    model = Binary(lambda x, y: torch.softmax(x, 0))
    x, y = _inputs(4, torch.bfloat16)
    compiled = compile_cpu(model, (x, y))
    assert "aten::softmax.int" in compiled.report.fallback_ops  # pyright: ignore[reportAttributeAccessIssue]
    assert _same_bits(compiled(x, y), model(x, y))  # pyright: ignore[reportCallIssue]


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("isa", host_isas())
def test_widened_chain_every_isa(isa: str, dtype: torch.dtype) -> None:
    model, compiled = _compiled(OPS["chain"], dtype, isa)
    x, y = _inputs(2, dtype)
    assert _same_bits(compiled(x, y), model(x, y))  # pyright: ignore[reportCallIssue]


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("name", sorted(APPROXIMATE))
def test_widened_gelu_within_eagers_own_error(name: str, dtype: torch.dtype) -> None:
    model, compiled = _compiled(APPROXIMATE[name], dtype)
    x, y = _inputs(3, dtype)
    x[0, :2] = 0.0  # eager's gelu of an infinity is unspecified (NaN on its vector path, inf on its tail)
    got, expected = compiled(x, y), model(x, y)  # pyright: ignore[reportCallIssue]
    exact = model(x.double(), y.double())
    finite = exact.isfinite()
    assert torch.equal(got.isnan(), expected.isnan())
    g, e = got.double()[finite], exact[finite]
    bound = e.abs() * ULP[dtype] / 2 + 1e-6 * e.abs().max()
    assert bool(((g - e).abs() <= bound).all())
    assert _same_bits(got[~finite], expected[~finite])


class GroupedNet(torch.nn.Module):
    """A depthwise 7x7 (ConvNeXt's), a GELU, a strided depthwise 3x3 without bias, a grouped
    3x3 (4 groups, ResNeXt's) with a residual, and a dense 3x3 convolution (an implicit GEMM
    on the bf16 kernels)."""

    def __init__(self) -> None:
        super().__init__()
        self.dw = torch.nn.Conv2d(24, 24, 7, padding=3, groups=24)
        self.dw2 = torch.nn.Conv2d(24, 24, 3, stride=2, groups=24, bias=False)
        self.grouped = torch.nn.Conv2d(24, 24, 3, padding=1, groups=4)
        self.pw = torch.nn.Conv2d(24, 8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw2(torch.nn.functional.gelu(self.dw(x)))
        return self.pw(torch.relu(self.grouped(y)) + y)


@pytest.mark.parametrize("dtype", HALF_FLOATS)
def test_grouped_convolutions_run_in_float32_and_round_once(dtype: torch.dtype) -> None:
    """(In float16 every convolution is widened: the dense 3x3 too.)"""
    torch.manual_seed(5)
    exact_model = GroupedNet().eval()
    model = GroupedNet().eval()
    model.load_state_dict(exact_model.state_dict())
    model = model.to(dtype)
    x = torch.randn(2, 24, 19, 23).to(dtype)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    still_torch = [r.op for r in compiled.report.unsupported]
    assert still_torch == [], compiled.report.unsupported  # the dense 3x3 is an implicit GEMM
    with torch.no_grad():
        exact = exact_model.double()(x.double())
        eager = model(x).double()
    got = compiled(x).double()
    scale = exact.abs().max()
    ours, eagers = ((got - exact).abs().max() / scale).item(), ((eager - exact).abs().max() / scale).item()
    assert ours <= max(2 * eagers, ULP[dtype]), (ours, eagers)


class Reductions(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (x.sum(-1), x.mean((1, 2)), x.sum(), F.adaptive_avg_pool2d(x, 1), F.avg_pool2d(x, 3, 2, 1),
                x.amax(0), x.amin(-1), F.max_pool2d(x, 2))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_reductions_accumulate_in_float32_and_round_once(frontend: str, dtype: torch.dtype) -> None:
    torch.manual_seed(6)
    x = (torch.randn(3, 13, 29, 31) * 4).to(dtype)
    x[0, 0, 0, 0] = -0.0
    compiled = ziggurat.compile(Reductions(), (x,), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    got, ref = compiled(x), Reductions()(x)
    for i, (g, r) in enumerate(zip(got, ref, strict=True)):
        assert g.dtype == dtype and g.shape == r.shape
        if i >= 5:  # max and min: exact
            assert torch.equal(g.view(torch.int16), r.view(torch.int16)), i
        else:  # sums in another float32 order: within one ulp of eager's
            ulp = r.float().abs() * ULP[dtype]
            assert bool(((g.float() - r.float()).abs() <= ulp).all()), i


class Indexed(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        values, indices = x.max(1)
        low, where = x.min(-1, keepdim=True)
        pooled, spots = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return values, indices, low, where, pooled, spots


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_indexed_reductions_are_exact(frontend: str, dtype: torch.dtype) -> None:
    """max/min over a dim and max_pool2d with indices on bf16 and float16: the values bit for bit, the same
    indices (ties and NaNs included)."""
    torch.manual_seed(7)
    x = torch.randint(-3, 4, (2, 5, 9, 11)).to(dtype)  # many ties
    x[0, 1, 2, 3] = float("nan")
    compiled = ziggurat.compile(Indexed(), (x,), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    for got, ref in zip(compiled(x), Indexed()(x), strict=True):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        if got.dtype == dtype:
            assert bool(((got.view(torch.int16) == ref.view(torch.int16)) | (got.isnan() & ref.isnan())).all())
        else:
            assert torch.equal(got, ref)


class Moments(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (x.var(-1), x.std((0, 2), keepdim=True), x.var(1, correction=0), x.std(),
                x.cumsum(-1), x.cumsum(0), torch.linalg.vector_norm(x, dim=-1),
                torch.linalg.vector_norm(x, 1, dim=1), torch.linalg.vector_norm(x, float("inf"), dim=(0, 2)),
                x[:, :1].var(1))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_moments_norms_and_cumsum_in_float32(frontend: str, dtype: torch.dtype) -> None:
    """var/std, vector norms and cumsum on bf16 and float16: eager computes them in float32 and rounds each
    result once, and so does the widened lowering (all native); within one ulp of eager
    (another summation order), NaN where eager's is (inf and NaN inputs, a one-element var)."""
    torch.manual_seed(8)
    x = (torch.randn(3, 13, 29) * 4).to(dtype)
    x[1, 2, 3] = float("inf")
    x[2, 5, 7] = float("nan")
    compiled = ziggurat.compile(Moments(), (x,), backend="cpu", frontend=frontend)
    assert compiled.report.unsupported == [], compiled.report.unsupported
    for i, (g, r) in enumerate(zip(compiled(x), Moments()(x), strict=True)):
        assert g.dtype == dtype and g.shape == r.shape, i
        assert torch.equal(g.isnan(), r.isnan()) and torch.equal(g.isinf(), r.isinf()), i
        finite = r.isfinite()
        ulp = r.float().abs() * ULP[dtype]
        assert bool(((g.float() - r.float()).abs()[finite] <= ulp[finite]).all()), i


class LoneBatchNorm(nn.Module):
    """A batch norm after a relu (not folded into anything), 16-bit parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(37)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(torch.relu(x))


@pytest.mark.parametrize("dtype", HALF_FLOATS)
def test_a_lone_batch_norm_is_widened(dtype: torch.dtype) -> None:
    """Eager's batch norm of a 16-bit input computes in float32 and rounds once; natively, within
    one ulp of eager's (the float32 formula may round differently)."""
    torch.manual_seed(9)
    model = LoneBatchNorm().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)  # type: ignore[union-attr]
        model.bn.running_var.uniform_(0.5, 2)  # type: ignore[union-attr]
        model.bn.weight.normal_()
        model.bn.bias.normal_()
    model = model.to(dtype)
    x = (torch.randn(2, 37, 9, 11) * 3).to(dtype)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    assert compiled.report.unsupported == [], compiled.report.unsupported
    got, ref = compiled(x), model(x)
    assert got.dtype == dtype
    assert bool(((got.float() - ref.float()).abs() <= ref.float().abs() * ULP[dtype] + 1e-6).all())


class TrainingBatchNorm(nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(torch.relu(x), None, None, w, None, True)


def test_a_training_batch_norm_is_not_widened() -> None:
    """Batch statistics in float16 were not checked against eager: it stays in torch."""
    x, w = (torch.randn(2, 5, 4, 3) * 3).half(), torch.randn(5).half()
    compiled = ziggurat.compile(TrainingBatchNorm(), (x, w), backend="cpu")
    assert [r.op for r in compiled.report.unsupported] == ["aten::batch_norm"], compiled.report.unsupported
    torch.testing.assert_close(compiled(x, w), TrainingBatchNorm()(x, w), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, *HALF_FLOATS])
def test_logsigmoid_of_large_values_is_positive_zero(dtype: torch.dtype) -> None:
    """Eager's ``min(x, 0) - log1p(exp(-|x|))`` gives ``+0`` for a large ``x``; the former
    ``-softplus(-x)`` gave ``-0`` (255,201 of 1,310,720 random float32 values had the other sign)."""
    x = torch.tensor([200.0, 1e4, 3e38, float("inf"), -3.0, 0.0, 1.0]).to(dtype)
    model = Binary(lambda a, b: F.logsigmoid(a))
    compiled = compile_cpu(model, (x, x))
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, expected = compiled(x, x), model(x, x)
    assert torch.equal(got.signbit(), expected.signbit()) and torch.allclose(got.float(), expected.float(), rtol=1e-2)
