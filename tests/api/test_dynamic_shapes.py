"""``compile(..., dynamic_shapes=...)``: one export serves every size in the declared ranges,
checked against eager at the ends of the ranges and at odd sizes between, on every backend
that runs here; calls outside a range or breaking a relation are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import PINNED_RANGE_BUILDS, SPECIALIZED
from ziggurat.ir.errors import InputError, ZigguratError
from ziggurat.ir.shape_symbols import DimSymbol, InputDim, ShapeSymbols, evaluate

BACKENDS = ["cpu", "reference", "tensorrt-reference"]


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 32)
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, 8).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        y = self.out(a.transpose(1, 2).reshape(b, t, 32))
        return {"y": self.norm(torch.nn.functional.gelu(y) + x), "pooled": y.mean(1)}


class ConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x)))
        return self.fc(y.mean((2, 3))).flatten(1)


def _close(out: dict[str, torch.Tensor] | torch.Tensor, ref: dict[str, torch.Tensor] | torch.Tensor) -> None:
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_attention_serves_batch_and_sequence_ranges(backend: str) -> None:
    torch.manual_seed(0)
    model = Attention().eval()
    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=1, max=64)
    compiled = ziggurat.compile(model, (torch.randn(2, 16, 32),), backend,
                                example_kwargs={"mask": torch.zeros(2, 1, 16, 16)},
                                dynamic_shapes={"x": {0: batch, 1: seq}, "mask": {0: batch, 2: seq, 3: seq}})
    assert compiled.symbols.describe() == ["batch in [1, 8]: x dim 0, mask dim 0",
                                           "seq in [1, 64]: x dim 1, mask dim 2, mask dim 3"]
    for n, t in [(1, 1), (8, 64), (3, 17), (5, 2), (2, 16)]:
        x, mask = torch.randn(n, t, 32), torch.randn(n, 1, t, t)
        _close(compiled(x, mask=mask), model(x, mask=mask))
    if backend == "cpu":  # one range build for batch >= 2, seq >= its floor; (5, 2) a range build over
        # the batch for seq 2 (pinned); (1, 1) below both floors: a build of its own
        assert compiled.range_build is not None and compiled.specializations == [{"batch": 1, "seq": 1}]
        assert compiled.report.stats[PINNED_RANGE_BUILDS] == 1
    else:  # one build for the ranges (tests/tensorrt_backend/test_dynamic_profiles.py)
        assert compiled.range_build is not None and SPECIALIZED not in compiled.report.stats


def test_torch_level_is_symbolic() -> None:
    compiled = ziggurat.compile(ConvNet().eval(), (torch.randn(2, 3, 9, 9),), "reference",
                                dynamic_shapes=({0: Dim("n", min=1, max=32)},))
    text = compiled.ir["torch"]
    assert "tensor<?x3x9x9xf32>" in text and "ziggurat.shape_symbols" in text
    assert "-> tensor<?x5xf32>" in text


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_conv_net_batch_range_and_odd_image_sizes(backend: str) -> None:
    torch.manual_seed(1)
    model = ConvNet().eval()
    mean, var = model.bn.running_mean, model.bn.running_var
    assert mean is not None and var is not None
    with torch.no_grad():
        mean.uniform_(-1, 1)
        var.uniform_(0.5, 2)
    n, h = Dim("n", min=1, max=16), Dim("h", min=3, max=40)
    compiled = ziggurat.compile(model, (torch.randn(4, 3, 12, 12),), backend, dynamic_shapes=({0: n, 2: h, 3: h},))
    for b, s in [(1, 3), (16, 40), (7, 13), (2, 31)]:
        x = torch.randn(b, 3, s, s)
        _close(compiled(x), model(x))


def test_call_outside_the_range_names_input_dim_value_and_range() -> None:
    compiled = ziggurat.compile(ConvNet().eval(), (torch.randn(2, 3, 8, 8),), "reference",
                                dynamic_shapes=({0: Dim("n", min=2, max=6)},))
    with pytest.raises(InputError, match=r"input 0 \('x'\) dim 0 is 7, outside the range of 'n' \[2, 6\]"):
        compiled(torch.randn(7, 3, 8, 8))
    with pytest.raises(InputError, match=r"dim 0 is 1, outside the range of 'n' \[2, 6\]"):
        compiled(torch.randn(1, 3, 8, 8))


def test_static_dims_stay_checked() -> None:
    compiled = ziggurat.compile(ConvNet().eval(), (torch.randn(2, 3, 8, 8),), "cpu",
                                dynamic_shapes=({0: Dim("n", min=1, max=6)},))
    with pytest.raises(InputError, match=r"input 0 \('x'\) dim 2 is 9; it was compiled for 8 \(a static dim: \[n, 3, 8, 8\]\)"):
        compiled(torch.randn(3, 3, 9, 8))
    with pytest.raises(InputError, match="has rank 3"):
        compiled(torch.randn(3, 3, 8))
    with pytest.raises(InputError, match="dtype|float"):
        compiled(torch.randn(3, 3, 8, 8, dtype=torch.float64))


class TwoInputs(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x], 0) * 2 + y


def test_relations_equal_and_derived() -> None:
    d = Dim("d", min=1, max=32)
    compiled = ziggurat.compile(TwoInputs(), (torch.randn(3, 4), torch.randn(6, 4)), "cpu",
                                dynamic_shapes=({0: d}, {0: 2 * d}))
    assert compiled.symbols.describe() == ["d in [1, 32]: x dim 0, y dim 0 = 2*d"]
    x, y = torch.randn(5, 4), torch.randn(10, 4)
    _close(compiled(x, y), TwoInputs()(x, y))
    with pytest.raises(InputError, match=r"input 1 \('y'\) dim 0 is 11, but it is declared '2\*d', which is 10"):
        compiled(x, torch.randn(11, 4))

    class Add(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a + b

    same = ziggurat.compile(Add(), (torch.randn(3, 4), torch.randn(3, 4)), "reference",
                            dynamic_shapes=({0: d}, {0: d}))
    with pytest.raises(InputError, match=r"input 1 \('b'\) dim 0 is 4, but input 0 \('a'\) dim 0 is 3: both are 'd'"):
        same(torch.randn(3, 4), torch.randn(4, 4))


def test_bad_specs_are_clear_errors() -> None:
    model, x = ConvNet().eval(), (torch.randn(2, 3, 8, 8),)
    with pytest.raises(ZigguratError, match="no input named 'y'"):
        ziggurat.compile(model, x, "reference", dynamic_shapes={"y": {0: Dim("n")}})
    with pytest.raises(ZigguratError, match="is not a torch.export Dim"):
        ziggurat.compile(model, x, "reference", dynamic_shapes=({0: 5},))
    with pytest.raises(ZigguratError, match="declares no dynamic dim"):
        ziggurat.compile(model, x, "reference", dynamic_shapes=(None,))
    with pytest.raises(ZigguratError, match="derived dim"):
        d = Dim("d")
        ziggurat.compile(TwoInputs(), (torch.randn(3, 4), torch.randn(6, 4)), "reference", frontend="torchscript",
                         dynamic_shapes=({0: d}, {0: 2 * d}))
    with pytest.raises(ZigguratError, match=r"input 0 \('x'\) dim 0 is 1 in the example; torch.export fixes sizes 0 and 1"):
        ziggurat.compile(model, (torch.randn(1, 3, 8, 8),), "reference", dynamic_shapes=({0: Dim("n", min=1, max=8)},))
    with pytest.raises(ZigguratError, match="outside the declared ranges"):
        ziggurat.compile(model, x, "reference", dynamic_shapes=({0: Dim("n", min=4, max=8)},))


def test_a_dim_the_model_fixes_is_a_compile_error() -> None:
    class Fixed(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(2, -1) * 3

    with pytest.raises(ZigguratError, match="dynamic_shapes"):
        ziggurat.compile(Fixed(), (torch.randn(2, 5),), "reference", dynamic_shapes=({0: Dim("n", max=8)},))


def test_specializations_are_bounded() -> None:
    compiled = ziggurat.compile(TwoInputs(), (torch.randn(3, 4), torch.randn(6, 4)), "reference",
                                dynamic_shapes=({0: Dim("d", max=64)}, {0: 2 * Dim("d", max=64)}))
    compiled.range_build = None  # the per-size builds, as on a backend without range builds
    compiled.max_specializations = 3
    for n in range(1, 7):
        compiled(torch.randn(n, 4), torch.randn(2 * n, 4))
    assert [s["d"] for s in compiled.specializations] == [4, 5, 6]


def test_size_symbols_parse_and_check() -> None:
    symbols = ShapeSymbols((DimSymbol("b", 1, None), DimSymbol("s", 2, 10)),
                           (InputDim(0, "x", 0, "b"), InputDim(0, "x", 1, "s"), InputDim(1, "y", 0, "b*s + 1")))
    assert symbols.bind([[3, 4], [13]]) == {"b": 3, "s": 4}
    assert ShapeSymbols.from_json(symbols.to_json()) == symbols
    assert evaluate("2*(a + 3) - a//2", {"a": 5}) == 14
    with pytest.raises(ValueError):
        evaluate("a ** 2", {"a": 1})
    with pytest.raises(ValueError):
        ShapeSymbols.from_json('{"symbols": [["b", 1, null]], "dims": [[0, "x", 0, "c"]]}')
    with pytest.raises(InputError, match="outside the range of 's' \\[2, 10\\]"):
        symbols.bind([[3, 11], [34]])


def test_explain_prints_the_symbols_and_their_ranges() -> None:
    report = ziggurat.explain(Attention().eval(), (torch.randn(2, 16, 32),), "cpu",
                              example_kwargs={"mask": torch.zeros(2, 1, 16, 16)},
                              dynamic_shapes={"x": {0: Dim("batch", max=8), 1: Dim("seq", max=64)},
                                              "mask": {0: Dim("batch", max=8), 2: Dim("seq", max=64),
                                                       3: Dim("seq", max=64)}})
    text = str(report)
    assert "symbolic sizes:\n  batch in [0, 8]: x dim 0, mask dim 0\n  seq in [0, 64]: x dim 1, mask dim 2, mask dim 3" \
        in text, text
    assert "explained at batch=2, seq=16" in text


@pytest.mark.parametrize("backend", ["cpu", "tensorrt-reference"])
def test_torchscript_frontend_takes_the_same_spec(backend: str) -> None:
    """A trace fixes every size: each size tuple is traced at its first call; ranges and
    relations are checked as on the export path."""
    torch.manual_seed(2)
    model = Attention().eval()
    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=1, max=64)
    compiled = ziggurat.compile(model, (torch.randn(2, 16, 32),), backend, frontend="torchscript",
                                example_kwargs={"mask": torch.zeros(2, 1, 16, 16)},
                                dynamic_shapes={"x": {0: batch, 1: seq}, "mask": {0: batch, 2: seq, 3: seq}})
    assert compiled.report.stats[SPECIALIZED] == 1
    for n, t in [(1, 1), (8, 64), (3, 17), (2, 16)]:
        x, mask = torch.randn(n, t, 32), torch.randn(n, 1, t, t)
        _close(compiled(x, mask=mask), model(x, mask=mask))
    assert compiled.report.stats[SPECIALIZED] == 4  # (2, 16) was the example's
    with pytest.raises(InputError, match=r"input 1 \('mask'\) dim 2 is 5, but input 0 \('x'\) dim 1 is 4"):
        compiled(torch.randn(1, 4, 32), mask=torch.randn(1, 1, 5, 5))
    with pytest.raises(InputError, match=r"outside the range of 'seq' \[1, 64\]"):
        compiled(torch.randn(1, 65, 32), mask=torch.randn(1, 1, 65, 65))


class DeviceMove(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2).to(x.device).to(torch.float32) + 1


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_device_and_dtype_asserts_hold_in_every_specialization(backend: str) -> None:
    """``x.to(x.device)`` leaves ``aten._assert_tensor_metadata`` in the exported graph; a
    specialization's intermediate values are meta tensors, and the assert was read as a
    device mismatch: every size was refused (found by the fuzzer's -dyn configurations)."""
    compiled = ziggurat.compile(DeviceMove(), (torch.randn(3, 4),), backend,
                                dynamic_shapes=({0: Dim("b", min=2, max=9)},))
    for b in (2, 5, 9):
        x = torch.randn(b, 4)
        torch.testing.assert_close(compiled(x), DeviceMove()(x))


@pytest.mark.parametrize("frontend", ["export", "torchscript"])
def test_parameters_changed_after_compile_stop_a_new_size(frontend: str, tmp_path: Path) -> None:
    """A size built after compile() imports the exported program again, whose parameters are the
    model's own tensors: after ``weight.mul_(2)`` a per-size build took the new weights while the
    sizes built before kept the old ones (batch 1 is always a build of its own; the bf16
    convolutions here build every size alone).  It is now a clear error; the built sizes keep
    working.  The TorchScript frontend traces the live model again for each new size: the same.
    Saving refuses too: the file's exported program holds the tensors as they are now, which a
    size built after ``load`` would read."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 3, padding=1)).eval().bfloat16()
    x2, x1 = torch.randn(2, 16, 7, 7).bfloat16(), torch.randn(1, 16, 7, 7).bfloat16()
    compiled = ziggurat.compile(model, (x2,), backend="cpu", frontend=frontend,
                                dynamic_shapes={"input": {0: Dim("batch", min=1, max=8)}})
    before = compiled(x2)
    with torch.no_grad():
        model[0].weight.mul_(2)
    with pytest.raises(ZigguratError, match=r"0\.weight changed after compile\(\)"):
        compiled(x1)
    assert torch.equal(compiled(x2), before)
    if frontend == "export":  # a saved file's program would hold the new weights for later sizes
        with pytest.raises(ZigguratError, match=r"saving: the model's 0\.weight changed after compile\(\)"):
            compiled.save(tmp_path / "changed.zig")
        assert not (tmp_path / "changed.zig").exists()
