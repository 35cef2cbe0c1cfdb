"""Bad input at call time, data-dependent index errors, torch fallbacks, the object cache."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

import ziggurat
from tests.cpu_backend.conftest import compile_cpu
from ziggurat.ir.errors import InputError, UnsupportedOpsError


class AddRelu(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + y)


@pytest.fixture(scope="module")
def add_relu() -> torch.nn.Module:
    x, y = torch.randn(4, 17), torch.randn(4, 17)
    return compile_cpu(AddRelu(), (x, y))


def test_wrong_shape(add_relu: torch.nn.Module) -> None:
    with pytest.raises(InputError, match=r"input 0 \('x'\) has shape \(4, 18\).*compiled for \(4, 17\)"):
        add_relu(torch.randn(4, 18), torch.randn(4, 17))


def test_wrong_dtype(add_relu: torch.nn.Module) -> None:
    with pytest.raises(InputError, match="dtype torch.float64.*compiled for torch.float32"):
        add_relu(torch.randn(4, 17, dtype=torch.float64), torch.randn(4, 17))


def test_non_contiguous(add_relu: torch.nn.Module) -> None:
    """Copied to the compiled layout (tests/api/test_input_layout.py), no longer refused."""
    x, y = torch.randn(17, 4).t(), torch.randn(4, 17)
    torch.testing.assert_close(add_relu(x, y), torch.relu(x + y))


def test_other_device(add_relu: torch.nn.Module) -> None:
    meta = torch.empty(4, 17, device="meta")
    with pytest.raises(InputError, match="device meta.*runs on cpu"):
        add_relu(meta, torch.randn(4, 17))


def test_wrong_count(add_relu: torch.nn.Module) -> None:
    with pytest.raises(InputError, match="expected 2 input"):
        add_relu(torch.randn(4, 17))


def test_outputs_are_fresh(add_relu: torch.nn.Module) -> None:
    x, y = torch.randn(4, 17), torch.randn(4, 17)
    a, b = add_relu(x, y), add_relu(x, y)
    assert a.data_ptr() != b.data_ptr()
    torch.testing.assert_close(a, torch.relu(x + y))


class Lookup(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(10, 16)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids).sum(1)


def test_embedding_ids_checked() -> None:
    torch.manual_seed(0)
    model = Lookup().eval()
    ids = torch.tensor([[1, 2, 3], [9, 0, 4]])
    compiled = compile_cpu(model, (ids,))
    with torch.no_grad():
        torch.testing.assert_close(compiled(ids), model(ids))
        negative = torch.tensor([[-1, 2, 3], [9, 0, 4]])
        with pytest.raises(IndexError):  # eager raises on a negative id, and so does the native code
            model(negative)
        with pytest.raises(InputError, match=r"aten::embedding.*out of range"):
            compiled(negative)
    with pytest.raises(InputError, match=r"aten::embedding.*out of range for a dimension of size 10"):
        compiled(torch.tensor([[1, 2, 3], [10, 0, 4]]))
    # the failure leaves the module usable
    torch.testing.assert_close(compiled(ids), model(ids).detach())


class Mixed(torch.nn.Module):
    """Two ops without a native lowering between native ones."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(x) * 2
        d = torch.special.bessel_j0(y)
        return torch.linalg.det(d[:, :3] + 1).abs() + d.sum(-1)


def test_fallback_runs_torch_between_segments(caplog: pytest.LogCaptureFixture) -> None:
    x = torch.randn(3, 11)
    with caplog.at_level(logging.WARNING, logger="ziggurat"):
        compiled = ziggurat.compile(Mixed(), (x,), backend="cpu")
    assert any("aten::special_bessel_j0" in r.getMessage() and "aten::linalg_det" in r.getMessage()
               for r in caplog.records)
    torch.testing.assert_close(compiled(x), Mixed()(x))
    report = compiled.report
    assert set(report.fallback_ops) == {"aten::special_bessel_j0", "aten::linalg_det"}
    assert report.stats["native segments"] == 3  # relu*2 | bessel_j0 | slice+1 | det | abs+sum
    assert report.native_ops


def test_fallback_false_lists_every_op() -> None:
    x = torch.randn(3, 11)
    with pytest.raises(UnsupportedOpsError) as info:
        ziggurat.compile(Mixed(), (x,), backend="cpu", fallback=False)
    err = info.value
    assert [r.op for r in err.reports] == ["aten::special_bessel_j0", "aten::linalg_det"]
    assert all(r.schema and r.location for r in err.reports)
    text = str(err)
    assert "aten::linalg_det(Tensor A) -> Tensor" in text and "test_runtime_checks.py" in text


def test_corrupt_cache_entry_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    x, y = torch.randn(2, 33), torch.randn(2, 33)
    first = compile_cpu(AddRelu(), (x, y), cache_dir=tmp_path)
    assert first.report.stats["object cache hit"] is False
    entries = list(tmp_path.glob("*/*.zobj"))
    assert len(entries) == 1
    second = compile_cpu(AddRelu(), (x, y), cache_dir=tmp_path)
    assert second.report.stats["object cache hit"] is True
    data = bytearray(entries[0].read_bytes())
    data[-8:] = b"\x00" * 8
    entries[0].write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        third = ziggurat.compile(AddRelu(), (x, y), backend="cpu", cache_dir=tmp_path)
    assert third.report.stats["object cache hit"] is False
    assert any("checksum" in r.getMessage() for r in caplog.records)
    torch.testing.assert_close(third(x, y), torch.relu(x + y))
    assert compile_cpu(AddRelu(), (x, y), cache_dir=tmp_path).report.stats["object cache hit"] is True


def test_bad_isa_is_a_clear_error() -> None:
    with pytest.raises(ziggurat.ir.errors.ZigguratError, match="unknown isa 'sse9'"):  # type: ignore[attr-defined]
        compile_cpu(AddRelu(), (torch.randn(2), torch.randn(2)), isa="sse9")


def test_save_and_load(tmp_path: Path) -> None:
    from tests.support.models import ConvBNNet, randomize_bn

    torch.manual_seed(0)
    model = randomize_bn(ConvBNNet())
    x = torch.randn(1, 3, 12, 12)
    compiled = compile_cpu(model, (x,))
    path = tmp_path / "model.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)  # type: ignore[attr-defined]
    torch.testing.assert_close(loaded(x), compiled(x), rtol=0, atol=0)
    with pytest.raises(InputError):
        loaded(torch.randn(1, 3, 13, 12))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int16, torch.uint8, torch.int8])
def test_unclaimed_dtypes_run_through_torch(dtype: torch.dtype) -> None:
    """(bf16 and float16 element-wise ops are native: ``widen-half-floats``, ``test_widen_half_floats.py``.)"""
    x = (torch.randn(3, 5) * 10).to(dtype)
    compiled = compile_cpu(AddRelu(), (x, x.clone()))
    torch.testing.assert_close(compiled(x, x), torch.relu(x + x))
    assert "aten::add.Tensor" in compiled.report.fallback_ops
    assert any("not computed natively" in r for r in compiled.report.fallback_ops["aten::add.Tensor"])


def test_integer_division_by_zero_raises() -> None:
    class Div(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return torch.div(a, b, rounding_mode="floor") + torch.remainder(a, b)

    a = torch.arange(1, 20, dtype=torch.int64)
    b = torch.full((19,), 3, dtype=torch.int64)
    compiled = compile_cpu(Div(), (a, b))
    torch.testing.assert_close(compiled(a, b), Div()(a, b))
    b[17] = 0
    with pytest.raises(InputError, match="ZeroDivisionError"):
        compiled(a, b)
