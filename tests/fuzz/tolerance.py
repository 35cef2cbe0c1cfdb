"""Comparing Ziggurat's outputs with eager's, with tolerances justified per output.

For each output the reference is eager float32 (``e32``).  Three more eager runs size the
tolerance and find the elements no implementation can be held to:

* ``e64``: the same graph in float64 (float inputs, buffers and ``torch.float32`` casts
  promoted; default dtype float64);
* ``small``: two runs on the float inputs perturbed by +-2**-21 relative (about 4 ulp),
  and two runs in which every float value the program computes is perturbed by +-2**-22
  as it is made (the values made inside a node too: a composite op such as tanhshrink,
  x - tanh(x), rounds its tanh like any other), times sqrt(n) where each element combines
  n operand elements (what another implementation's rounding and summation order do;
  values that are exact multiples of 1/64 are left alone, any implementation computes
  those exactly, and a value
  of grid operands within rounding distance of a grid value is also taken as that value,
  which an exact implementation returns where eager rounds its way there); they
  measure how much the graph amplifies rounding-sized changes, cancellations included;
* ``alternates``: eager once more with every op reading its tensors in a non-contiguous
  layout, so its element-wise kernels take their scalar loops: where those and the vector
  loops disagree (gelu of +inf, the sign of softshrink's zero, hardtanh_backward of NaN),
  the difference is eager's own and counts like ``small``'s; and eager with the sign of
  every NaN read the other way by ``signbit``/``copysign`` (IEEE 754 leaves a NaN result's
  sign unspecified and eager's kernels disagree on it: ``sigmoid(nan)`` is -nan);
* ``big``: runs perturbed by +-2**-16 (about 128 ulp), which find discontinuities
  (comparisons, rounding, casts to int, argmax, remainder) that sit close to their
  threshold: the float inputs jittered with random signs, and every computed float value
  jittered as it is made (an intermediate that another implementation rounds one ulp
  the other way, ``remainder(7, -0.05000007)`` against ``remainder(7, -0.04999995)``);
  each with its mirror (the same signs negated), so that every element is pushed both ways;
  and every computed value jittered with one sign, up and then down: where random signs
  cancel along a chain of nodes (``sin(asin(x)) >= x``: asin's value pushed up and sin's
  down moves the result by less than half an ulp of ``x``, in both mirrors) pushing every
  value the same way moves it.  Each push and its mirror form a pair (``mirrors``): where the two move an element
  unevenly, by more than its tolerance, the element depends on a discontinuity upstream
  even when the move is too small for the 5 % test (a remainder flipped inside a
  log_softmax's row).

Float elements: ``|z - e32| <= K * noise + R * eps * |e64| + A * eps * max|e64|`` where
``noise = max(|e32 - e64|, |e32 - small|)`` elementwise: eager's own error, and its
sensitivity to rounding-sized changes, times ``K``; plus ``R`` float32 ulps of the element
(the vector math library is within 3.5 ulp per function, bounds.py) and ``A`` ulps of the
output's scale (cancellation in reductions and GEMMs, whose summation order differs).
An element is *masked* (not compared) when the perturbed or float64 runs disagree with
``e32`` about its class (NaN, +-inf, or, for int/bool outputs, its value), or when a
``big`` perturbation moves it by more than 5 % of its magnitude (plus 1 % of the output's
scale): such an element sits on a discontinuity and rounding alone may flip it.
A difference under 2**-64 always passes (saturated tails, e.g. gelu far below zero, and
denormals differ between correct formulations).  Integer and boolean elements must be
bit-exact.  ``python -m tests.fuzz.run`` records the
largest ``|z - e32| / tol`` among passing comparisons (the margin), see the summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from tests.fuzz.hidden_rounding import current_hidden

EPS = 2.0 ** -23
#: differences below this are equal: saturated tails (gelu/silu/exp far out, denormals)
#: differ between correct float32 formulations
TINY = 2.0 ** -64
K_NOISE = 8.0
R_ULPS = 16.0
A_ULPS = 16.0
SMALL_DELTA = 2.0 ** -21
STEP_DELTA = 2.0 ** -22
BIG_DELTA = 2.0 ** -16
JUMP_REL, JUMP_SCALE = 0.05, 0.01
#: a mirrored push whose two moves differ by this share of the larger one is a kink (``_kinks``)
KINK_ASYMMETRY = 0.25


@dataclass
class Reference:
    """Eager results on one input set: float32, float64 and the perturbed runs."""

    e32: list[Any]
    e64: list[Any] | None
    small: list[list[Any]]
    #: the ``big`` runs (each a list of outputs)
    big: list[list[Any]]
    #: eager again on other kernels (its scalar loops instead of its vector ones): where it
    #: disagrees with ``e32`` eager has no one answer, so the difference counts as noise
    alternates: list[list[Any]] = field(default_factory=list)
    #: pairs of ``big`` runs pushed opposite ways (one sign pattern and its mirror)
    mirrors: list[tuple[list[Any], list[Any]]] = field(default_factory=list)
    #: the low-precision measurements (``low_precision.LowReference``) per precision, made when
    #: a ``-bf16``/``-fp16`` configuration first needs them
    low: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    ok: bool
    reason: str = ""  # a short class for grouping ("value mismatch", "dtype mismatch" ...)
    detail: str = ""
    compared: int = 0
    masked: int = 0
    #: the largest |z - e32| / tol over compared float elements (the margin used)
    ratio: float = 0.0
    notes: list[str] = field(default_factory=list)


#: the chance, at most, that float32 rounding put every value a tensor holds on the grid by
#: coincidence, for the tensor to count as computed exactly (``on_grid``)
GRID_CHANCE_LOG2 = -24
#: the chance, at most, that a value lies within the rounding distance of a grid value by
#: coincidence, for ``_exact_alternative`` to take that grid value as the exact answer
SNAP_CHANCE = 2.0 ** -10


def on_grid(t: torch.Tensor) -> bool:
    """Every finite value a multiple of 1/64 below 2**16: results any IEEE implementation
    computes exactly from exact operands (sums and products of the grid inputs, floors).
    Unless rounding put them there by coincidence: a float32 near 45114 is a multiple of
    1/64 one time in four (its ulp is 1/256), so ``var`` of 361 integers, 45114.53125 where
    float64 gives 45114.5316, looked exact and was not perturbed (seed 11 program 6593).
    A value of magnitude in [2**(e-1), 2**e) lands on the grid by chance with probability
    64 ulp = 2**(e - 18); the tensor counts when the product over its nonzero values is
    at most 2**GRID_CHANCE_LOG2 (a scalar never does, two values of magnitude under 8 do)."""
    finite = t[torch.isfinite(t)]
    if not bool(((finite * 64).frac() == 0).all() and (finite.abs() < 2**16).all()):
        return False
    nonzero = finite[finite != 0]
    chance_log2 = (torch.frexp(nonzero.to(torch.float32)).exponent - 18).clamp_max(0).sum()
    return int(chance_log2) <= GRID_CHANCE_LOG2


def jitter(t: torch.Tensor, delta: float, g: torch.Generator | None, keep_grid: bool = False) -> torch.Tensor:
    """``t`` times (1 +- delta), random signs per element (float32 only; a new tensor);
    ``g`` None: every element times (1 + delta), one sign for all; ``keep_grid``: leave
    exactly computed values (``on_grid``) alone."""
    if t.dtype != torch.float32 or (keep_grid and on_grid(t)):
        return t
    if g is None:
        return t * (1 + delta)
    signs = torch.randint(0, 2, t.shape, generator=g).to(torch.float32) * 2 - 1
    return t * (1 + delta * signs)


def rounding_step(t: torch.Tensor, operands: list[torch.Tensor], g: torch.Generator,
                  hidden: torch.Tensor | None = None) -> torch.Tensor:
    """Another implementation's rounding of a value made from ``operands``: +-2**-22
    relative, times sqrt(n) for a value that combines n operand elements per element (a
    reduction, a product, a convolution: summation orders differ, errors random-walk);
    ``hidden`` (by default ``hidden_rounding.current_hidden()``): the magnitude of
    intermediates the op computes inside (a norm kernel's ``x * a`` and shift), rounded as
    well: +-delta times it."""
    hidden = current_hidden() if hidden is None else hidden
    per_element = max((o.numel() for o in operands if o.is_floating_point()), default=1) / max(1, t.numel())
    delta = STEP_DELTA * max(1.0, per_element) ** 0.5
    out = jitter(t, delta, g, keep_grid=True)
    floats = [o for o in operands if o.is_floating_point()]
    out = _exact_alternative(t, out, floats, delta)
    out = _cancelled_to_zero(t, out, floats, delta)
    if hidden is not None and t.dtype == torch.float32 and hidden.shape == t.shape:
        signs = torch.randint(0, 2, t.shape, generator=g).to(torch.float64) * 2 - 1
        out = (out.double() + delta * hidden * signs).to(torch.float32)
    return out


def _exact_alternative(t: torch.Tensor, out: torch.Tensor, floats: list[torch.Tensor], delta: float) -> torch.Tensor:
    """Where every float operand is on the grid and an element of ``t`` lies within rounding
    distance (``delta`` times the operands' magnitude) of a grid value, another
    implementation computes that grid value exactly: eager's ``var_mean`` returns 2**-55
    for the mean of eight values in {-1, 0, 1} that sum to 0 (its Welford updates round),
    a compiler summing them returns 0, and a relative jitter of 2**-55 cannot say that both
    are the same answer (seed 3 program 3650)."""
    if t.dtype != torch.float32 or not floats or on_grid(t) or not all(on_grid(o) for o in floats):
        return out
    finite = [o[torch.isfinite(o)].abs() for o in floats]
    scale = max((float(f.max()) for f in finite if f.numel()), default=0.0)
    if 2 * 64 * delta * scale > SNAP_CHANCE:
        # every value lies that close to a grid value (the var of seed 11 program 6593:
        # 2**-22 sqrt(361) times 4038 is 0.018, more than half the grid's spacing)
        return out
    snapped = torch.round(t * 64) / 64
    near = torch.isfinite(t) & ((t - snapped).abs() <= delta * scale) & (snapped.abs() < 2**16)
    return torch.where(near, snapped, out)


def _cancelled_to_zero(t: torch.Tensor, out: torch.Tensor, floats: list[torch.Tensor], delta: float) -> torch.Tensor:
    """Where an element of ``t`` is within rounding distance of 0 (``delta`` times the float
    operands' magnitude: a sum that cancelled), another implementation's order may cancel it
    exactly: 0.  A jitter keeps its sign, and a ``sgn`` of it and a comparison made from that
    (``isclose(x, sgn(v))``) never saw the 0 the CPU backend's order gave (seed 31 program
    256: the backward of a softmax, 2.98e-8 in eager, 1.84e-8 in float64, 0.0 in ours)."""
    if t.dtype != torch.float32 or not floats:
        return out
    finite = [o[torch.isfinite(o)].abs() for o in floats]
    scale = max((float(f.max()) for f in finite if f.numel()), default=0.0)
    if scale == 0.0:
        return out
    near = torch.isfinite(t) & (t != 0) & (t.abs() <= delta * scale)
    return torch.where(near, torch.zeros_like(out), out)


def perturbed(inputs: Sequence[torch.Tensor], delta: float, seed: int) -> tuple[torch.Tensor, ...]:
    """Float inputs jittered, each input on its own (aliased example inputs are a
    coincidence of the examples, not a property of the program); layouts kept."""
    from tests.fuzz.execute import clone_inputs

    g = torch.Generator().manual_seed(seed)
    out = []
    for t in inputs:
        copy = clone_inputs([t])[0]
        if copy.dtype == torch.float32:
            copy.copy_(jitter(copy, delta, g))
        out.append(copy)
    return tuple(out)


def _class(t: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 nan, 2 +inf, 3 -inf."""
    c = torch.zeros(t.shape, dtype=torch.int8)
    c[torch.isnan(t)] = 1
    c[t == float("inf")] = 2
    c[t == float("-inf")] = 3
    return c


def _as64(value: Any) -> torch.Tensor | None:
    return value.detach().to(torch.float64) if isinstance(value, torch.Tensor) else None


def _mask(e32: torch.Tensor, others: list[torch.Tensor], bigs: list[torch.Tensor], scale: float) -> torch.Tensor:
    """Elements whose reference is not robust (True = masked)."""
    mask = torch.zeros(e32.shape, dtype=torch.bool)
    if e32.is_floating_point():
        c32 = _class(e32)
        for o in others:
            mask |= _class(o) != c32
        for big in bigs:
            finite = torch.isfinite(big) & torch.isfinite(e32)
            jump = (big - e32).abs() > JUMP_REL * e32.abs() + JUMP_SCALE * scale
            mask |= (_class(big) != c32) | (finite & jump)
    else:
        for o in others + bigs:
            mask |= o.to(e32.dtype) != e32 if o.shape == e32.shape else torch.ones_like(mask)
    return mask


def _kinks(e: torch.Tensor, tol: torch.Tensor, mirrors: list[tuple[Any, Any]]) -> torch.Tensor:
    """Elements (True) where pushing every value by +-2**-16 moves the result unevenly, by
    more than ``tol``: a smooth function moves by the same amount both ways (to first
    order), so the element depends on a discontinuity upstream, which rounding alone may
    cross (``x % v`` with ``x / v`` within 2**-16 of an integer flips one element, and a
    ``log_softmax`` after it moves the whole row by a small fraction, too little for the
    5 % jump test; seed 10, program 3019).

    Also where a push moves the element by more than ``tol`` and the two moves differ by
    :data:`KINK_ASYMMETRY` of the larger one: to first order a smooth element moves as far
    both ways, whatever its sensitivity, so such an element crossed a discontinuity one way
    and not the other, though by less than ``tol`` (a quantizer's ties through a second
    linear and ``topk``: moves of +5.4e-4 and -1.09e-3, tolerance 5.9e-4; seed 165,
    program 61)."""
    kinks = torch.zeros(e.shape, dtype=torch.bool)
    for plus, minus in mirrors:
        if not (isinstance(plus, torch.Tensor) and isinstance(minus, torch.Tensor)
                and plus.shape == e.shape and minus.shape == e.shape):
            continue
        p, m = plus.detach().double(), minus.detach().double()
        uneven = ((p - e) + (m - e)).abs()
        move = torch.maximum((p - e).abs(), (m - e).abs())
        lopsided = (move > tol) & (uneven > KINK_ASYMMETRY * move)
        kinks |= torch.isfinite(p) & torch.isfinite(m) & torch.isfinite(e) & ((uneven > tol) | lopsided)
    return kinks


def kind_verdict(z: Any, e32: Any, i: int) -> Verdict | None:
    """The verdict on output ``i`` when it is decided before any tolerance: eager's output
    is not a tensor (compared by value), or ``z`` is not a tensor of eager's shape and dtype."""
    if not isinstance(e32, torch.Tensor):
        same = z == e32 or (isinstance(z, torch.Tensor) and z.numel() == 1 and z.item() == e32)
        return Verdict(bool(same), "" if same else "value mismatch", f"output {i}: {z!r} vs eager {e32!r}")
    if not isinstance(z, torch.Tensor):
        return Verdict(False, "not a tensor", f"output {i}: got {type(z).__name__}, eager a tensor")
    if tuple(z.shape) != tuple(e32.shape):
        return Verdict(False, "shape mismatch", f"output {i}: shape {list(z.shape)} vs eager {list(e32.shape)}")
    if z.dtype != e32.dtype:
        return Verdict(False, "dtype mismatch", f"output {i}: dtype {z.dtype} vs eager {e32.dtype}")
    return None


def compare_output(z: Any, ref: Reference, i: int) -> Verdict:
    e32 = ref.e32[i]
    decided = kind_verdict(z, e32, i)
    if decided is not None:
        return decided
    assert isinstance(z, torch.Tensor) and isinstance(e32, torch.Tensor)
    z = z.detach()
    e = e32.detach()
    e64 = _as64(ref.e64[i]) if ref.e64 is not None and i < len(ref.e64) else None
    if e64 is not None and tuple(e64.shape) != tuple(e.shape):
        e64 = None
    smalls = [s[i].detach() for s in ref.small + ref.alternates if i < len(s) and isinstance(s[i], torch.Tensor)
              and s[i].shape == e.shape]
    bigs = [b[i].detach() for b in ref.big if i < len(b) and isinstance(b[i], torch.Tensor)
            and b[i].shape == e.shape]
    magnitudes = (e64 if e64 is not None else e.double()).abs()
    finite = magnitudes[torch.isfinite(magnitudes)]
    scale = float(finite.max()) if finite.numel() else 0.0
    others: list[torch.Tensor] = smalls + ([e64.to(e.dtype) if not e.is_floating_point() else e64] if e64 is not None else [])
    if e.is_floating_point():
        others = [o.to(torch.float64) for o in others]
        mask = _mask(e.double(), others, [b.double() for b in bigs], scale)
    else:
        mask = _mask(e, others, bigs, scale)
    keep = ~mask
    n = int(keep.sum())
    verdict = Verdict(True, compared=n, masked=int(mask.sum()))
    if n == 0:
        return verdict
    if not e.is_floating_point():
        bad = keep & (z != e)
        if bool(bad.any()):
            return _mismatch(verdict, i, z, e, bad, None)
        return verdict
    zd, ed = z.double(), e.double()
    cz, ce = _class(zd), _class(ed)
    bad_class = keep & (cz != ce)
    if bool(bad_class.any()):
        return _mismatch(verdict, i, z, e, bad_class, None, "nan/inf mismatch")
    noise = torch.zeros_like(ed)
    for o in others:
        noise = torch.maximum(noise, (ed - o).abs().nan_to_num(0.0, 0.0, 0.0))
    mag = (e64 if e64 is not None else ed).abs().nan_to_num(0.0, 0.0, 0.0)
    tol = K_NOISE * noise + R_ULPS * EPS * mag + A_ULPS * EPS * scale
    tol = tol.clamp_min(TINY)
    kinks = _kinks(ed, tol, [(p[i], m[i]) for p, m in ref.mirrors if i < len(p) and i < len(m)])
    keep &= ~kinks
    verdict.compared, verdict.masked = int(keep.sum()), int((~keep).sum())
    return within_tolerance(verdict, i, z, e, keep & (ce == 0), tol)


def within_tolerance(verdict: Verdict, i: int, z: torch.Tensor, e: torch.Tensor, checked: torch.Tensor,
                     tol: torch.Tensor) -> Verdict:
    """``verdict`` failed at the ``checked`` elements farther from eager than ``tol``, else
    with its margin (the largest ``|z - e| / tol``) set."""
    err = (z.double() - e.double()).abs()
    over = checked & (err > tol)
    if bool(over.any()):
        return _mismatch(verdict, i, z, e, over, tol)
    if bool(checked.any()):
        verdict.ratio = float((err[checked] / tol[checked].clamp_min(1e-300)).max())
    return verdict


def _mismatch(v: Verdict, i: int, z: torch.Tensor, e: torch.Tensor, bad: torch.Tensor, tol: torch.Tensor | None,
              reason: str = "value mismatch") -> Verdict:
    flat = bad.reshape(-1).nonzero()
    first = int(flat[0]) if flat.numel() else 0
    where = tuple(int(k) for k in torch.unravel_index(torch.tensor(first), e.shape)) if e.dim() else ()
    zv, ev = z.reshape(-1)[first].item(), e.reshape(-1)[first].item()
    extra = f", tol {tol.reshape(-1)[first].item():.3g}" if tol is not None else ""
    v.ok = False
    v.reason = reason
    v.detail = (f"output {i} ({str(e.dtype)[6:]}{list(e.shape)}): {int(bad.sum())}/{e.numel()} elements differ; "
                f"at {list(where)} eager {ev!r}, got {zv!r}{extra}")
    return v


def compare(outputs: Any, ref: Reference) -> Verdict:
    return compare_each(outputs, len(ref.e32), lambda z, i: compare_output(z, ref, i))


def compare_each(outputs: Any, count: int, one: Callable[[Any, int], Verdict]) -> Verdict:
    """``one(output, i)`` for each of the ``count`` outputs eager gave: the first failure, or
    the passing verdicts' counts summed and their largest margin."""
    from tests.fuzz.execute import flatten_outputs

    z = flatten_outputs(outputs)
    if len(z) != count:
        return Verdict(False, "output count", f"{len(z)} outputs, eager {count}")
    total = Verdict(True)
    for i in range(len(z)):
        v = one(z[i], i)
        if not v.ok:
            return v
        total.compared += v.compared
        total.masked += v.masked
        total.ratio = max(total.ratio, v.ratio)
    return total

