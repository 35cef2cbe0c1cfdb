"""Reference reduce, softmax, pooling, normalization, topk and cumulative."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from trt_builders import constant, run_layer, run_layers
from ziggurat.dialects.trt import (
    CumulativeOp,
    NormalizationOp,
    PaddingMode,
    PoolingOp,
    PoolingType,
    ReduceOp,
    ReduceOperation,
    SoftMaxOp,
    TopKOp,
    TopKOperation,
    mask_from_axes,
)

torch.manual_seed(0)


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        (ReduceOperation.kSUM, lambda x, d, k: x.sum(d, keepdim=k)),
        (ReduceOperation.kPROD, lambda x, d, k: x.prod(d[1], keepdim=True).prod(d[0], keepdim=k)),
        (ReduceOperation.kMAX, lambda x, d, k: x.amax(d, keepdim=k)),
        (ReduceOperation.kMIN, lambda x, d, k: x.amin(d, keepdim=k)),
        (ReduceOperation.kAVG, lambda x, d, k: x.mean(d, keepdim=k)),
    ],
)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce_axes_bitmask(op: ReduceOperation, fn, keep_dims: bool) -> None:  # noqa: ANN001
    x = torch.rand(2, 3, 4, 5) + 0.5
    # bitmask 0b1010 = axes 1 and 3
    y = run_layer([x], lambda v: ReduceOp(v, op, 0b1010, name="reduce", keep_dims=keep_dims).output)
    expected = fn(x, (1, 3), keep_dims)
    if op == ReduceOperation.kPROD and not keep_dims:
        expected = expected.squeeze(2)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)


def test_softmax_axis_from_bitmask() -> None:
    x = torch.randn(2, 3, 4)
    y = run_layer([x], lambda v: SoftMaxOp(v, mask_from_axes([1]), name="softmax").output)
    torch.testing.assert_close(y, F.softmax(x, dim=1))


@pytest.mark.parametrize(("padding", "stride"), [((0, 0), (2, 2)), ((1, 1), (2, 2)), ((1, 0), (1, 2))])
def test_max_pooling_pads_with_minus_infinity(padding, stride) -> None:  # noqa: ANN001
    x = torch.randn(2, 3, 7, 6) - 10.0  # all negative: zero padding would show
    y = run_layer([x], lambda v: PoolingOp(v, PoolingType.kMAX, (3, 3), name="maxpool", stride=stride,
                                           pre_padding=padding, post_padding=padding).output)
    torch.testing.assert_close(y, F.max_pool2d(x, 3, stride, padding))


@pytest.mark.parametrize("exclude", [True, False])
def test_average_pooling_count(exclude: bool) -> None:
    x = torch.randn(1, 2, 6, 6)
    y = run_layer([x], lambda v: PoolingOp(v, PoolingType.kAVERAGE, (3, 3), name="avgpool", stride=(2, 2),
                                           pre_padding=(1, 1), post_padding=(1, 1),
                                           average_count_excludes_padding=exclude).output)
    torch.testing.assert_close(y, F.avg_pool2d(x, 3, 2, 1, count_include_pad=not exclude))


def test_average_pooling_round_up_counts_overlap_with_padded_input() -> None:
    x = torch.randn(1, 1, 6, 6)
    y = run_layer([x], lambda v: PoolingOp(v, PoolingType.kAVERAGE, (3, 3), name="avgpool", stride=(2, 2),
                                           pre_padding=(1, 1), post_padding=(1, 1), average_count_excludes_padding=False,
                                           padding_mode=PaddingMode.kEXPLICIT_ROUND_UP).output)
    torch.testing.assert_close(y, F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True))


def test_max_average_blend_and_3d() -> None:
    x = torch.randn(1, 2, 4, 4, 4)
    y = run_layer([x], lambda v: PoolingOp(v, PoolingType.kMAX_AVERAGE_BLEND, (2, 2, 2), name="blend",
                                           blend_factor=0.25).output)
    expected = 0.75 * F.max_pool3d(x, 2) + 0.25 * F.avg_pool3d(x, 2)
    torch.testing.assert_close(y, expected)


def test_layer_norm() -> None:
    x = torch.randn(2, 5, 8)
    gamma, beta = torch.randn(8), torch.randn(8)
    y = run_layer([x], lambda v: NormalizationOp(v, constant(gamma.reshape(1, 1, 8), "g"),
                                                 constant(beta.reshape(1, 1, 8), "b"), 0b100, name="ln",
                                                 epsilon=1e-5).output)
    torch.testing.assert_close(y, F.layer_norm(x, (8,), gamma, beta, 1e-5), rtol=1e-4, atol=1e-5)


def test_instance_norm() -> None:
    x = torch.randn(2, 3, 4, 5)
    gamma, beta = torch.randn(3), torch.randn(3)
    y = run_layer([x], lambda v: NormalizationOp(v, constant(gamma.reshape(1, 3, 1, 1), "g"),
                                                 constant(beta.reshape(1, 3, 1, 1), "b"), 0b1100, name="in").output)
    torch.testing.assert_close(y, F.instance_norm(x, weight=gamma, bias=beta), rtol=1e-4, atol=1e-5)


def test_group_norm_with_per_group_scale() -> None:
    x = torch.randn(2, 6, 3, 3)
    gs, gb = torch.tensor([1.5, -0.5, 2.0]), torch.tensor([0.1, 0.2, 0.3])
    y = run_layer([x], lambda v: NormalizationOp(v, constant(gs.reshape(1, 3, 1, 1), "g"),
                                                 constant(gb.reshape(1, 3, 1, 1), "b"), 0b1100, name="gn",
                                                 num_groups=3).output)
    expected = F.group_norm(x, 3, eps=1e-5) * gs.repeat_interleave(2).reshape(1, 6, 1, 1) \
        + gb.repeat_interleave(2).reshape(1, 6, 1, 1)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-5)


def test_topk_values_and_int32_indices() -> None:
    x = torch.tensor([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]])
    values, indices = run_layers([x], lambda v: list(TopKOp(v, TopKOperation.kMAX, 2, 0b10, name="topk").results))
    assert values.tolist() == [[5.0, 4.0], [9.0, 6.0]]
    assert indices.dtype == torch.int32 and indices.tolist() == [[4, 2], [0, 2]]
    low, low_idx = run_layers([x], lambda v: list(TopKOp(v, TopKOperation.kMIN, 3, 0b10, name="topk").results))
    assert low.tolist() == [[1.0, 1.0, 3.0], [2.0, 3.0, 5.0]]
    assert low_idx.tolist() == [[1, 3, 0], [1, 4, 3]]


@pytest.mark.parametrize(
    ("exclusive", "reverse", "expected"),
    [(False, False, [1, 3, 6]), (True, False, [0, 1, 3]), (False, True, [6, 5, 3]), (True, True, [5, 3, 0])],
)
def test_cumulative(exclusive: bool, reverse: bool, expected: list[int]) -> None:
    x = torch.tensor([[1.0, 2.0, 3.0]])
    y = run_layer([x], lambda v: CumulativeOp(v, 1, name="cumsum", exclusive=exclusive, reverse=reverse).output)
    assert y.tolist() == [[float(e) for e in expected]]
