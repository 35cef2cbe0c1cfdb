"""Reduction, statistics, norm, top-k, cumsum and softmax converters vs eager."""

from __future__ import annotations

import math

import pytest
import torch

from conversion_harness import check_converts

torch.manual_seed(0)
X = torch.randn(2, 3, 4)

CASES = {
    "sum": lambda x: x.sum(),
    "sum_dims": lambda x: x.sum((0, 2), keepdim=True),
    "sum_dtype": lambda x: (x > 0).sum(1),
    "mean": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(-1),
    "prod": lambda x: x.prod(1),
    "prod_all": lambda x: (x.abs() + 0.5).prod(),
    "max_all": lambda x: x.max(),
    "min_all": lambda x: x.min(),
    "amax": lambda x: x.amax((1, 2)),
    "amin": lambda x: x.amin(0, keepdim=True),
    "max_dim": lambda x: x.max(1),
    "min_dim_keep": lambda x: x.min(2, keepdim=True),
    "max_dim_values": lambda x: x.max(1).values * 2,
    "argmax": lambda x: x.argmax(),
    "argmin_dim": lambda x: x.argmin(1, keepdim=True),
    "any_all": lambda x: (x > 1).any(1).logical_and((x > -3).all()),
    "any_dims": lambda x: torch.any(x > 0.5, dim=(0, 2)),
    "all_int": lambda x: (x > 0).to(torch.int32).all(2),
    "topk": lambda x: torch.topk(x, 2, dim=1),
    "topk_smallest": lambda x: torch.topk(x, 3, largest=False),
    "cumsum": lambda x: torch.cumsum(x, 1),
    "cumsum_int": lambda x: torch.cumsum((x > 0).to(torch.int32), -1),
    "softmax": lambda x: torch.softmax(x, -1),
    "log_softmax": lambda x: torch.log_softmax(x, 1),
    "var": lambda x: x.var(),
    "var_dim": lambda x: x.var(1, unbiased=False, keepdim=True),
    "std": lambda x: x.std((0, 2)),
    "std_correction": lambda x: torch.std(x, dim=1, correction=0),
    "norm": lambda x: x.norm(),
    "norm_p1_dim": lambda x: torch.norm(x, p=1, dim=2),
    "norm_p3": lambda x: torch.norm(x, p=3, dim=(0, 1)),
    "norm_inf": lambda x: torch.linalg.vector_norm(x, ord=math.inf, dim=1),
    "norm_zero": lambda x: torch.linalg.vector_norm(x.round(), ord=0),
    "linalg_norm_vector": lambda x: torch.linalg.norm(x, dim=2),
    "frobenius": lambda x: torch.linalg.norm(x[0], "fro"),
    "frobenius_dim": lambda x: torch.norm(x, p="fro", dim=(1, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction(name: str) -> None:
    check_converts(CASES[name], [X.clone()], rtol=1e-4, atol=1e-5)
