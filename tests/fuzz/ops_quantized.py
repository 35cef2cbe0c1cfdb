"""PT2E-quantized patterns, as ``X86InductorQuantizer`` makes them: an activation through
``quantize_per_tensor -> dequantize_per_tensor`` (uint8, a zero point anywhere in the range)
into a linear or a convolution whose int8 weight is dequantized per output channel (zero zero
points), then maybe an activation and a requantization for the next layer; and a lone pair
with another integer range.  What ``decompose-quantize``, ``prepack-weights{int8}`` and the
int8 kernels take.

Each step is its own statement (the pair, the weight's dequantization, the GEMM, the
activation, the requantization), so the oracle's pushed runs move the GEMM's result: where
that crosses a rounding boundary of the next quantizer (a real-number tie that eager's float32
sum rounds one way and the exact int8 sum the other, fuzz seed 41 program 90) the element is
masked, one quantum being the precision's own jump.

Weight 0 in the default profiles (adding a spec must not change what existing seeds
generate); the ``quantized`` profile draws them.  The float64 reference run gives the
``quantized_decomposed`` ops their operands in float32 (they take nothing else) and widens what
they return (``exact64.quantized_in_float32``), so eager's float32 errors elsewhere in these
programs count as noise; at a quantizer the tolerance still comes from the pushed runs, and an
element a push moves across a rounding boundary of a quantizer is masked (one quantum is the
precision's own jump).
"""

from __future__ import annotations

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers torch.ops.quantized_decomposed)

from tests.fuzz.builder import Builder, Emit, Value
from tests.fuzz.ops_linalg import ACTIVATIONS
from tests.fuzz.ops_nn import _spatial_input
from tests.fuzz.registry import spec

Q = "torch.ops.quantized_decomposed"


def _pair(b: Builder, x: str, lo: int = 0, hi: int = 255, dtype: str = "torch.uint8") -> str:
    """``x`` through a quantize -> dequantize pair of a random scale and zero point; one in five
    zero points is the range's middle (0 for int8, 128 for uint8: TensorRT's int8 Q/DQ layers)."""
    scale = b.choice([0.003, 0.0125, 0.04, 0.1, 0.37])
    if b.chance(0.2):
        zp = (lo + hi + 1) // 2
    else:
        zp = b.rng.randint(lo, hi) if b.chance(0.8) else b.choice([lo, hi, 0 if lo <= 0 <= hi else lo])
    args = f"{scale}, {zp}, {lo}, {hi}, {dtype}"
    return f"{Q}.dequantize_per_tensor({Q}.quantize_per_tensor({x}, {args}), {args})"


def _int8_weight(b: Builder, shape: list[int]) -> str:
    """An int8 weight dequantized along dim 0, with PT2E's per-channel scales and zero points."""
    n = shape[0]
    w = b.new_const(shape, torch.int8, "int8")
    scales = b.new_const([n], torch.float32, literal=[b.choice([0.0008, 0.002, 0.005, 0.011, 0.03]) for _ in range(n)])
    zero_points = b.new_const([n], torch.int64, literal=[0] * n)
    return f"{Q}.dequantize_per_channel({w}, {scales}, {zero_points}, 0, -128, 127, torch.int8)"


def _step(b: Builder, name: str, code: str) -> Value:
    return b.emit(name, code)[0]


def _after(b: Builder, name: str, y: Value) -> list[Value]:
    """``y`` (a GEMM's result), maybe through an activation, maybe requantized."""
    if b.chance(0.5):
        y = _step(b, name, b.choice(ACTIVATIONS[:3]).format(y=y))
    return [_step(b, name, _pair(b, str(y)))] if b.chance(0.4) else [y]


@spec("quantized_linear", weight=0.0, family="quantized")
def _quantized_linear(b: Builder) -> list[Value]:
    x = b.pick_float(1, 4, pred=lambda v: v.shape[-1] <= 96)
    k, n = x.shape[-1], b.size(1, 70)
    name = "quantized_linear"
    xq = _step(b, name, _pair(b, str(x)))
    w = _step(b, name, _int8_weight(b, [n, k]))
    bias = b.new_const([n], torch.float32) if b.chance(0.7) else None
    y = _step(b, name, f"F.linear({xq}, {w}" + (f", {bias})" if bias is not None else ")"))
    return _after(b, name, y)


@spec("quantized_conv", weight=0.0, family="quantized")
def _quantized_conv(b: Builder) -> list[Value]:
    x: Value = _spatial_input(b, 2)
    c_in = x.shape[1]
    groups = b.choice([g for g in (1, 1, 1, 2, c_in) if c_in % g == 0])
    c_out = groups * b.size(1, 9)
    kh, kw = b.choice([1, 1, 2, 3, 5]), b.choice([1, 1, 3])
    stride, dil = (b.choice([1, 1, 2]), b.choice([1, 2])), (b.choice([1, 1, 2]), 1)
    pad = (b.rng.randint(0, (kh - 1) * dil[0] // 2 + 1), b.rng.randint(0, kw // 2))
    name = "quantized_conv"
    xq = _step(b, name, _pair(b, str(x)))
    w = _step(b, name, _int8_weight(b, [c_out, c_in // groups, kh, kw]))
    bias = b.new_const([c_out], torch.float32) if b.chance(0.7) else None
    y = _step(b, name, f"F.conv2d({xq}, {w}, {bias if bias is not None else 'None'}, stride={stride!r}, "
                       f"padding={pad!r}, dilation={dil!r}, groups={groups})")
    return _after(b, name, y)


@spec("quantize_pair", weight=0.0, family="quantized")
def _quantize_pair(b: Builder) -> Emit:
    x = b.pick_float(0, 4)
    lo, hi, dtype = b.choice([(0, 255, "torch.uint8"), (-128, 127, "torch.int8"), (-127, 127, "torch.int8"),
                              (0, 15, "torch.uint8"), (-32768, 32767, "torch.int16")])
    return _pair(b, str(x), lo, hi, dtype)


@spec("quantized_block", weight=0.0, family="quantized")
def _quantized_block(b: Builder) -> list[Value]:
    """Two int8 linears with one pair between them, and residuals of the pairs' values: what
    ``fuse-requantize`` stores as uint8 (the first linear's requantized result read as the
    second's input and residual; the input pair read as the first's input and residual, and for
    a 1-d input sometimes as its bias, which must not be)."""
    x = b.pick_float(1, 4, pred=lambda v: 1 <= v.shape[-1] <= 80)
    k = x.shape[-1]
    name = "quantized_block"
    xq = _step(b, name, _pair(b, str(x)))
    w1 = _step(b, name, _int8_weight(b, [k, k]))
    bias: object = b.new_const([k], torch.float32) if b.chance(0.6) else None
    if x.rank == 1 and b.chance(0.5):
        bias = xq  # the pair's value read as a bias too: it must stay float32 (fuse-requantize)
    y = _step(b, name, f"F.linear({xq}, {w1}" + (f", {bias})" if bias is not None else ")"))
    if b.chance(0.6):
        y = _step(b, name, f"{y} + {xq}" if b.chance(0.7) else f"{y} - {xq}")
    if b.chance(0.6):
        y = _step(b, name, b.choice(ACTIVATIONS[:3]).format(y=y))
    yq = _step(b, name, _pair(b, str(y)))
    residual = b.chance(0.5)
    n = k if residual else b.size(1, 40)
    w2 = _step(b, name, _int8_weight(b, [n, k]))
    z = _step(b, name, f"F.linear({yq}, {w2})")
    if residual:
        z = _step(b, name, f"{z} + {yq}")
    return _after(b, name, z)
