"""Reference shuffle, concatenation, slice, gather, scatter, padding, resize, constant, shape and fill."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from trt_builders import constant, run_layer
from ziggurat.dialects.trt import (
    ConcatenationOp,
    FillOp,
    FillOperation,
    GatherMode,
    GatherOp,
    InterpolationMode,
    PaddingOp,
    ResizeCoordinateTransformation,
    ResizeOp,
    ResizeRoundMode,
    SampleMode,
    ScatterMode,
    ScatterOp,
    ShapeOp,
    ShuffleOp,
    SliceOp,
)
from ziggurat.ir.types import element_type

torch.manual_seed(0)


def test_shuffle_is_transpose_reshape_transpose() -> None:
    x = torch.arange(24.0).reshape(2, 3, 4)
    y = run_layer([x], lambda v: ShuffleOp(v, name="shuffle", first_transpose=(2, 0, 1), reshape_dims=(0, -1),
                                           second_transpose=(1, 0)).output)
    # 0 copies the first-transposed dim 0 (= 4); -1 takes the rest (6).
    assert torch.equal(y, x.permute(2, 0, 1).reshape(4, 6).permute(1, 0))


def test_shuffle_zero_is_placeholder_off_means_an_empty_dim() -> None:
    x = torch.zeros(0, 3)
    y = run_layer([x], lambda v: ShuffleOp(v, name="empty", reshape_dims=(3, 0), zero_is_placeholder=False).output)
    assert y.shape == (3, 0)


def test_concatenation() -> None:
    a, b = torch.randn(2, 3), torch.randn(2, 5)
    y = run_layer([a, b], lambda p, q: ConcatenationOp([p, q], 1, name="cat").output)
    assert torch.equal(y, torch.cat([a, b], 1))


def test_slice_strict_with_negative_stride() -> None:
    x = torch.arange(10.0)
    y = run_layer([x], lambda v: SliceOp(v, (8,), (4,), (-2,), name="slice").output)
    assert y.tolist() == [8.0, 6.0, 4.0, 2.0]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (SampleMode.kWRAP, [3, 4, 0, 1, 2, 3, 4, 0, 1]),
        (SampleMode.kCLAMP, [0, 0, 0, 1, 2, 3, 4, 4, 4]),
        (SampleMode.kREFLECT, [2, 1, 0, 1, 2, 3, 4, 3, 2]),
        (SampleMode.kFILL, [-1, -1, 0, 1, 2, 3, 4, -1, -1]),
    ],
)
def test_slice_out_of_bounds_modes(mode: SampleMode, expected: list[int]) -> None:
    x = torch.arange(5.0)

    def body(v):  # noqa: ANN001, ANN202
        fill = constant(torch.tensor(-1.0), "fill") if mode == SampleMode.kFILL else None
        return SliceOp(v, (-2,), (9,), (1,), name="pad", mode=mode, fill=fill).output

    assert run_layer([x], body).tolist() == [float(e) for e in expected]


def test_slice_reflect_matches_reflection_pad_2d() -> None:
    x = torch.randn(1, 2, 4, 5)
    y = run_layer([x], lambda v: SliceOp(v, (0, 0, -2, -1), (1, 2, 7, 8), (1, 1, 1, 1), name="reflect",
                                         mode=SampleMode.kREFLECT).output)
    assert torch.equal(y, F.pad(x, (1, 2, 2, 1), mode="reflect"))


def test_gather_default_and_elementwise_dim() -> None:
    data = torch.randn(3, 4, 5)
    idx = torch.tensor([[3, 0], [1, 1]], dtype=torch.int32)
    y = run_layer([data, idx], lambda d, i: GatherOp(d, i, name="gather", axis=1).output)
    assert torch.equal(y, data[:, idx.long()])
    per_row = torch.tensor([[4, 0], [1, 2], [3, 3]], dtype=torch.int32)
    z = run_layer([data, per_row], lambda d, i: GatherOp(d, i, name="gather", axis=2, num_elementwise_dims=1).output)
    assert torch.equal(z, torch.stack([data[b][:, per_row[b].long()] for b in range(3)]))


def test_gather_element_and_nd() -> None:
    data = torch.randn(3, 4)
    e_idx = torch.tensor([[0, 3], [1, 1], [2, 0]], dtype=torch.int32)
    y = run_layer([data, e_idx], lambda d, i: GatherOp(d, i, name="ge", mode=GatherMode.kELEMENT, axis=1).output)
    assert torch.equal(y, torch.gather(data, 1, e_idx.long()))
    nd_idx = torch.tensor([[0, 3], [2, 1]], dtype=torch.int32)
    z = run_layer([data, nd_idx], lambda d, i: GatherOp(d, i, name="gnd", mode=GatherMode.kND).output)
    assert z.tolist() == [float(data[0, 3]), float(data[2, 1])]
    rows = torch.tensor([[2], [0]], dtype=torch.int32)
    r = run_layer([data, rows], lambda d, i: GatherOp(d, i, name="rows", mode=GatherMode.kND).output)
    assert torch.equal(r, data[[2, 0]])


def test_scatter_element_and_nd() -> None:
    data = torch.zeros(3, 4)
    idx = torch.tensor([[3, 0], [1, 2], [0, 1]], dtype=torch.int32)
    upd = torch.arange(1.0, 7.0).reshape(3, 2)
    y = run_layer([data, idx, upd], lambda d, i, u: ScatterOp(d, i, u, name="scatter", axis=1).output)
    assert torch.equal(y, data.scatter(1, idx.long(), upd))
    nd = torch.tensor([[2], [0]], dtype=torch.int32)
    rows = torch.ones(2, 4)
    z = run_layer([data, nd, rows], lambda d, i, u: ScatterOp(d, i, u, name="snd", mode=ScatterMode.kND).output)
    assert z.tolist() == [[1.0] * 4, [0.0] * 4, [1.0] * 4]


def test_padding_pads_and_trims_innermost_two_dims() -> None:
    x = torch.randn(1, 1, 3, 5)
    y = run_layer([x], lambda v: PaddingOp(v, (-1, 3), (3, -2), name="pad").output)
    assert torch.equal(y, F.pad(x, (3, -2, -1, 3)))
    assert y.shape == (1, 1, 5, 6)


def test_resize_nearest_asymmetric_floor_is_torch_nearest() -> None:
    x = torch.randn(1, 2, 3, 5)
    y = run_layer([x], lambda v: ResizeOp(v, InterpolationMode.kNEAREST, name="up", output_dims=(1, 2, 7, 8)).output)
    assert torch.equal(y, F.interpolate(x, size=(7, 8), mode="nearest"))


def test_resize_nearest_half_pixel_half_up_is_nearest_exact() -> None:
    x = torch.randn(1, 2, 5, 3)
    y = run_layer([x], lambda v: ResizeOp(v, InterpolationMode.kNEAREST, name="up", output_dims=(1, 2, 3, 7),
                                          coordinate_transformation=ResizeCoordinateTransformation.kHALF_PIXEL,
                                          nearest_rounding=ResizeRoundMode.kHALF_UP).output)
    assert torch.equal(y, F.interpolate(x, size=(3, 7), mode="nearest-exact"))


@pytest.mark.parametrize("align", [True, False])
def test_resize_linear(align: bool) -> None:
    x = torch.randn(1, 2, 4, 5)
    transform = (ResizeCoordinateTransformation.kALIGN_CORNERS if align
                 else ResizeCoordinateTransformation.kHALF_PIXEL)
    y = run_layer([x], lambda v: ResizeOp(v, InterpolationMode.kLINEAR, name="bilinear", scales=(1.0, 1.0, 2.0, 1.5),
                                          coordinate_transformation=transform).output)
    expected = F.interpolate(x, size=(8, 7), mode="bilinear", align_corners=align)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)


def test_resize_trilinear() -> None:
    x = torch.randn(1, 1, 3, 4, 2)
    y = run_layer([x], lambda v: ResizeOp(v, InterpolationMode.kLINEAR, name="tri", output_dims=(1, 1, 6, 5, 4),
                                          coordinate_transformation=ResizeCoordinateTransformation.kALIGN_CORNERS).output)
    torch.testing.assert_close(y, F.interpolate(x, size=(6, 5, 4), mode="trilinear", align_corners=True),
                               rtol=1e-5, atol=1e-5)


def test_constant_shape_and_fill() -> None:
    x = torch.randn(2, 7, 3)
    shape = run_layer([x], lambda v: ShapeOp(v, name="size").output)
    assert shape.dtype == torch.int64 and shape.tolist() == [2, 7, 3]
    w = torch.randn(40, 3)
    c = run_layer([x], lambda v: constant(w, "big"))  # 120 elements: a dense_resource blob
    assert torch.equal(c, w)
    ramp = run_layer([x], lambda v: FillOp(FillOperation.kLINSPACE, (2, 3), element_type(torch.float32), name="ramp",
                                           alpha=1.0, beta=(10.0, 0.5)).output)
    assert ramp.tolist() == [[1.0, 1.5, 2.0], [11.0, 11.5, 12.0]]
    noise = run_layer([x], lambda v: FillOp(FillOperation.kRANDOM_UNIFORM, (1000,), element_type(torch.float32),
                                            name="rand", alpha=2.0, beta=(3.0,)).output)
    assert 2.0 <= float(noise.min()) and float(noise.max()) <= 3.0


@pytest.mark.parametrize("interpolation", [InterpolationMode.kLINEAR, InterpolationMode.kNEAREST])
@pytest.mark.parametrize("sample_mode", [SampleMode.kFILL, SampleMode.kCLAMP, SampleMode.kREFLECT])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_modes(interpolation: InterpolationMode, sample_mode: SampleMode, align: bool) -> None:
    from ziggurat.dialects.trt import GridSampleOp

    image = torch.randn(2, 3, 5, 6)
    grid = torch.rand(2, 4, 7, 2) * 3 - 1.5  # inside and outside [-1, 1]
    y = run_layer([image, grid], lambda a, g: GridSampleOp(a, g, name="grid", interpolation_mode=interpolation,
                                                           align_corners=align, sample_mode=sample_mode).output)
    mode = {InterpolationMode.kLINEAR: "bilinear", InterpolationMode.kNEAREST: "nearest"}[interpolation]
    padding = {SampleMode.kFILL: "zeros", SampleMode.kCLAMP: "border", SampleMode.kREFLECT: "reflection"}[sample_mode]
    expected = F.grid_sample(image, grid, mode=mode, padding_mode=padding, align_corners=align)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sample_mode", [SampleMode.kFILL, SampleMode.kCLAMP, SampleMode.kREFLECT])
def test_grid_sample_infinite_pixel_at_the_border(sample_mode: SampleMode) -> None:
    """An infinite pixel in the last column, sampled exactly there: the tap past the border
    reads zero, it is not the clamped inf times 0 (seed 8, program 3482 gave NaN)."""
    from ziggurat.dialects.trt import GridSampleOp

    image = torch.randn(1, 2, 3, 4)
    image[0, 0, :, -1] = float("inf")
    image[0, 1, -1, :] = float("-inf")
    grid = torch.tensor([[[[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [1.0, 0.0]]]])  # corners and an edge
    y = run_layer([image, grid], lambda a, g: GridSampleOp(a, g, name="grid", interpolation_mode=InterpolationMode.kLINEAR,
                                                           align_corners=True, sample_mode=sample_mode).output)
    padding = {SampleMode.kFILL: "zeros", SampleMode.kCLAMP: "border", SampleMode.kREFLECT: "reflection"}[sample_mode]
    expected = F.grid_sample(image, grid, mode="bilinear", padding_mode=padding, align_corners=True)
    assert torch.isinf(expected).any()
    torch.testing.assert_close(y, expected, equal_nan=True)
