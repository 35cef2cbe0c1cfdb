"""``count_nonzero`` and ``nll_loss`` against eager (issue 14 items 7 and 8).

``count_nonzero`` cast each element to int64 before comparing it with 0, so every float in
(-1, 1) counted as zero (a ``randn`` input came out near zero).  ``nll_loss_forward`` without
a reduction returned the weight sum as ``total_weight``, where torch leaves it 0."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import OpModule
from tests.support.sweep import each_choice


def _data(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    g = torch.Generator().manual_seed(len(shape))
    x = torch.randn(*shape, generator=g)
    x[x.abs() < 0.3] = 0.0
    if dtype == torch.float32:
        flat = x.view(-1)
        flat[: min(3, flat.numel())] = torch.tensor([0.5, -0.0, float("nan")])[: min(3, flat.numel())]
        return x
    if dtype == torch.bool:
        return x > 0
    return (x * 3).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 17), (2, 3, 5), (1, 4, 1, 33)], ids=str)
def test_count_nonzero(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    x = _data(dtype, shape)
    dims = [d for r in range(1, len(shape) + 1) for d in itertools.combinations(range(len(shape)), r)]

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        outs = [torch.count_nonzero(t)] + [torch.count_nonzero(t, dim=d) for d in dims]
        if t.dim() >= 2:  # a non-contiguous view, and a computed (lazy) input
            outs.append(torch.count_nonzero(t.transpose(0, -1), dim=0))
            outs.append(torch.count_nonzero(t.logical_not() if t.dtype == torch.bool else t * 2, dim=-1))
        return tuple(outs)

    compiled = compile_cpu(OpModule(fn), (x,), frontend="torchscript")
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_count_nonzero_isas(isa: str) -> None:
    x = torch.randn(5, 37)

    def fn(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return torch.count_nonzero(t), torch.count_nonzero(t, dim=1), torch.count_nonzero(t - 0.5, dim=0)

    compiled = compile_cpu(OpModule(fn), (x,), isa=isa)
    for got, expected in zip(compiled(x), fn(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


CLASSES = 7


def _nll_inputs(spatial: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, CLASSES, *spatial, generator=g)
    target = torch.randint(0, CLASSES, (5, *spatial), generator=g)
    target.view(-1)[::3] = 2  # the ignore_index of some cases
    return x, target, torch.rand(CLASSES, generator=g)


@each_choice("ignore_index, spatial, weighted", [-100, 2, CLASSES + 3, -1], [(), (3,), (2, 3)], [False, True],
             ids=[None, str, None])
def test_nll_loss(spatial: tuple[int, ...], ignore_index: int, weighted: bool) -> None:
    x, target, w = _nll_inputs(spatial)
    weight = w if weighted else None

    def fn(logits: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        logp = logits.log_softmax(1)
        return tuple(loss for r in ("mean", "sum", "none") for loss in (
            F.nll_loss(logp, t, weight=weight, reduction=r, ignore_index=ignore_index),
            F.cross_entropy(logits, t, weight=weight, reduction=r, ignore_index=ignore_index)))

    for frontend in ("torchscript", "export"):
        compiled = compile_cpu(OpModule(fn), (x, target), frontend=frontend)
        for got, expected in zip(compiled(x, target), fn(x, target), strict=True):
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_forward_total_weight(reduction: int) -> None:
    x, target, w = _nll_inputs(())
    logp = x.log_softmax(1)

    def fn(lp: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.ops.aten.nll_loss_forward(lp, t, w, reduction, 2)

    compiled = compile_cpu(OpModule(fn), (logp, target), frontend="torchscript")
    assert compiled.report.fallback_ops == {}
    for got, expected in zip(compiled(logp, target), fn(logp, target), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
