"""C++ symbol names: Itanium demangling (libstdc++'s ``__cxa_demangle``) and splitting of
template-argument and parameter lists.

    demangle("_ZN8nvinfer16ILayer8setInputEiRNS_7ITensorE")
        -> "nvinfer1::ILayer::setInput(int, nvinfer1::ITensor&)"
    split_top_level("int, std::vector<int, std::allocator<int> >, float")
        -> ["int", "std::vector<int, std::allocator<int> >", "float"]
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

from ziggurat.ir.errors import ZigguratError

_OPEN = "<(["
_CLOSE = ">)]"


class DemangleError(ZigguratError):
    """libstdc++'s demangler is missing or refused a name."""


@cache
def _cxa_demangle() -> tuple[Any, Any]:
    name = ctypes.util.find_library("stdc++") or "libstdc++.so.6"
    try:
        lib = ctypes.CDLL(name)
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError as e:
        raise DemangleError(f"cannot load libstdc++ for demangling C++ names ({e})", op="check-tensorrt-api") from e
    fn = lib.__cxa_demangle
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    free = libc.free
    free.argtypes = [ctypes.c_void_p]
    free.restype = None
    return fn, free


@cache
def demangle(mangled: str) -> str:
    """The C++ spelling of ``mangled``; a name that is not mangled comes back as it is.

    GCC clone suffixes (``.constprop.0``, ``.isra.0``, ``.lto_priv.0``, ``.cold``) are dropped."""
    base = mangled.split(".", 1)[0]
    if not base.startswith("_Z"):
        return mangled
    fn, free = _cxa_demangle()
    status = ctypes.c_int(0)
    result = fn(base.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not result:
        return mangled
    try:
        return ctypes.string_at(result).decode()
    finally:
        free(result)


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside any <...>, (...) or [...]; parts stripped, empty parts dropped."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def bracketed(text: str, start: int) -> tuple[str, int]:
    """The text inside the bracket opening at ``text[start]`` and the index after its close."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return text[start + 1:i], i + 1
    raise DemangleError(f"unbalanced brackets in {text!r}", op="check-tensorrt-api")


def template_arguments(name: str, template: str) -> list[str]:
    """The template arguments of the first ``template<...>`` in the demangled ``name``."""
    at = name.find(template + "<")
    if at < 0:
        return []
    inner, _ = bracketed(name, at + len(template))
    return split_top_level(inner)
