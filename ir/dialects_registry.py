"""Every dialect Ziggurat defines, by name, as lazy factories (shared by the
context and the xDSL ``Universe`` entry point)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect


def _torch() -> Dialect:
    from ziggurat.dialects.torch import Torch

    return Torch


def _fused() -> Dialect:
    from ziggurat.dialects.fused import Fused

    return Fused


def _trt() -> Dialect:
    from ziggurat.dialects.trt import TRT

    return TRT


def _kernel() -> Dialect:
    from ziggurat.dialects.kernel import Kernel

    return Kernel


def _loop() -> Dialect:
    from ziggurat.dialects.loop import Loop

    return Loop


ZIGGURAT_DIALECTS: dict[str, Callable[[], Dialect]] = {
    "torch": _torch,
    "fused": _fused,
    "trt": _trt,
    "kernel": _kernel,
    "loop": _loop,
}
