"""Reference convolution, deconvolution, matrix multiply and einsum against torch compositions."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from trt_builders import constant, run_layer
from ziggurat.dialects.trt import (
    ConvolutionOp,
    DeconvolutionOp,
    EinsumOp,
    MatrixMultiplyOp,
    MatrixOperation,
    PaddingMode,
)

torch.manual_seed(0)


@pytest.mark.parametrize(
    ("stride", "padding", "dilation", "groups"),
    [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 2), (2, 1), (2, 1), 3), ((3, 3), (1, 1), (2, 2), 6)],
)
def test_convolution_2d_matches_symmetric_torch_conv(stride, padding, dilation, groups) -> None:  # noqa: ANN001
    x = torch.randn(2, 6, 11, 10)
    w = torch.randn(12, 6 // groups, 3, 2)
    b = torch.randn(12)

    def body(v):  # noqa: ANN001, ANN202
        return ConvolutionOp(v, constant(w, "w"), constant(b, "b"), name="conv", stride=stride,
                             pre_padding=padding, post_padding=padding, dilation=dilation, num_groups=groups).output

    y = run_layer([x], body)
    expected = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)


def test_convolution_asymmetric_padding_is_pre_then_post() -> None:
    x = torch.randn(1, 2, 5, 6)
    w = torch.randn(3, 2, 3, 3)
    y = run_layer([x], lambda v: ConvolutionOp(v, constant(w), name="conv", pre_padding=(2, 0), post_padding=(0, 1)).output)
    expected = F.conv2d(F.pad(x, (0, 1, 2, 0)), w)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)


def test_convolution_same_upper_and_round_up() -> None:
    x = torch.randn(1, 1, 7, 7)
    w = torch.randn(1, 1, 4, 4)
    same = run_layer([x], lambda v: ConvolutionOp(v, constant(w), name="same", stride=(2, 2),
                                                  padding_mode=PaddingMode.kSAME_UPPER).output)
    # O = ceil(7/2) = 4; total padding (4-1)*2 + 4 - 7 = 3 -> 1 before, 2 after.
    torch.testing.assert_close(same, F.conv2d(F.pad(x, (1, 2, 1, 2)), w, stride=2), rtol=1e-4, atol=1e-4)
    up = run_layer([x], lambda v: ConvolutionOp(v, constant(w), name="up", stride=(2, 2),
                                                padding_mode=PaddingMode.kEXPLICIT_ROUND_UP).output)
    # ceil((7-4)/2)+1 = 3 windows; the last one reads one zero past the input.
    assert up.shape == (1, 1, 3, 3)
    torch.testing.assert_close(up, F.conv2d(F.pad(x, (0, 1, 0, 1)), w, stride=2), rtol=1e-4, atol=1e-4)


def test_convolution_3d() -> None:
    x = torch.randn(1, 2, 5, 4, 6)
    w = torch.randn(4, 2, 2, 3, 3)
    y = run_layer([x], lambda v: ConvolutionOp(v, constant(w), name="c3", pre_padding=(1, 1, 1),
                                               post_padding=(1, 1, 1), stride=(1, 2, 1)).output)
    torch.testing.assert_close(y, F.conv3d(x, w, padding=1, stride=(1, 2, 1)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("stride", "padding", "output_padding", "dilation", "groups"),
    [((1, 1), (0, 0), (0, 0), (1, 1), 1), ((2, 2), (1, 1), (1, 1), (1, 1), 1), ((2, 3), (1, 2), (0, 1), (2, 1), 2)],
)
def test_deconvolution_matches_conv_transpose(stride, padding, output_padding, dilation, groups) -> None:  # noqa: ANN001
    x = torch.randn(2, 4, 5, 4)
    w = torch.randn(4, 6 // groups, 3, 3)
    b = torch.randn(6)
    post = [p - o for p, o in zip(padding, output_padding, strict=True)]
    expected = F.conv_transpose2d(x, w, b, stride=stride, padding=padding, output_padding=output_padding,
                                  dilation=dilation, groups=groups)

    def body(v):  # noqa: ANN001, ANN202
        return DeconvolutionOp(v, constant(w, "w"), constant(b, "b"), name="deconv", stride=stride,
                               pre_padding=padding, post_padding=post, dilation=dilation, num_groups=groups).output

    torch.testing.assert_close(run_layer([x], body), expected, rtol=1e-4, atol=1e-4)


def test_deconvolution_output_padding_via_smaller_post_padding() -> None:
    x = torch.randn(1, 3, 4, 4)
    w = torch.randn(3, 2, 3, 3)
    y = run_layer([x], lambda v: DeconvolutionOp(v, constant(w), name="d", stride=(2, 2), pre_padding=(1, 1),
                                                 post_padding=(0, 0)).output)
    torch.testing.assert_close(y, F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
                               rtol=1e-4, atol=1e-4)


N, T, V = MatrixOperation.kNONE, MatrixOperation.kTRANSPOSE, MatrixOperation.kVECTOR


@pytest.mark.parametrize(
    ("a_shape", "op0", "b_shape", "op1", "expected"),
    [
        ((2, 3), N, (3, 4), N, lambda a, b: a @ b),
        ((3, 2), T, (3, 4), N, lambda a, b: a.T @ b),
        ((2, 3), N, (4, 3), T, lambda a, b: a @ b.T),
        ((3, 2), T, (4, 3), T, lambda a, b: a.T @ b.T),
        ((5, 2, 3), N, (1, 3, 4), N, lambda a, b: a @ b),
        ((2, 1, 2, 3), N, (1, 4, 3, 5), N, lambda a, b: a @ b),
        ((2, 3), N, (3,), V, lambda a, b: a @ b),
        ((3,), V, (3, 4), N, lambda a, b: a @ b),
        ((5, 3), V, (5, 3), V, lambda a, b: (a * b).sum(-1)),
        ((5, 3), V, (5, 4, 3), T, lambda a, b: torch.einsum("bk,bnk->bn", a, b)),
    ],
)
def test_matrix_multiply(a_shape, op0, b_shape, op1, expected) -> None:  # noqa: ANN001
    a = torch.randn(a_shape)
    b = torch.randn(b_shape)
    y = run_layer([a, b], lambda p, q: MatrixMultiplyOp(p, op0, q, op1, name="mm").output)
    torch.testing.assert_close(y, expected(a, b), rtol=1e-4, atol=1e-5)


def test_einsum() -> None:
    a = torch.randn(2, 3, 4)
    b = torch.randn(2, 4, 5)
    y = run_layer([a, b], lambda p, q: EinsumOp([p, q], "bij,bjk->bik", name="bmm").output)
    torch.testing.assert_close(y, torch.bmm(a, b), rtol=1e-4, atol=1e-5)
    t = run_layer([a], lambda p: EinsumOp([p], "bij->jb", name="sum_t").output)
    torch.testing.assert_close(t, a.sum(1).T, rtol=1e-5, atol=1e-5)
