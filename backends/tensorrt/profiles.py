"""Optimization profiles: the sizes a TensorRT segment with dynamic dims is built for.

A segment of a function with shape symbols (``dynamic_shapes=``, ``--dim-ranges``) takes
``?`` dims; TensorRT needs, for each such input, the smallest, the tuned-for and the largest
shape (``IOptimizationProfile::setDimensions(kMIN/kOPT/kMAX)``).  They come from the input's
size expressions (``ir/symbolic_shapes.py``) evaluated at the symbols' range ends and hints,
and are kept on the segment as ``ziggurat.trt_profile``::

    ziggurat.trt_profile = [{min = array<i64: 1, 16>, opt = array<i64: 4, 16>, max = array<i64: 64, 16>}]

The emitter turns it into the engine's profile; the reference executor refuses a call
outside it, as TensorRT does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, TensorType, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from ziggurat.ir.errors import InputError
from ziggurat.ir.shape_symbols import ShapeSymbols, evaluate
from ziggurat.ir.symbolic_shapes import symbol_hints

PROFILE_ATTR = "ziggurat.trt_profile"


class ProfileError(ValueError):
    """No profile can be given for a segment input (a size without an expression or a bound)."""


@dataclass(frozen=True)
class InputProfile:
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]

    @property
    def dynamic(self) -> bool:
        return self.min != self.max


def input_profile(value: SSAValue, sizes: Sequence[str] | None, symbols: ShapeSymbols,
                  example: dict[str, int] | None = None) -> InputProfile:
    """The profile of a segment input: each dynamic dim's expression at the symbols' lows, at
    ``example`` (the compile's sizes, the profile's opt; else a point inside the ranges) and at the highs (the smaller
    end as min: an expression may decrease in a symbol)."""
    ty = value.type
    assert isinstance(ty, TensorType)
    shape = ty.get_shape()
    if all(d >= 0 for d in shape):
        static = tuple(int(d) for d in shape)
        return InputProfile(static, static, static)
    if sizes is None or len(sizes) != len(shape):
        raise ProfileError(f"the sizes of {value} ({ty}) have no expression over the shape symbols")
    unbounded = [s.name for s in symbols.symbols if s.high is None]
    if unbounded:
        raise ProfileError(f"symbol '{unbounded[0]}' has no upper bound, which a TensorRT profile needs")
    lows = {s.name: s.low for s in symbols.symbols}
    highs = {s.name: int(s.high) for s in symbols.symbols if s.high is not None}
    hints = {**symbol_hints(symbols.symbols), **(example or {})}
    low, opt, high = [], [], []
    for d, expr in zip(shape, sizes, strict=True):
        if d >= 0:
            low.append(int(d))
            opt.append(int(d))
            high.append(int(d))
            continue
        try:
            at_low, at_opt, at_high = (evaluate(expr, point) for point in (lows, hints, highs))
        except ValueError as e:
            raise ProfileError(f"size '{expr}' of {value}: {e}") from None
        low.append(max(min(at_low, at_high), 0))
        opt.append(at_opt)
        high.append(max(at_low, at_high))
    return InputProfile(tuple(low), tuple(opt), tuple(high))


def profile_attr(profiles: Sequence[InputProfile]) -> ArrayAttr[DictionaryAttr]:
    def arr(v: tuple[int, ...]) -> DenseArrayBase:
        return DenseArrayBase.from_list(i64, list(v))

    return ArrayAttr([DictionaryAttr({"min": arr(p.min), "opt": arr(p.opt), "max": arr(p.max)}) for p in profiles])


def read_profile(func: FuncOp) -> list[InputProfile] | None:
    """The segment's profile, None for a static segment."""
    attr = func.attributes.get(PROFILE_ATTR)
    if not isinstance(attr, ArrayAttr):
        return None
    out: list[InputProfile] = []
    for entry in attr.data:
        assert isinstance(entry, DictionaryAttr)
        values = {}
        for key in ("min", "opt", "max"):
            arr = entry.data[key]
            assert isinstance(arr, DenseArrayBase)
            values[key] = tuple(int(v) for v in arr.get_values())  # pyright: ignore
        out.append(InputProfile(values["min"], values["opt"], values["max"]))
    return out


def check_in_profile(func: FuncOp, profiles: Sequence[InputProfile], shapes: Sequence[Sequence[int]]) -> None:
    """An :class:`InputError` naming the input, the dim, the size and the profile's range for a
    call outside the profile (TensorRT refuses those shapes too)."""
    name = func.sym_name.data
    for i, (p, shape) in enumerate(zip(profiles, shapes, strict=True)):
        if len(shape) != len(p.min):
            raise InputError(f"input #{i} has rank {len(shape)}; the profile of @{name} has rank {len(p.min)}",
                             op=f"@{name}")
        for k, (n, lo, hi) in enumerate(zip(shape, p.min, p.max, strict=True)):
            if not lo <= n <= hi:
                raise InputError(f"input #{i} dim {k} is {n}, outside the optimization profile [{lo}, {hi}] of "
                                 f"@{name}", op=f"@{name}")
