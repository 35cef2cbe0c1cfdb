"""The torch dialect's result-type verifier agrees with eager where torch's meta kernels
and its CPU kernels type a result differently."""

from __future__ import annotations

import pytest
import torch

import ziggurat


class Bags(torch.nn.Module):
    def __init__(self, mode: str) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bags = torch.nn.EmbeddingBag(10, 3, mode=mode)

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.bags(indices, offsets)


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_verifies_with_its_cpu_result_types(mode: str, frontend: str) -> None:
    """embedding_bag's max_indices has one entry per bag on the CPU but none on meta in the
    sum/mean modes; the imported IR (typed from a CPU run) was refused as not verifying."""
    indices, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
    model = Bags(mode)
    compiled = ziggurat.compile(model, (indices, offsets), backend="reference", frontend=frontend)
    other = torch.tensor([9, 0, 0, 7, 1, 1, 3, 8])
    torch.testing.assert_close(compiled(other, torch.tensor([0, 3])), model(other, torch.tensor([0, 3])))


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("shape", [(2, 5, 3, 3), (8, 5, 64, 64)], ids=["small", "large"])
def test_eval_native_batch_norm_verifies(shape: tuple[int, ...], frontend: str) -> None:
    """Its saved mean/invstd are empty on the CPU in eval mode and one per channel on meta; an
    input too large to confirm on the CPU (> 65536 elements) was refused as not verifying."""
    from tests.support.opinfo import OpModule

    g = torch.Generator().manual_seed(0)
    w, b, mean, var = (torch.randn(5, generator=g) for _ in range(4))
    var = var.abs() + 0.5

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.native_batch_norm(x, w, b, mean, var, False, 0.1, 1e-5)[0]

    x = torch.randn(*shape, generator=g)
    compiled = ziggurat.compile(OpModule(fn), (x,), backend="reference", frontend=frontend)
    torch.testing.assert_close(compiled(x), fn(x))
