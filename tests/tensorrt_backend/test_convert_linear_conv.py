"""Matrix product and convolution converters vs eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts

import ziggurat

torch.manual_seed(0)

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                 ((3, 4), (2, 4, 6))]


@pytest.mark.parametrize(("a", "b"), MATMUL_SHAPES)
def test_matmul(a, b) -> None:  # noqa: ANN001
    check_converts(torch.matmul, [torch.randn(a), torch.randn(b)], rtol=1e-4, atol=1e-5)


def test_mm_bmm_addmm_baddbmm() -> None:
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    check_converts(torch.mm, [a, b], rtol=1e-4, atol=1e-5)
    check_converts(torch.bmm, [torch.randn(2, 3, 4), torch.randn(2, 4, 5)], rtol=1e-4, atol=1e-5)
    check_converts(lambda c, x, y: torch.addmm(c, x, y, beta=0.5, alpha=2.0), [torch.randn(5), a, b],
                   rtol=1e-4, atol=1e-5)
    check_converts(lambda c, x, y: torch.baddbmm(c, x, y, alpha=0.5), [torch.randn(2, 3, 5), torch.randn(2, 3, 4),
                                                                      torch.randn(2, 4, 5)], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
def test_linear(shape) -> None:  # noqa: ANN001
    check_converts(torch.nn.Linear(7, 4), [torch.randn(shape)], rtol=1e-4, atol=1e-5)
    check_converts(torch.nn.Linear(7, 4, bias=False), [torch.randn(shape)], rtol=1e-4, atol=1e-5)


def test_einsum() -> None:
    check_converts(lambda a, b: torch.einsum("bij,bjk->bik", a, b), [torch.randn(2, 3, 4), torch.randn(2, 4, 5)],
                   rtol=1e-4, atol=1e-5)
    check_converts(lambda a: torch.einsum("Ij->jI", a), [torch.randn(3, 4)])


CONVS = {
    "conv1d": torch.nn.Conv1d(4, 6, 3, stride=2, padding=1),
    "conv1d_dilated_groups": torch.nn.Conv1d(4, 6, 3, dilation=2, groups=2),
    "conv2d": torch.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0)),
    "conv2d_depthwise": torch.nn.Conv2d(4, 8, 3, padding=1, groups=4, bias=False),
    "conv2d_same": torch.nn.Conv2d(4, 6, 4, padding="same", dilation=2),
    "conv3d": torch.nn.Conv3d(4, 2, 3, padding=1),
    "deconv1d": torch.nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1),
    "deconv2d": torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
    "deconv2d_big_output_padding": torch.nn.ConvTranspose2d(4, 3, 3, stride=3, padding=0, output_padding=2),
    "deconv3d": torch.nn.ConvTranspose3d(4, 2, 2, stride=2),
}
INPUTS = {"1d": (2, 4, 9), "2d": (2, 4, 7, 6), "3d": (1, 4, 4, 5, 3)}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_convolution(name: str) -> None:
    key = next(k for k in INPUTS if k in name)
    check_converts(CONVS[name].eval(), [torch.randn(INPUTS[key])], rtol=1e-4, atol=1e-4)


def test_functional_conv_with_runtime_weights_and_unbatched_input() -> None:
    check_converts(lambda x, w: F.conv2d(x, w), [torch.randn(4, 5, 5), torch.randn(3, 4, 3, 3)],
                   rtol=1e-4, atol=1e-4)


class _Fn(torch.nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, w, padding=3)


class _PaddedConv(torch.nn.Module):
    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(weight, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv1d(x, self.weight, padding=3, stride=3) + 1


def test_padded_conv_by_inf_weights_runs_in_torch() -> None:
    """eager's direct convolution skips the taps on the padding; TensorRT (and the native CPU
    kernels) multiply them by zero, NaN for an inf weight (fuzz seed 3 program 1633). Such a
    convolution, or a padded one by weights given at run time, is not converted; the numbers
    are eager's."""
    torch.manual_seed(0)
    weight = torch.randn(5, 1, 5)
    weight[1, 0, 0] = float("inf")
    x = torch.randn(3, 1, 7)
    model = _PaddedConv(weight).eval()
    expected = model(x)
    assert torch.isfinite(expected[0, 1, 0])  # the inf tap falls on the padding
    for backend in ("tensorrt-reference", "cpu"):
        compiled = ziggurat.compile(model, (x,), backend=backend)
        reasons = [r for rs in compiled.report.fallback_ops.values() for r in rs]
        assert any("weights holding inf or NaN" in r for r in reasons), (backend, reasons)
        torch.testing.assert_close(compiled(x), expected, equal_nan=True)
    runtime = ziggurat.compile(_Fn(), (x, weight.clone()), backend="tensorrt-reference")
    reasons = [r for rs in runtime.report.fallback_ops.values() for r in rs]
    assert any("weights known at run time only" in r for r in reasons), reasons
    torch.testing.assert_close(runtime(x, weight), F.conv1d(x, weight, padding=3), equal_nan=True)


class _Upsample(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=3, mode="nearest") * 2 + 1


def test_saved_nearest_resize_loads(tmp_path: object) -> None:
    """A nearest resize printed its default coordinate transformation as nothing, and the saved
    module did not parse back ("corrupt"; fuzz seed 3 program 2294 and four more)."""
    from pathlib import Path

    x = torch.randn(1, 2, 3, 4)
    compiled = ziggurat.compile(_Upsample(), (x,), backend="tensorrt-reference", frontend="export")
    path = Path(str(tmp_path)) / "m.zg"
    compiled.save(path)
    torch.testing.assert_close(ziggurat.load(path)(x), _Upsample()(x))
