"""Float16 GEMMs as bf16 GEMMs of their split operands (``split-float16-gemms``).

The reference interpreter runs the split IR on every host: with infinities, NaN, subnormals
and float16's largest values in both operands, the result must hold eager's special values
where eager has them and be within a float16 ulp of eager elsewhere (a lost ``lo`` part is
off by hundreds).  On AMX hosts the native build must do the same, on odd shapes.  The
choice (AMX hosts, ``avx512`` builds, the shapes that pay) is tested everywhere.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import ziggurat
from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.split_float16_gemms import (
    MAX_K,
    MIN_K,
    MIN_N,
    MIN_ROWS,
    float16_exact,
    pays_for,
    split_pays,
    split_weight,
)
from ziggurat.backends.passes import parse_pipeline
from ziggurat.ir import interpreter
from ziggurat.ir.importer import import_model
from ziggurat.ir.pipeline import run_pipeline

SPECIALS = (float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 65504.0, -65504.0, 2.0 ** -24, 6.1e-5, 1.0 / 3)


class Linear(nn.Module):
    def __init__(self, k: int, n: int, bias: bool, relu: bool) -> None:
        super().__init__()
        self.linear, self.relu = nn.Linear(k, n, bias=bias), relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        return torch.relu(y) if self.relu else y


def _with_specials(t: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    flat = t.detach().clone().reshape(-1)
    where = torch.randperm(flat.numel(), generator=g)[:max(1, flat.numel() // 7)]
    flat[where] = torch.tensor(SPECIALS, dtype=t.dtype)[torch.randint(len(SPECIALS), (where.numel(),), generator=g)]
    return flat.reshape(t.shape)


def _case(lead: tuple[int, ...], k: int, n: int, bias: bool = True, relu: bool = False,
          seed: int = 0) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(seed)
    model = Linear(k, n, bias, relu).half().eval()
    with torch.no_grad():
        model.linear.weight.copy_(_with_specials(model.linear.weight * 8, seed))
    return model, _with_specials(torch.randn(*lead, k) * 4, seed + 1).half()


def _assert_like_eager(actual: torch.Tensor, expected: torch.Tensor) -> None:
    special = ~torch.isfinite(expected)
    assert torch.equal(torch.isnan(actual), torch.isnan(expected)), "NaN where eager has none, or the other way"
    assert torch.equal(actual[special & ~torch.isnan(expected)], expected[special & ~torch.isnan(expected)])
    a, e = actual[~special].double(), expected[~special].double()
    ulp = torch.finfo(torch.float16).eps * e.abs().clamp_min(2.0 ** -14)
    assert bool(((a - e).abs() <= ulp).all()), f"off eager by {((a - e).abs() / ulp).max().item():.1f} ulps"


def _split_module(model: nn.Module, x: torch.Tensor):  # noqa: ANN202 - an xDSL ModuleOp
    module = import_model(model, [x])
    run_pipeline(module, parse_pipeline("graph-opt,widen-half-floats,split-float16-gemms{amx=true}"))
    return module


@pytest.mark.parametrize("shape", [((5,), 3, 4), ((2, 7), 33, 17), ((1,), 1, 1), ((9,), 130, 5)], ids=str)
def test_interpreted_split_keeps_eager_values(shape: tuple[tuple[int, ...], int, int]) -> None:
    lead, k, n = shape
    model, x = _case(lead, k, n, seed=k)
    module = _split_module(model, x)
    text = str(module)
    assert "torch.aten.cat" in text and f"xbf16>) -> tensor<{'x'.join(map(str, lead))}x{n}xf32>" in text
    with torch.no_grad():
        expected = model(x)
    _assert_like_eager(interpreter.run(module, [x])[0], expected)


def test_split_weight_blocks() -> None:
    b = torch.tensor([[1.0, float("inf")], [0.0999755859375, -2.5]])
    parts = split_weight(b).float()
    assert parts.shape == (8, 2)
    hi, lo, hi_finite, lo_again = parts.split(2)
    assert torch.equal(hi + lo, torch.tensor([[1.0, float("inf")], [0.0999755859375, -2.5]]))
    assert torch.equal(hi_finite, torch.tensor([[1.0, 0.0], [hi[1, 0].item(), -2.5]])) and torch.equal(lo, lo_again)
    assert float16_exact(b) and not float16_exact(torch.tensor([0.1]))


@pytest.mark.skipif(not split_pays(Isa.AVX512), reason="the host's bf16 GEMMs do not run on AMX")
@pytest.mark.parametrize("case", [((5,), 3, 4, True, False), ((2, 7), 33, 17, False, True), ((1,), 1, 1, True, False),
                                  ((33,), 97, 130, True, True), ((3, 2), 1024, 16, True, False)], ids=str)
def test_native_split_keeps_eager_values(case: tuple[tuple[int, ...], int, int, bool, bool]) -> None:
    lead, k, n, bias, relu = case
    model, x = _case(lead, k, n, bias, relu, seed=n)
    compiled = ziggurat.compile(model, [x], backend="cpu", float16_gemms_on_amx=True)
    loop = compiled.ir["loop"]
    assert 'bf16_kernel = "amx"' in loop and f"k = {4 * k} : i64" in loop, "not split"
    assert not compiled.report.fallback_ops
    with torch.no_grad():
        expected = model(x)
    _assert_like_eager(compiled(x), expected)


def test_choice() -> None:
    assert not split_pays(Isa.AVX2) and not split_pays(Isa.SCALAR)
    assert pays_for(512, 768, 3072) and pays_for(MIN_ROWS, MIN_K, MIN_N) and pays_for(MIN_ROWS, MAX_K, 4096)
    assert not pays_for(MIN_ROWS - 1, 768, 3072) and not pays_for(128, 768, MIN_N - 1)
    assert not pays_for(128, MIN_K - 1, 3072) and not pays_for(128, MAX_K + 1, 3072)
    model, x = _case((4,), 8, 3)
    kept = ziggurat.compile(model, [x], backend="cpu", float16_gemms_on_amx=False).ir["loop"]
    assert "bf16_kernel" not in kept


@pytest.mark.parametrize("rows", [MIN_ROWS, 8])
def test_host_choice(rows: int) -> None:
    """Without the option: split on AMX hosts where the shape pays, else the float32 kernels."""
    model, x = _case((rows,), MIN_K, MIN_N)
    loop = ziggurat.compile(model, [x], backend="cpu").ir["loop"]
    assert ('bf16_kernel = "amx"' in loop) == (split_pays(Isa.AVX512) and rows >= MIN_ROWS)


@pytest.mark.skipif(not split_pays(Isa.AVX512), reason="the host's bf16 GEMMs do not run on AMX")
def test_split_rows_of_one_lane_tails() -> None:
    """x @ I over 33-wide rows: A' is four loop nests of 33 columns, each row's last vector one
    lane.  The first column of every row but the first was 0 (fuzz seed 204, program 32: LLVM
    22 stored the last lane of the ``lo`` blocks as 4 bytes, ``test_one_lane_stores.py``)."""
    x = (torch.arange(5 * 33).reshape(5, 33) % 61 + 1).half()
    model = Linear(33, 33, bias=False, relu=False).half().eval()
    with torch.no_grad():
        model.linear.weight.copy_(torch.eye(33))
    compiled = ziggurat.compile(model, [x], backend="cpu", float16_gemms_on_amx=True, threads=1)
    assert torch.equal(compiled(x), x)
