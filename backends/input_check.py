"""Checking call-time inputs against the types a module was compiled for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from ziggurat.ir.errors import InputError
from ziggurat.ir.types import dtype_of, fits_shape


def _expected(ty: Attribute) -> tuple[tuple[int, ...], torch.dtype] | None:
    if not isinstance(ty, TensorType):
        return None
    return tuple(int(d) for d in ty.get_shape()), dtype_of(ty)  # pyright: ignore[reportUnknownArgumentType]


class InputSignature:
    """The inputs a module was compiled for, checked on every call.

    Built once per module: the shapes and dtypes are read out of the xDSL types here, so a
    call compares plain tuples (hashing an xDSL type per call cost more than some kernels)."""

    def __init__(self, expected: Sequence[Attribute], names: Sequence[str], *,
                 require_contiguous: bool = False, device: str = "cpu") -> None:
        self.expected = list(expected)
        self.names = list(names)
        self.require_contiguous = require_contiguous
        self.device = device
        self._wants = [_expected(ty) for ty in self.expected]
        self._dynamic = any(w is not None and min(w[0], default=0) < 0 for w in self._wants)

    def _all_match(self, inputs: Sequence[Any]) -> bool:
        """The common case, cheaply: every input matches (the full checks explain a mismatch)."""
        if len(inputs) != len(self._wants):
            return False
        cpu = self.device == "cpu"
        for value, want in zip(inputs, self._wants):
            if want is None:
                continue
            if not isinstance(value, torch.Tensor) or value.dtype != want[1]:
                return False
            if value.shape != want[0] and not (self._dynamic and fits_shape(value.shape, want[0])):
                return False
            if (value.is_cpu if cpu else value.device.type == self.device) is False:
                return False
            if self.require_contiguous and not value.is_contiguous():
                return False
        return True

    def check(self, inputs: Sequence[Any]) -> None:
        """Raise :class:`InputError` naming the first input that does not match."""
        if not self._all_match(inputs):
            _explain_mismatch(inputs, self.expected, self.names, self.require_contiguous, self.device)


def _explain_mismatch(inputs: Sequence[Any], expected: Sequence[Attribute], names: Sequence[str],
                      require_contiguous: bool, device: str) -> None:
    if len(inputs) != len(expected):
        raise InputError(
            f"expected {len(expected)} input(s) ({', '.join(names)}), got {len(inputs)}",
            op="call",
        )
    for i, (value, ty) in enumerate(zip(inputs, expected, strict=True)):
        name = names[i] if i < len(names) else f"arg{i}"
        if not isinstance(ty, TensorType):
            continue
        if not isinstance(value, torch.Tensor):
            raise InputError(f"input {i} ('{name}') must be a tensor {ty}, got {type(value).__name__}",
                             op="call")
        shape, dtype = tuple(int(d) for d in ty.get_shape()), dtype_of(ty)  # pyright: ignore[reportUnknownArgumentType]
        if not fits_shape(value.shape, shape):
            raise InputError(
                f"input {i} ('{name}') has shape {tuple(value.shape)}, but the module was "
                f"compiled for {shape} ({ty}); compile again for this shape",
                op="call",
            )
        if value.dtype != dtype:
            raise InputError(
                f"input {i} ('{name}') has dtype {value.dtype}, but the module was compiled "
                f"for {dtype} ({ty})",
                op="call",
            )
        if value.device.type != device:
            raise InputError(
                f"input {i} ('{name}') is on device {value.device}, but the module runs on "
                f"{device}; move it with .to('{device}')",
                op="call",
            )
        if require_contiguous and not value.is_contiguous():
            raise InputError(
                f"input {i} ('{name}') is not contiguous (strides {value.stride()}); "
                "pass x.contiguous()",
                op="call",
            )
