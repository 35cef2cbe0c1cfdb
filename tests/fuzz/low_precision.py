"""The fuzzer's low-precision configurations (``cpu-avx512-bf16``, ``ref-bf16``,
``cpu-avx512-fp16``, ``ref-fp16``, ...): a program compiled with ``precision="bf16"`` (or
``"fp16"``) against eager float32, with a tolerance sized at that type's rounding.

``precision=`` promises eager autocast's numerics, not its bits: a folded batch-norm or a
GEMM's order of sums rounds at other points (README, Low precision).  So the reference stays
eager float32 (``e32``) and the tolerance comes from two measurements of how far the
precision's rounding moves each element:

* ``autocast``: eager itself under ``torch.autocast("cpu", dtype=...)``;
* ``pushed``: eager float32 with every float value the program computes (inside nodes too)
  and every float constant times ``1 +- delta`` as it is made, ``delta`` the size of a rounding
  (``2**-8`` for bf16, ``2**-11`` for float16), with random signs and their mirror, and all one
  way up and down.  Constants too: autocast rounds a float32 weight to the 16-bit type where a
  GEMM reads it, and a batch norm folded into the weight rounds the folded weight instead, once
  as well; a constant that happens to be exact in 16 bits (the fuzzer's grid values) is the one
  case where only the folded weight rounds (seed 83, program 283: a folded 16-bit convolution
  whose sum cancels 2.8x-scaled grid weights, 15 float16 ulps from eager's result).

An element is masked when one of those changes its class (NaN, +-inf; for int/bool outputs,
its value) or moves it by more than 5 % of its magnitude plus 1 % of the output's scale: it
sits on a discontinuity that bf16 rounding may cross.  The others must satisfy
``|z - e32| <= K * noise + floor * (|e32| + scale)`` (``floor`` ``2**-6`` for bf16, ``2**-9``
for float16), where ``noise`` is the largest move
measured: this catches what the low-precision paths can get wrong outright (a panel packed
from the wrong rows, a residual added twice, a cast that truncates) and not one rounding more.

One value has no low-precision answer at all: a convolution by a weight holding inf or NaN.
torch 2.13's bf16 ``conv3d`` returns finite values there, some near bf16's maximum, that change
from one call to the next (fuzz seed 174, program 28), and Ziggurat runs such a convolution as
eager's op (``padded_taps``).  ``undefined`` runs replace each such convolution's result by
large values of either sign and by random ones; whatever they move is masked, as the rounding
runs' jumps are, and the elements that do not depend on it stay checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tests.fuzz.execute import build_module, flatten_outputs, run_eager, run_statements
from tests.fuzz.program import Program
from tests.fuzz.tolerance import (JUMP_REL, JUMP_SCALE, Verdict, _class, _mismatch, compare_each, jitter, kind_verdict,
                                  within_tolerance)

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
#: relative size of a rounding step (bf16's ulp is 2**-7 relative, float16's 2**-10; half of it rounds)
DELTA = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}
K_LOW = 4.0
#: floor of the tolerance, relative to the element and to the output's scale
FLOOR = {"bf16": 2.0 ** -6, "fp16": 2.0 ** -9}


class AutocastRefused(Exception):
    """Eager itself raises on the program under autocast (``heaviside`` of a bf16 and a float32
    tensor): there is no low-precision answer to compare with."""


@dataclass
class LowReference:
    """Eager under autocast, and eager float32 with rounding-sized pushes (each a list of outputs)."""

    autocast: list[Any]
    pushed: list[list[Any]] = field(default_factory=list)
    precision: str = "bf16"
    #: runs with each convolution by a non-finite weight replaced (empty when there is none)
    undefined: list[list[Any]] = field(default_factory=list)


#: what ``undefined`` runs put in place of a convolution by a non-finite weight: huge values of
#: either sign (a comparison after it flips one way or the other) and random ones
UNDEFINED_FILLS = (1e30, -1e30, None)


class _UndefinedConvolutions(TorchDispatchMode):
    """Replaces the result of every convolution whose weight holds inf or NaN by ``fill``
    (random values where None); ``seen`` says whether there was one."""

    def __init__(self, fill: float | None) -> None:
        super().__init__()
        self.fill = fill
        self.seen = False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func is not torch.ops.aten.convolution.default:
            return out
        weight = args[1]
        if not isinstance(weight, torch.Tensor) or bool(torch.isfinite(weight).all()):
            return out
        self.seen = True
        if self.fill is None:
            g = torch.Generator().manual_seed(out.numel())
            return torch.randn(out.shape, generator=g, dtype=out.dtype)
        return torch.full_like(out, self.fill)


def undefined_runs(program: Program, inputs: tuple[torch.Tensor, ...]) -> list[list[Any]]:
    """Eager float32 with each convolution by a non-finite weight replaced by each of
    ``UNDEFINED_FILLS``; none when the program runs no such convolution.  Each run builds
    the module afresh: a program may write into its own constants."""
    runs: list[list[Any]] = []
    for fill in UNDEFINED_FILLS:
        mode = _UndefinedConvolutions(fill)
        with mode:
            run = run_eager(build_module(program), inputs)
        if not mode.seen:
            return []
        runs.append(run)
    return runs


def low_reference(program: Program, inputs: tuple[torch.Tensor, ...], precision: str = "bf16") -> LowReference:
    from tests.fuzz.execute import clone_inputs

    module = build_module(program)
    delta = DELTA[precision]
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=DTYPES[precision]):
            autocast = flatten_outputs(module(*clone_inputs(inputs)))
    except Exception as e:  # noqa: BLE001 - any refusal of eager's own
        raise AutocastRefused(str(e)) from e
    pushed: list[list[Any]] = []
    for seed in (7, 8):
        for push in (delta, -delta):
            g = torch.Generator().manual_seed(seed)
            pushed.append(run_statements(program, inputs, lambda t, _ops: jitter(t, push, g), inner=True,
                                         constants=True))
    for push in (delta, -delta):
        pushed.append(run_statements(program, inputs, lambda t, _ops: jitter(t, push, None), inner=True,
                                     constants=True))
    return LowReference(autocast, pushed, precision, undefined_runs(program, inputs))


def compare_low(outputs: Any, e32: list[Any], low: LowReference, float32_runs: Sequence[list[Any]] = ()) -> Verdict:
    """``outputs`` against ``e32``; ``float32_runs`` (float64 eager, the rounding-noise runs of
    the float32 reference) count as noise too: ops autocast leaves in float32 run in float32
    (``cross(x, x)`` is exactly 0 in float64 and in Ziggurat, -5e-7 in eager; seed 21, 363)."""
    return compare_each(outputs, len(e32), lambda z, i: _compare_one(
        z, e32[i], [run[i] for run in [low.autocast, *low.pushed, *float32_runs] if i < len(run)], i,
        FLOOR[low.precision], [run[i] for run in low.undefined if i < len(run)]))


def _compare_one(z: Any, e: Any, others: list[Any], i: int, floor: float, undefined: list[Any]) -> Verdict:
    """``others`` are the noise runs; ``undefined`` runs mask what they move and add no noise."""
    decided = kind_verdict(z, e, i)
    if decided is not None:
        return decided
    assert isinstance(z, torch.Tensor) and isinstance(e, torch.Tensor)
    runs = [o.detach() for o in others if isinstance(o, torch.Tensor) and tuple(o.shape) == tuple(e.shape)]
    replaced = [o.detach() for o in undefined if isinstance(o, torch.Tensor) and tuple(o.shape) == tuple(e.shape)]
    if not e.is_floating_point():
        mask = torch.zeros(e.shape, dtype=torch.bool)
        for o in runs + replaced:
            mask |= o.to(e.dtype) != e
        keep = ~mask
        verdict = Verdict(True, compared=int(keep.sum()), masked=int(mask.sum()))
        bad = keep & (z != e)
        return _mismatch(verdict, i, z, e, bad, None) if bool(bad.any()) else verdict
    ed, zd = e.detach().double(), z.detach().double()
    finite = ed[torch.isfinite(ed)].abs()
    scale = float(finite.max()) if finite.numel() else 0.0
    ce = _class(ed)
    mask = torch.zeros(e.shape, dtype=torch.bool)
    noise = torch.zeros_like(ed)
    for o in runs:
        od = o.double()
        both = torch.isfinite(od) & torch.isfinite(ed)
        move = (od - ed).abs()
        mask |= (_class(od) != ce) | (both & (move > JUMP_REL * ed.abs() + JUMP_SCALE * scale))
        noise = torch.maximum(noise, torch.where(both, move, torch.zeros_like(move)))
    for o in replaced:
        od = o.double()
        mask |= (_class(od) != ce) | (torch.isfinite(od) & torch.isfinite(ed) & (od != ed))
    keep = ~mask
    verdict = Verdict(True, compared=int(keep.sum()), masked=int(mask.sum()))
    bad_class = keep & (_class(zd) != ce)
    if bool(bad_class.any()):
        return _mismatch(verdict, i, z, e, bad_class, None, "nan/inf mismatch")
    tol = (K_LOW * noise + floor * (ed.abs() + scale)).clamp_min(2.0 ** -64)
    return within_tolerance(verdict, i, z, e, keep & (ce == 0), tol)
