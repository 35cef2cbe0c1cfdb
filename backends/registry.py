"""Backends by name (``ziggurat.compile(..., backend=<name>)``)."""

from __future__ import annotations

import importlib
from typing import Any

from ziggurat.ir.errors import ZigguratError

# name -> "module:Class"
_BACKENDS: dict[str, str] = {
    "reference": "ziggurat.backends.reference:ReferenceBackend",
    "cpu": "ziggurat.backends.cpu.backend:CpuBackend",
    "tensorrt": "ziggurat.backends.tensorrt.backend:TensorRTBackend",
    "tensorrt-reference": "ziggurat.backends.tensorrt.backend:TensorRTReferenceBackend",
}


def register_backend(name: str, target: str) -> None:
    _BACKENDS[name] = target


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def backend_class(name: str) -> Any:
    target = _BACKENDS.get(name)
    if target is None:
        raise ZigguratError(
            f"unknown backend '{name}'; known backends: {', '.join(backend_names())}",
            op="compile",
        )
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def get_backend(name: str) -> Any:
    return backend_class(name)()


def extra_options(name: str) -> tuple[str, ...]:
    """The options backend ``name`` takes besides ``CompileOptions``'s own (its ``extra_options``)."""
    return tuple(getattr(backend_class(name), "extra_options", ()))
