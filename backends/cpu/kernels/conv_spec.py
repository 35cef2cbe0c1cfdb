"""The static description of one native convolution call: :class:`ConvSpec`.

Activations are channels-last (NHWC).  Pixel ``(n, y, x)`` of the input starts at
``a + n*in_batch + y*in_row + x*in_pixel`` and holds ``channels`` floats read by this call
(the call's channel group; ``in_pixel`` may be larger: a group, or a channel slice).
Output pixel ``m = (n*out_h + oy)*out_w + ox`` starts at ``c + m*ldc`` and receives
``out_channels`` floats, with the GEMM epilogue of ``microkernel.Epilogue`` semantics:
``+ bias[j]``, ``unary``, ``binary`` with ``other + m*other_pixel + j`` (in that order, or the
binary op first with ``binary_first``).

Kinds:

* ``igemm`` - an implicit GEMM ``C[m, j] = sum_k A[m, k] * B[k, j]`` over ``K = kh*kw*channels``
  ordered ``(ky, kx, ci)``, B the ``KN{nr}n`` panels of ``pack_conv_weight_gemm``; A is never
  materialized: the microkernel reads each output pixel's input through a table of row
  pointers, one per *segment* (a run of K that is contiguous in memory: a pixel's channels,
  or with ``row_segments`` a whole kernel row of an already padded input), a padding tap
  pointing at a zero page.
* ``depthwise`` - one input channel per output channel (``channels == out_channels``), the
  weight stored ``[kh*kw, ceil(C/W)*W]`` (tap-major, channels padded to the vector width).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ziggurat.backends.cpu.isa import Isa, parse_isa
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpecError, checked_dequantization, checked_quantized_output
from ziggurat.backends.cpu.kernels.microkernel import Epilogue
from ziggurat.backends.cpu.kernels.unary import normalize_unary_params

KINDS = ("igemm", "depthwise")


class ConvSpecError(ValueError):
    """A convolution specification is inconsistent."""


@dataclass(frozen=True)
class ConvSpec:
    kind: str
    batch: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    out_channels: int
    kh: int
    kw: int
    sh: int = 1
    sw: int = 1
    ph: int = 0
    pw: int = 0
    dh: int = 1
    dw: int = 1
    in_pixel: int = 0  # 0: channels
    in_row: int = 0  # 0: in_w * in_pixel
    in_batch: int = 0  # 0: in_h * in_row
    ldc: int = 0  # 0: out_channels
    row_segments: bool = False
    nr: int = 32
    isa: Isa | str = "auto"
    threads: int = 1
    bias: bool = False
    unary: str | None = None
    unary_params: tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    other_pixel: int = 0  # 0: out_channels
    binary_first: bool = False
    #: the batch is given at each call (an ``i64`` after the pointers), up to ``batch``, which
    #: the thread split is planned for (igemm and depthwise: one build serving a dynamic batch)
    batch_runtime: bool = False
    #: depthwise: the input holds uint8 values, read as ``(q - zero_point) * scale`` (float32)
    in_quantization: tuple[float, int] | None = None
    #: depthwise: ``(scale, zero_point, quant_min, quant_max)``, the output quantized and
    #: dequantized after the epilogue (``#fused.requantize``), or with ``store_u8`` stored as its
    #: uint8 integers (``#fused.quantize``)
    requantize: tuple[float, int, int, int] | None = None
    store_u8: bool = False
    #: depthwise: the input holds bf16 values (widened exactly as they are read), and the result
    #: is rounded to bf16 and stored as such: a bf16 depthwise convolution on this float32 kernel
    in_bf16: bool = False
    out_bf16: bool = False
    name: str | None = None

    def __post_init__(self) -> None:
        s = object.__setattr__
        if self.kind not in KINDS:
            raise ConvSpecError(f"ConvSpec.kind must be one of {KINDS}, got {self.kind!r}")
        for f in ("batch", "in_h", "in_w", "channels", "out_h", "out_w", "out_channels", "kh", "kw", "sh", "sw",
                  "dh", "dw", "nr", "threads"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConvSpecError(f"ConvSpec.{f} must be a positive int, got {v!r}")
        if self.ph < 0 or self.pw < 0:
            raise ConvSpecError("ConvSpec: negative padding")
        s(self, "isa", parse_isa(self.isa, host=False))
        s(self, "in_pixel", self.in_pixel or self.channels)
        s(self, "in_row", self.in_row or self.in_w * self.in_pixel)
        s(self, "in_batch", self.in_batch or self.in_h * self.in_row)
        s(self, "ldc", self.ldc or self.out_channels)
        s(self, "other_pixel", self.other_pixel or self.out_channels)
        if self.in_pixel < self.channels:
            raise ConvSpecError(f"ConvSpec.in_pixel={self.in_pixel} < channels={self.channels}")
        if self.ldc < self.out_channels:
            raise ConvSpecError(f"ConvSpec.ldc={self.ldc} < out_channels={self.out_channels}")
        for d, (n_in, n_out, k, st, p, dl) in enumerate(((self.in_h, self.out_h, self.kh, self.sh, self.ph, self.dh),
                                                          (self.in_w, self.out_w, self.kw, self.sw, self.pw, self.dw))):
            if (n_in + 2 * p - dl * (k - 1) - 1) // st + 1 != n_out:
                raise ConvSpecError(f"ConvSpec: output size {n_out} does not match dim {d} geometry")
        if self.batch_runtime and self.kind not in ("igemm", "depthwise"):
            raise ConvSpecError(f"ConvSpec.batch_runtime: a {self.kind} call has a static batch")
        if self.kind == "depthwise" and self.channels != self.out_channels:
            raise ConvSpecError("ConvSpec: a depthwise call has as many output as input channels")
        if self.row_segments and (self.pw != 0 or self.dw != 1 or self.in_pixel != self.channels):
            raise ConvSpecError("ConvSpec.row_segments needs pw=0, dw=1 and dense pixels")
        if isinstance(self.unary_params, Mapping):
            s(self, "unary_params", tuple(sorted(self.unary_params.items())))
        if self.unary is not None:
            s(self, "unary_params", tuple(sorted(normalize_unary_params(self.unary, dict(self.unary_params)).items())))
        if self.binary not in (None, "add", "sub"):
            raise ConvSpecError(f"ConvSpec.binary must be add/sub/None, got {self.binary!r}")
        s(self, "alpha", float(self.alpha))
        if self.in_quantization is not None or self.requantize is not None or self.store_u8:
            if self.kind != "depthwise":
                raise ConvSpecError("ConvSpec: quantized operands are for a depthwise call only")
            try:
                s(self, "in_quantization", checked_dequantization("ConvSpec.in_quantization", self.in_quantization))
                s(self, "requantize", checked_quantized_output("ConvSpec", self.requantize, self.store_u8))
            except GemmSpecError as e:
                raise ConvSpecError(str(e)) from None

        if self.in_bf16 or self.out_bf16:
            if self.kind != "depthwise":
                raise ConvSpecError("ConvSpec: bf16 operands are for a depthwise call only")
            if self.in_quantization is not None or self.requantize is not None or self.store_u8 or self.binary:
                raise ConvSpecError("ConvSpec: a bf16 depthwise call has no quantized operand and no residual")

    # -- derived ------------------------------------------------------------------------
    @property
    def m(self) -> int:
        return self.batch * self.out_h * self.out_w

    @property
    def segments(self) -> int:
        return self.kh if self.row_segments else self.kh * self.kw

    @property
    def seg_len(self) -> int:
        return self.kw * self.channels if self.row_segments else self.channels

    @property
    def k(self) -> int:
        return self.kh * self.kw * self.channels

    @property
    def flops(self) -> int:
        per = self.kh * self.kw * (1 if self.kind == "depthwise" else self.channels)
        return 2 * self.m * self.out_channels * per

    @property
    def epilogue(self) -> Epilogue:
        return Epilogue(bias=self.bias, unary=self.unary, unary_params=self.unary_params, binary=self.binary,
                        alpha=self.alpha, other_rs=self.other_pixel, other_cs=1, binary_first=self.binary_first)

    @property
    def symbol(self) -> str:
        return self.name or "zig_conv_" + self.digest()[:16]

    def digest(self) -> str:
        text = repr(tuple((f.name, getattr(self, f.name)) for f in fields(self) if f.name != "name"))
        return hashlib.sha256(text.encode()).hexdigest()


def conv_spec_from_dict(raw: Mapping[str, Any], isa: Isa, threads: int, name: str) -> ConvSpec:
    """A :class:`ConvSpec` from the fields of a ``loop.gemm`` spec (``kernel`` names the kind)."""
    args = {k: v for k, v in raw.items() if k not in ("kernel",)}
    if "unary_params" in args and isinstance(args["unary_params"], Mapping):
        args["unary_params"] = tuple(sorted(args["unary_params"].items()))
    return ConvSpec(kind=str(raw["kernel"]), isa=isa, threads=threads, name=name, **args)
