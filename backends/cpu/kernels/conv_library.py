"""Native convolution calls carried by ``loop.gemm`` ops.

A ``loop.gemm`` whose spec has a ``kernel`` field (``"igemm"`` / ``"depthwise"``) is a
convolution call with the GEMM library's operands and ABI (``a`` = channels-last input,
``b`` = packed weight, ``c`` = channels-last output, ``bias``, ``other`` = residual); its other
spec fields are :class:`ConvSpec` fields.  These calls need no workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.kernels.conv_spec import ConvSpec, conv_spec_from_dict

OFFSET_KEYS = ("a_offset", "b_offset", "c_offset", "bias_offset", "other_offset")


def is_conv_call(raw: Mapping[str, Any]) -> bool:
    return "kernel" in raw


def conv_call_spec(raw: Mapping[str, Any], isa: Isa, threads: int, name: str) -> tuple[ConvSpec, dict[str, int]]:
    fields = dict(raw)
    offsets = {k: int(fields.pop(k)) for k in OFFSET_KEYS if k in fields}
    fields.pop("origins", None)
    return conv_spec_from_dict(fields, isa, threads, name), offsets


def emit_conv_call(module: ir.Module, spec: ConvSpec) -> ir.Function:
    if spec.kind == "igemm":
        from ziggurat.backends.cpu.kernels.conv_igemm import emit_conv_igemm

        return emit_conv_igemm(module, spec)
    from ziggurat.backends.cpu.kernels.depthwise import emit_depthwise

    return emit_depthwise(module, spec)


def conv_profile_shape(spec: ConvSpec) -> str:
    """The profiler's shape column: ``conv kind NxHxWxC->OHxOWxO kKHxKW sS``."""
    text = (f"{spec.kind} {spec.batch}x{spec.in_h}x{spec.in_w}x{spec.channels}->{spec.out_h}x{spec.out_w}"
            f"x{spec.out_channels} k{spec.kh}x{spec.kw} s{spec.sh}")
    flags = [f for f in (spec.unary, spec.binary) if f]
    return text + (" " + ",".join(flags) if flags else "")
