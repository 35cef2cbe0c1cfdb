"""bf16 and float16 ``scaled_dot_product_attention`` as accurate as eager's: float32 scores and
softmax (eager's math path: q, k, v widened and the output rounded once; its flash kernel's
shapes: ``exp(s - max)`` rounded to the 16-bit type for the product with v).

The decomposition rounded the scores to bf16 before the softmax: with scores of a few tens its
results were 5-13x farther from float64 than eager's, which every case here catches.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ziggurat
from ziggurat.backends.cpu.kernels import amx

#: (q shape, keys): 4-D of equal batch and heads take eager's flash kernel, 3-D its math path
SHAPES = [((2, 4, 20, 32), 23), ((4, 20, 32), 20), ((1, 2, 70, 64), 600)]


class Attention(nn.Module):
    def __init__(self, causal: bool) -> None:
        super().__init__()
        self.causal = causal

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)


def _inputs(shape: tuple[int, ...], keys: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    kv = (*shape[:-2], keys, shape[-1])
    # scores of a few tens: a bf16 score is then a sizeable fraction of an ulp of exp's argument
    q, k = (torch.randn(s, generator=g) * 4 for s in (shape, kv))
    return q.to(dtype), k.to(dtype), torch.randn(kv, generator=g).to(dtype)


def _errors(model: nn.Module, inputs: tuple[torch.Tensor, ...], isa: str = "auto") -> tuple[torch.Tensor, torch.Tensor, float, float]:
    compiled = ziggurat.compile(model, inputs, backend="cpu", isa=isa)
    if isa == "auto":
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops
        if inputs[0].dtype == torch.bfloat16 and amx.host_bf16_kernel() is not None:
            # the bf16 kernels with a float32 result (``widen-half-floats``) take the scores, and
            # p @ v, on the flash shapes; the math path's scores are the product of q and k
            # scaled in float32 (eager's), and its p is float32: float32 GEMMs
            want = 2 if inputs[0].dim() == 4 else 0
            assert compiled.ir["graph"].count("bf16_kernel") == want, compiled.ir["graph"]
    got = compiled(*inputs)
    with torch.no_grad():
        eager = model(*inputs)
        exact = model(*(t.double() if t.is_floating_point() else t for t in inputs))
    assert got.dtype == eager.dtype and got.shape == eager.shape
    ours = (got.double() - exact).abs().max().item()
    theirs = (eager.double() - exact).abs().max().item()
    return got, eager, ours, theirs


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape,keys", SHAPES, ids=["flash", "math", "flash-600-keys"])
def test_as_close_to_float64_as_eager(shape: tuple[int, ...], keys: int, causal: bool, dtype: torch.dtype) -> None:
    got, eager, ours, theirs = _errors(Attention(causal), _inputs(shape, keys, dtype, 0))
    assert ours <= 1.25 * theirs, (ours, theirs)
    if len(shape) == 3:  # eager's math path: float32 throughout, one rounding
        assert (got.float() - eager.float()).abs().max().item() <= 2.0 ** -7 * eager.float().abs().max().item()
    elif dtype == torch.bfloat16:  # eager's bits for most outputs (its exp is not ours)
        assert (got == eager).float().mean().item() >= 0.97


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("shape,keys", SHAPES[:2], ids=["flash", "math"])
def test_boolean_mask_and_fully_masked_row(shape: tuple[int, ...], keys: int, dtype: torch.dtype) -> None:
    q, k, v = _inputs(shape, keys, dtype, 1)
    mask = torch.rand(shape[-2], keys, generator=torch.Generator().manual_seed(2)) > 0.4
    mask[:, 0] = True
    mask[3] = False  # a query that attends to nothing gives 0, as eager's
    got, eager, ours, theirs = _errors(Attention(False), (q, k, v, mask))
    assert ours <= 1.25 * theirs, (ours, theirs)
    assert torch.equal(got[..., 3, :], torch.zeros_like(got[..., 3, :]))
    assert torch.equal(eager[..., 3, :], torch.zeros_like(eager[..., 3, :]))


@pytest.mark.parametrize("shape,keys", SHAPES[:2], ids=["flash", "math"])
def test_bf16_products_without_a_bf16_kernel(shape: tuple[int, ...], keys: int) -> None:
    """On the avx2 ISA no bf16 kernel takes the products: they run in torch as the
    interpreter reads a bf16 ``fused.matmul`` with a float32 result (``a.float() @ b.float()``),
    and the numbers stay eager's."""
    _, _, ours, theirs = _errors(Attention(False), _inputs(shape, keys, torch.bfloat16, 3), isa="avx2")
    assert ours <= 1.25 * theirs, (ours, theirs)


NON_FINITE = {"nan_key": (1, (2, 3), float("nan")), "inf_key": (1, (1, 0), float("inf")),
              "neg_inf_query": (0, (0, 0), float("-inf")), "nan_value": (2, (3, 1), float("nan")),
              "inf_value": (2, (0, 2), float("inf"))}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", [(1, 2, 5, 8), (2, 5, 8)], ids=["flash", "math"])
@pytest.mark.parametrize("what", sorted(NON_FINITE))
def test_non_finite_values_as_eager(what: str, shape: tuple[int, ...], causal: bool, dtype: torch.dtype) -> None:
    """A NaN or infinity in q, k or v: NaN and infinities where eager's are (``exp(s - max)``
    of an infinite score is NaN in both), the finite outputs within an ulp."""
    g = torch.Generator().manual_seed(4)
    inputs = [torch.randn(shape, generator=g).to(dtype) for _ in range(3)]
    which, (row, col), value = NON_FINITE[what]
    inputs[which][..., row, col] = value
    model = Attention(causal)
    compiled = ziggurat.compile(model, tuple(inputs), backend="cpu")
    assert not compiled.report.fallback_ops, compiled.report.fallback_ops
    got, expected = compiled(*inputs), model(*inputs)
    assert torch.equal(got.isnan(), expected.isnan()) and torch.equal(got.isinf(), expected.isinf())
    finite = expected.isfinite()
    torch.testing.assert_close(got[finite].float(), expected[finite].float(), rtol=2 ** -6, atol=2 ** -8)

