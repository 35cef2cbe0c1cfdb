"""Inputs in another layout at call time (channels-last, transposed, expanded, sliced) are copied
to the layout the module was compiled for and counted in ``report.stats`` (they were refused);
a model whose ops read storage (``as_strided``) still needs the compiled layout, as eager's
answer depends on the strides."""

from __future__ import annotations

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import InputError

COPIED = "inputs copied to the compiled layout"
BACKENDS = ("cpu", "tensorrt-reference")


class ConvAdd(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, image: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        return self.conv(image).relu().sum((2, 3)) @ table


def _options(backend: str) -> dict[str, int]:
    return {"threads": 1} if backend == "cpu" else {"min_block_size": 1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_in_other_layouts_are_copied(backend: str) -> None:
    torch.manual_seed(0)
    model = ConvAdd().eval()
    image, table = torch.randn(2, 3, 6, 6), torch.randn(8, 5)
    compiled = ziggurat.compile(model, (image, table), backend=backend, **_options(backend))
    layouts = [
        (image.to(memory_format=torch.channels_last), torch.randn(5, 8).t()),
        (torch.randn(6, 6, 3, 2).permute(3, 2, 0, 1), torch.randn(8, 10)[:, ::2]),
        (torch.randn(1, 3, 6, 6).expand(2, 3, 6, 6), torch.randn(1, 5).expand(8, 5)),
    ]
    for i, (x, t) in enumerate(layouts, 1):
        assert not x.is_contiguous() and not t.is_contiguous()
        with torch.no_grad():
            torch.testing.assert_close(compiled(x, t), model(x, t), rtol=1e-5, atol=1e-5)
        assert compiled.report.stats[COPIED] == 2 * i
    compiled(image, table)
    assert compiled.report.stats[COPIED] == 6


class WritesInput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + 1


def test_writes_to_a_copied_input_reach_the_callers_tensor() -> None:
    compiled = ziggurat.compile(WritesInput(), (torch.randn(4, 3),), backend="cpu", frontend="export")
    x = torch.randn(3, 4).t()
    want_x, want = x.clone(), WritesInput()(x.clone())
    want_x.mul_(2)
    torch.testing.assert_close(compiled(x), want)
    torch.testing.assert_close(x, want_x)


class Strided(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x, (2, 2), (1, 2)) * 1


def test_a_model_reading_storage_keeps_its_layout() -> None:
    x = torch.randn(2, 2)
    compiled = ziggurat.compile(Strided(), (x,), backend="cpu")
    assert "ziggurat.reads_storage" in compiled.ir["torch"]
    with pytest.raises(InputError, match="not contiguous"):
        compiled(x.t())
    reference = ziggurat.compile(Strided(), (x,), backend="reference")
    y = torch.randn(2, 2).t()
    torch.testing.assert_close(reference(y), Strided()(y))  # eager's storage reads, not a copy's


class SparseProduct(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.sparse.mm(a, b)


def test_a_sparse_input_is_passed_as_it_is() -> None:
    """A sparse tensor has no strides to copy to (is_contiguous raised on it)."""
    a, b = torch.randn(3, 4).relu().to_sparse_csr(), torch.randn(4, 2)
    compiled = ziggurat.compile(SparseProduct(), (a, b), backend="reference")
    torch.testing.assert_close(compiled(a, b), torch.sparse.mm(a, b))
