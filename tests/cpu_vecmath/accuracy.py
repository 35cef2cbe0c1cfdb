"""Accuracy measurement shared by the pytest suite and ``measure_accuracy.py``."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import torch
from llvmlite import ir

from ziggurat.backends.cpu import vecmath

from .harness import Kernels, Target, build_module, cache_dir, compile_module, targets
from .references import EAGER, TRUTH, rel_err, rel_err_vs, ulp_err

#: kinds whose float accuracy is measured (the rest are exact ops compared bit for bit)
SMOOTH_KINDS: tuple[str, ...] = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sigmoid", "silu", "erf", "erfc",
    "gelu_erf", "gelu_tanh", "softplus", "mish", "elu", "selu", "celu", "sin", "cos", "sqrt", "rsqrt",
    "reciprocal",
)
#: exact (bit-identical to eager) kinds and the params used for them
EXACT_KINDS: dict[str, dict[str, float]] = {
    "relu": {}, "relu6": {}, "hardtanh": {"min_val": -1.5, "max_val": 2.0}, "hardswish": {},
    "hardsigmoid": {}, "leaky_relu": {"negative_slope": 0.1}, "abs": {}, "neg": {}, "square": {},
}


def _unary(kind: str, params: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    return lambda b, x: vecmath.apply_unary(b, kind, x, params or {})


REDUCTIONS: dict[str, Callable[[ir.IRBuilder, ir.Value], ir.Value]] = {
    "reduce_add": lambda b, v: vecmath.reduce_add(b, v),
    "reduce_add_seq": lambda b, v: vecmath.reduce_add(b, v, reassoc=False),
    "reduce_max": lambda b, v: vecmath.reduce_max(b, v),
    "reduce_min": lambda b, v: vecmath.reduce_min(b, v),
    "reduce_max_nonan": lambda b, v: vecmath.reduce_max(b, v, propagate_nan=False),
    "reduce_min_nonan": lambda b, v: vecmath.reduce_min(b, v, propagate_nan=False),
}

F64_KINDS: tuple[str, ...] = tuple(k for k in SMOOTH_KINDS if k not in ("sin", "cos"))


@cache
def kernels(target_name: str, elem_name: str = "f32", full: bool = True) -> Kernels:
    """Every unary kind and pow compiled once per target; ``full`` adds the parameter variants."""
    tg: Target = targets()[target_name]
    elem = ir.FloatType() if elem_name == "f32" else ir.DoubleType()
    kinds = SMOOTH_KINDS if elem_name == "f32" else F64_KINDS
    unary = {k: _unary(k) for k in kinds}
    unary.update({k: _unary(k, p) for k, p in EXACT_KINDS.items()})
    binary = {"pow": lambda b, x, y: vecmath.pow(b, x, y)}
    if not full:
        return compile_module(build_module(tg, unary, binary, elem=elem), tg, elem)
    unary["clamp_lo_hi"] = _unary("clamp", {"min": -0.5, "max": 0.25})
    unary["clamp_lo"] = _unary("clamp", {"min": -0.5})
    unary["clamp_hi"] = _unary("clamp", {"max": 0.25})
    unary["clamp_inverted"] = _unary("clamp", {"min": 0.5, "max": -0.5})
    unary["softplus_b2"] = _unary("softplus", {"beta": 2.0, "threshold": 10.0})
    unary["elu_a"] = _unary("elu", {"alpha": 0.7, "scale": 1.5, "input_scale": 0.5})
    for e in (0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5, 1.7):
        unary[f"pow_s{e}"] = _unary("pow", {"exponent": e})
    return compile_module(build_module(tg, unary, binary, elem=elem), tg, elem)


@cache
def reduction_kernels(target_name: str) -> Kernels:
    """Just the reductions (f32), for one target."""
    tg = targets()[target_name]
    return compile_module(build_module(tg, reduce=REDUCTIONS), tg)



@dataclass
class Measurement:
    kind: str
    n: int
    max_rel: float
    x_at_max_rel: float
    max_ulp: float
    max_rel_vs_eager: float  # against eager where eager itself is within 2 ulp of truth
    eager_max_rel: float  # torch f32 vs truth, for context
    consistency_violations: int  # points where |ours - eager| > 1e-6 |truth| + |eager - truth|

    def row(self) -> str:
        return (f"{self.kind:<13s} {self.max_rel:9.2e} {self.max_ulp:6.2f} {self.max_rel_vs_eager:11.2e} "
                f"{self.eager_max_rel:11.2e}   (n={self.n}, worst at x={self.x_at_max_rel!r})")


def _finite_max(t: torch.Tensor) -> float:
    return float(t.max()) if t.numel() else 0.0


def measure(k: Kernels, kind: str, x: torch.Tensor, name: str | None = None) -> Measurement:
    """Error of compiled ``name`` (default: ``kind``) on f32 inputs ``x``."""
    ours = k.unary(name or kind, x)
    truth = TRUTH[kind](x)
    eager = EAGER[kind](x)
    rel = rel_err(ours, truth)
    ulp = ulp_err(ours, truth)
    i = int(rel.argmax())
    vs = rel_err_vs(ours, eager)
    eager_rel = rel_err(eager, truth)
    eager_ok = eager_rel <= 2.0 ** -22
    # consistency with eager where eager is finite and truth is finite: ours may differ by our
    # bound plus eager's own error; where either is not finite, ours must equal truth or eager
    od, ed = ours.double(), eager.double()
    finite = torch.isfinite(truth) & torch.isfinite(eager)
    slack = 1e-6 * truth.abs().clamp_min(2.0 ** -126) + (ed - truth).abs()
    near = (vs <= 2.0 ** -22) & ~ours.isnan()  # e.g. FLT_MAX vs inf at the overflow edge
    bad_finite = finite & ((od - ed).abs() > slack) & ~near
    t32 = truth.float().double()
    same = lambda a, c: (a.isnan() & c.isnan()) | (a == c)  # noqa: E731
    bad_special = ~finite & ~same(od, t32) & ~same(od, ed)
    bad = bad_finite | bad_special
    return Measurement(kind, x.numel(), float(rel[i]), float(x[i]), _finite_max(ulp), _finite_max(vs[eager_ok]),
                       _finite_max(eager_rel), int(bad.sum()))


def opinfo_samples(op_names: Iterable[str], variant: str | None = None) -> dict[str, torch.Tensor]:
    """Flattened float32 CPU sample inputs of torch OpInfos (first positional tensor).

    Generated with a fixed seed, so they are cached on disk per torch version and op list
    (importing torch's OpInfo database alone takes seconds).
    """
    wanted = set(op_names)
    cdir = cache_dir()
    path = None
    if cdir is not None:
        key = hashlib.sha256(repr((torch.__version__, sorted(wanted), variant)).encode()).hexdigest()[:24]
        path = cdir / f"opinfo-{key}.pt"
        if path.exists():
            return torch.load(path)
    samples = _generate_opinfo_samples(wanted, variant)
    if path is not None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        torch.save(samples, tmp)
        os.replace(tmp, path)
    return samples


def _generate_opinfo_samples(wanted: set[str], variant: str | None) -> dict[str, torch.Tensor]:
    from torch.testing._internal.common_methods_invocations import op_db

    from tests.support.opinfo import op_db as fast_db

    fast_db()  # samples without the per-iterator stack walk

    out: dict[str, list[torch.Tensor]] = {}
    torch.manual_seed(0)
    for op in op_db:
        if op.name not in wanted or (variant is not None and op.variant_test_name != variant):
            continue
        for s in op.sample_inputs("cpu", torch.float32):
            t = s.input
            if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.numel():
                out.setdefault(op.name, []).append(t.detach().reshape(-1))
    return {k: torch.cat(v).contiguous() for k, v in out.items()}


def fmt_bound(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2e}"
