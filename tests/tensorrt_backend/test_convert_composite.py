"""Factory, attention, RNN cell and fake-quantize converters vs eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts

torch.manual_seed(0)


FACTORIES = {
    "zeros_like": lambda x: torch.zeros_like(x) + x,
    "ones_like_int": lambda x: torch.ones_like(x, dtype=torch.int32) * 3,
    "full_like": lambda x: torch.full_like(x, 2.5) * x,
    "new_full_big": lambda x: x.new_full((5, 7), -1.0) + 1,
    "arange": lambda x: x + torch.arange(5, dtype=torch.float32),
    "arange_step": lambda x: x * torch.arange(1, 11, 2, dtype=torch.float32),
    "fill": lambda x: x.fill_(0.5) * 2,
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories(name: str) -> None:
    check_converts(FACTORIES[name], [torch.randn(3, 5)])


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal: bool) -> None:
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 6)
    check_converts(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal), [q, k, v],
                   rtol=1e-4, atol=1e-5)


def test_attention_masks_and_scale() -> None:
    q, k, v = torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 5)
    bool_mask = torch.rand(3, 4) > 0.3
    bool_mask[:, 0] = True
    check_converts(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m, scale=0.3),
                   [q, k, v, bool_mask], rtol=1e-4, atol=1e-5)
    check_converts(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m),
                   [q, k, v, torch.randn(2, 3, 4)], rtol=1e-4, atol=1e-5)


class GruCell(torch.nn.Module):
    def forward(self, x: torch.Tensor, h: torch.Tensor, wi: torch.Tensor, wh: torch.Tensor, bi: torch.Tensor,
                bh: torch.Tensor) -> torch.Tensor:
        return torch.gru_cell(x, h, wi, wh, bi, bh)


class LstmCell(torch.nn.Module):
    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor, wi: torch.Tensor, wh: torch.Tensor,
                bi: torch.Tensor, bh: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.lstm_cell(x, [h, c], wi, wh, bi, bh)


def test_rnn_cells() -> None:
    """Scripted, so that aten::gru_cell / aten::lstm_cell reach the converters (tracing decomposes them)."""
    result = check_converts(GruCell(), [torch.randn(3, 5), torch.randn(3, 4), torch.randn(12, 5), torch.randn(12, 4),
                                        torch.randn(12), torch.randn(12)], rtol=1e-4, atol=1e-5, script=True)
    assert result.report.converted["aten::gru_cell"] == 1
    result = check_converts(LstmCell(), [torch.randn(3, 5), torch.randn(3, 4), torch.randn(3, 4), torch.randn(16, 5),
                                         torch.randn(16, 4), torch.randn(16), torch.randn(16)],
                            rtol=1e-4, atol=1e-5, script=True)
    assert result.report.converted["aten::lstm_cell"] == 1
    # traced, GRUCell writes its gates in place through chunk pieces: the importer's
    # functionalization rebuilds the base with slice_scatter, which torch-canonicalize (run by
    # both TensorRT backends) reads the pieces back from, leaving no scatter to convert
    check_converts(torch.nn.GRUCell(5, 4).eval(), [torch.randn(3, 5), torch.randn(3, 4)], rtol=1e-4, atol=1e-5,
                   pre_passes="torch-canonicalize")


def test_fake_quantize() -> None:
    x = torch.randn(2, 3, 4) * 3
    check_converts(lambda t: torch.fake_quantize_per_tensor_affine(t, 0.1, 3, -128, 127), [x])
    scale = torch.tensor([0.05, 0.1, 0.2])
    zp = torch.tensor([0, 2, -3], dtype=torch.int32)
    check_converts(lambda t, s, z: torch.fake_quantize_per_channel_affine(t, s, z, 1, -128, 127), [x, scale, zp])
