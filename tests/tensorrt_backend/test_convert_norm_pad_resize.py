"""Normalization, padding and resize converters vs eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conversion_harness import check_converts, convert_and_run

torch.manual_seed(0)


def _bn(num: int, dims: int) -> torch.nn.Module:
    bn = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[dims](num)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.5, 0.5)
    return bn.eval()


@pytest.mark.parametrize(("dims", "shape"), [(1, (4, 3)), (1, (2, 3, 5)), (2, (2, 3, 4, 4)), (3, (1, 3, 2, 3, 4))])
def test_batch_norm(dims: int, shape: tuple[int, ...]) -> None:
    check_converts(_bn(3, dims), [torch.randn(shape)], rtol=1e-4, atol=1e-5)


def test_batch_norm_with_runtime_statistics() -> None:
    check_converts(lambda x, m, v: F.batch_norm(x, m, v, eps=1e-3), [torch.randn(2, 3, 4), torch.randn(3),
                                                                    torch.rand(3) + 0.5], rtol=1e-4, atol=1e-5)


def test_layer_instance_group_norm() -> None:
    x = torch.randn(2, 6, 4, 5)
    check_converts(torch.nn.LayerNorm([4, 5]).eval(), [x], rtol=1e-4, atol=1e-5)
    check_converts(torch.nn.LayerNorm(5, elementwise_affine=False).eval(), [x], rtol=1e-4, atol=1e-5)
    inorm = torch.nn.InstanceNorm2d(6, affine=True).eval()
    inorm.weight.data.uniform_(0.5, 1.5)
    check_converts(inorm, [x], rtol=1e-4, atol=1e-5)
    check_converts(torch.nn.InstanceNorm1d(6).eval(), [torch.randn(2, 6, 7)], rtol=1e-4, atol=1e-5)
    gnorm = torch.nn.GroupNorm(3, 6).eval()
    gnorm.weight.data.uniform_(0.5, 1.5)
    gnorm.bias.data.uniform_(-1, 1)
    check_converts(gnorm, [x], rtol=1e-4, atol=1e-5)


PADS = {
    "constant": lambda x: F.pad(x, (1, 2, 0, 3), value=-1.5),
    "constant_trim": lambda x: F.pad(x, (-1, 2)),
    "reflect1d": lambda x: F.pad(x[0], (2, 3), mode="reflect"),
    "reflect2d": lambda x: F.pad(x, (2, 1, 3, 0), mode="reflect"),
    "replicate1d": lambda x: F.pad(x[0], (4, 1), mode="replicate"),
    "replicate2d": lambda x: F.pad(x, (1, 5, 2, 2), mode="replicate"),
    "replicate3d": lambda x: F.pad(x.unsqueeze(0), (1, 1, 2, 0, 1, 1), mode="replicate"),
    "circular": lambda x: F.pad(x, (2, 1, 1, 3), mode="circular"),
    "aten_constant_pad_nd": lambda x: torch.ops.aten.constant_pad_nd(x, [0, 1, 2, -1], 0.5),
    "aten_reflection_pad1d": lambda x: torch.ops.aten.reflection_pad1d(x[0], [1, 3]),
    "aten_reflection_pad2d": lambda x: torch.ops.aten.reflection_pad2d(x, [3, 0, 1, 2]),
    "aten_replication_pad1d": lambda x: torch.ops.aten.replication_pad1d(x[0], [2, 2]),
    "aten_replication_pad2d": lambda x: torch.ops.aten.replication_pad2d(x, [0, 4, 1, 0]),
    "aten_replication_pad3d": lambda x: torch.ops.aten.replication_pad3d(x, [1, 0, 0, 2, 1, 1]),
}


@pytest.mark.parametrize("name", sorted(PADS))
def test_padding(name: str) -> None:
    check_converts(PADS[name], [torch.randn(2, 3, 4, 5)])


RESIZES = {
    "nearest_size": lambda x: F.interpolate(x, size=(7, 9), mode="nearest"),
    "nearest_scale": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "nearest1d": lambda x: F.interpolate(x[0], scale_factor=3, mode="nearest"),
    "nearest3d": lambda x: F.interpolate(x.unsqueeze(0), size=(3, 8, 6), mode="nearest"),
    "bilinear": lambda x: F.interpolate(x, size=(9, 7), mode="bilinear", align_corners=False),
    "bilinear_corners": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
    "linear1d": lambda x: F.interpolate(x[0], size=11, mode="linear", align_corners=False),
    "trilinear": lambda x: F.interpolate(x.unsqueeze(0), size=(4, 6, 7), mode="trilinear", align_corners=True),
    "downsample": lambda x: F.interpolate(x, size=(2, 3), mode="bilinear", align_corners=False),
}


@pytest.mark.parametrize("name", sorted(RESIZES))
def test_resize(name: str) -> None:
    check_converts(RESIZES[name], [torch.randn(2, 3, 4, 5)], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", ["zeros", "border"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sampler(mode: str, padding: str) -> None:
    grid = torch.rand(1, 3, 4, 2) * 2.4 - 1.2
    check_converts(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=False),
                   [torch.randn(1, 2, 5, 4), grid], rtol=1e-5, atol=1e-5)


def test_grid_sampler_reflection_stays_in_torch() -> None:
    """Eager reflects far coordinates (beyond ~1e6 pixels) into float32 rounding noise."""
    grid = torch.rand(1, 3, 4, 2) * 2.4 - 1.2
    result = convert_and_run(lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
                             [torch.randn(1, 2, 5, 4), grid])
    assert [r.op for r in result.report.fallback] == ["aten::grid_sampler"]
    assert "reflection" in result.report.fallback[0].reason
