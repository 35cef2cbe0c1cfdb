"""Casts (``aten::to.*``, ``aten::_to_copy``, ``type_as``, ``copy_``) on the reference executor vs eager,
bit for bit, on both frontends: every pair of the dtypes the converter takes, float -> int
truncation toward zero, NaN / infinities / out-of-range floats (the target's minimum, as eager on
this CPU), int64 -> int32 wrapping, and what the validator refuses."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import ziggurat
from conversion_harness import check_converts, convert_and_run
from ziggurat.backends.tensorrt.converters.casts import CAST_DTYPES

NAN, INF = float("nan"), float("inf")
#: Values around every edge of a float -> int32/int64 cast.
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 0.4, -0.4, 0.5, -0.5, 1.5, -1.5, 2.7, -2.7, 1e-30, -1e-30,
           2.0 ** 31, -(2.0 ** 31), 2147483520.0, -2147483520.0, 3e9, -3e9, 2.0 ** 62, -(2.0 ** 63),
           2.0 ** 63, 1e20, -1e20, 16777217.0, 65504.0, -65504.0, 7.0, -7.0]


def _values(dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """Odd-shaped inputs of ``dtype`` with negative, fractional and edge values."""
    g = torch.Generator().manual_seed(7)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=g) * 40
        flat = x.view(-1)
        flat[: len(SPECIAL)] = torch.tensor(SPECIAL)[: flat.numel()]
        return x.to(dtype)
    x = torch.randint(-(2 ** 31), 2 ** 31 - 1, shape, generator=g, dtype=torch.int64)
    if dtype == torch.int64:  # beyond int32 both ways, and the int64 extremes
        flat = x.view(-1)
        flat[:6] = torch.tensor([2 ** 31, -(2 ** 31) - 1, 2 ** 32 + 5, -(2 ** 40) - 3, 2 ** 63 - 1, -(2 ** 63)])
    return x.to(dtype)


def _check_bitwise(fn: Any, inputs: list[torch.Tensor], frontend: str) -> None:
    if frontend == "torchscript":
        converted = convert_and_run(fn, inputs)
        assert converted.report.segments and not converted.fallback_ops, converted.fallback_ops
        outputs, expected = converted.outputs, converted.expected
    else:
        model = torch.export.export(_Wrap(fn), tuple(inputs)).run_decompositions()
        assert any("_to_copy" in str(n.target) for n in model.graph.nodes)  # what the test is about
        compiled = ziggurat.compile(model, tuple(inputs), backend="tensorrt-reference", fallback=False)
        outputs, expected = list(compiled(*inputs)), list(_Wrap(fn)(*inputs))
    for got, want in zip(outputs, expected, strict=True):
        assert got.dtype == want.dtype
        assert torch.equal(got, want) if not want.dtype.is_floating_point else torch.testing.assert_close(
            got, want, rtol=0, atol=0, equal_nan=True) is None, (got, want)


class _Wrap(torch.nn.Module):
    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


PAIRS = [(s, d) for s in CAST_DTYPES for d in CAST_DTYPES if s != d]


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("src, dst", PAIRS, ids=[f"{s}-{d}".replace("torch.", "") for s, d in PAIRS])
def test_cast_matches_eager(src: torch.dtype, dst: torch.dtype, frontend: str) -> None:
    x = _values(src, (3, 5, 7))
    # the cast feeds a following op, so it is not the segment's only layer
    _check_bitwise(lambda t: (t.to(dst), t.to(dst).flip(0)), [x], frontend)


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_float_to_int_special_values(frontend: str) -> None:
    """Truncation toward zero; NaN, infinities and out-of-range values give the target's minimum
    (eager on x86), never what the cast layer would make of them."""
    x = torch.tensor(SPECIAL + [v / 3 for v in SPECIAL])
    expected_i32 = x.to(torch.int32)
    assert expected_i32[SPECIAL.index(NAN)] == -(2 ** 31)  # this host's eager: cvttss2si
    _check_bitwise(lambda t: (t.to(torch.int32), t.long(), t.half().int(), t.bfloat16().long(), t.bool()),
                   [x], frontend)


def test_int64_to_int32_wraps() -> None:
    x = torch.tensor([0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, 2 ** 32 + 7,
                      -(2 ** 32) - 7, 2 ** 63 - 1, -(2 ** 63), 123456789012345])
    _check_bitwise(lambda t: t.int(), [x], "torchscript")
    _check_bitwise(lambda t: t.to(torch.int32), [x], "export")


def test_type_as_copy_and_dtype_layout() -> None:
    x = _values(torch.float32, (4, 3))
    check_converts(lambda t, o: t.type_as(o), [x, torch.zeros(2, dtype=torch.int32)], rtol=0, atol=0)
    check_converts(lambda t: torch.zeros(4, 3, dtype=torch.int64).copy_(t), [x], rtol=0, atol=0)
    check_converts(lambda t: torch.ops.aten._to_copy(t, dtype=torch.int64, layout=torch.strided), [x], rtol=0, atol=0)
    check_converts(lambda t: t.to(torch.int32, memory_format=torch.contiguous_format), [x], rtol=0, atol=0)
    check_converts(lambda t: torch.ops.aten._to_copy(t), [x], rtol=0, atol=0)  # no dtype: a copy


REFUSED = {
    "channels_last": (lambda t: t.to(torch.float16, memory_format=torch.channels_last), "memory_format"),
    "to_cpu": (lambda t: t.to("cpu", torch.float16), "moves the tensor to cpu"),
    "to_copy_cpu": (lambda t: torch.ops.aten._to_copy(t, dtype=torch.float16, device="cpu"), "moves the tensor to cpu"),
    "pinned": (lambda t: torch.ops.aten._to_copy(t, dtype=torch.float16, pin_memory=True), "pin_memory"),
    "int8": (lambda t: t.to(torch.int8), "int8"),
    "uint8": (lambda t: t.to(torch.uint8), "ui8"),  # refused by the segment's type check
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_casts_run_in_torch(case: str) -> None:
    fn, reason = REFUSED[case]
    x = torch.randn(2, 3, 4, 5)
    converted = convert_and_run(lambda t: fn(t * 2) + 1, [x])
    refused = [r for r in converted.report.fallback if "to" in r.op]
    assert len(refused) == 1 and reason in refused[0].reason, [r.format() for r in converted.report.fallback]
    for got, want in zip(converted.outputs, converted.expected, strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)


_TO_COPY = ('%{n} = torch.operator "aten::_to_copy"(%t) {{args = {{dtype = f16, device = "{device}"}}, '
            'operand_names = ["self"], schema = "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, '
            'Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, '
            'MemoryFormat? memory_format=None) -> Tensor"}} : (tensor<3xf32>) -> tensor<3xf16>')


@pytest.mark.parametrize("device, refused", [("cuda", False), ("cuda:0", False), ("cuda:1", True), ("cpu", True),
                                             ("meta", True)])
def test_device_argument(device: str, refused: bool) -> None:
    """TensorRT's outputs live on CUDA device 0: a move there is a cast (or an identity), a move
    elsewhere stays in torch (built from IR text: this host may have no CUDA to trace with)."""
    from xdsl.parser import Parser

    from ziggurat.backends.tensorrt.converter_args import ConverterArgs
    from ziggurat.backends.tensorrt.converters.casts import cast_refusal
    from ziggurat.dialects.torch import TorchOp
    from ziggurat.ir.context import make_context

    text = ("builtin.module {\n  func.func @forward(%t: tensor<3xf32>) -> tensor<3xf16> {\n    "
            + _TO_COPY.format(n=0, device=device) + "\n    func.return %0 : tensor<3xf16>\n  }\n}")
    module = Parser(make_context(), text).parse_module()
    (op,) = [op for op in module.walk() if isinstance(op, TorchOp)]
    reason = cast_refusal(ConverterArgs(op))
    if refused:
        assert reason is not None and f"moves the tensor to {device}" in reason, reason
    else:
        assert reason is None


def test_reduction_dtype_casts_like_to() -> None:
    """A ``dtype=`` of a reduction casts its input first, with ``to``'s values on NaN and
    out-of-range floats (a bare cast layer gives 0 / saturates there: the reference models TensorRT)."""
    x = torch.tensor([[NAN, 2.7, -2.7, 0.5], [INF, 1e20, -3.5, -INF], [1.5, -1.5, 3e9, 7.9]])
    check_converts(lambda t: (torch.sum(t, 1, dtype=torch.int64), torch.cumsum(t, 1, dtype=torch.int32),
                              torch.prod(t[2:], 1, dtype=torch.int64)), [x], rtol=0, atol=0)


def test_reference_cast_models_tensorrt() -> None:
    """The reference's ICastLayer rounds toward zero, saturates and sends NaN to 0 (TensorRT on
    the GPU), which is why the converters above never hand it such values."""
    from ziggurat.ir.interpreter.trt_layers.pointwise import cast

    x = torch.tensor([NAN, INF, -INF, 2.0 ** 31, -(2.0 ** 31) - 512, 2.0 ** 63, 1e20, 2.7, -2.7, -0.5])
    assert cast(x, torch.int32).tolist() == [0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1, -(2 ** 31), 2 ** 31 - 1,
                                             2 ** 31 - 1, 2, -2, 0]
    assert cast(x, torch.int64).tolist() == [0, 2 ** 63 - 1, -(2 ** 63), 2 ** 31, -(2 ** 31) - 512, 2 ** 63 - 1,
                                             2 ** 63 - 1, 2, -2, 0]
    assert cast(x, torch.bool).tolist() == [True] * 9 + [True]
