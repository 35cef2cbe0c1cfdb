"""Print the vecmath accuracy tables (the ones in the docstring of backends/cpu/vecmath/__init__.py).

    /work/main/.venv/bin/python tests/cpu_vecmath/measure_accuracy.py [--target avx512|avx2|scalar] [--kinds ...]

f32 columns: max relative error vs float64 truth, max ulp vs truth, max relative error vs
torch eager float32, torch eager's own max relative error vs truth on the same inputs, and
the input where our error peaks.  The f64 table is against a 30-digit mpmath truth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu_vecmath.accuracy import F64_KINDS, SMOOTH_KINDS, Measurement, kernels, measure, opinfo_samples  # noqa: E402
from cpu_vecmath.references import OPINFO_NAME, f64_points, inputs, max_rel_f64, pow_grid, rel_err, ulp_err  # noqa: E402

#: what each f32 sweep covers beyond the common set (see references.inputs)
DOMAIN: dict[str, str] = {
    "log": "+ (0, 3e38]", "log2": "+ (0, 3e38]", "log10": "+ (0, 3e38]", "sqrt": "+ (0, 3e38]",
    "rsqrt": "+ (0, 3e38]", "log1p": "+ (-1, 3e38]", "exp": "+ [-104, 89]", "expm1": "+ [-104, 89]",
    "exp2": "+ [-150, 128]", "erf": "+ [-15, 15]", "erfc": "+ [-15, 15]", "gelu_erf": "+ [-15, 15]",
    "gelu_tanh": "+ [-15, 15]", "sin": "all finite", "cos": "all finite",
}
RULE = "=============  =============  =========  =====  =========  =========  =============="


def f32_rows(target: str, kinds: list[str], scale: float = 1.0) -> list[Measurement]:
    k = kernels(target)
    samples = opinfo_samples({OPINFO_NAME[kd] for kd in kinds})
    out = []
    for kind in kinds:
        x = inputs(kind, scale)
        extra = samples.get(OPINFO_NAME[kind])
        if extra is not None:
            x = torch.cat([x, extra])
        out.append(measure(k, kind, x))
    return out


def f32_table(rows: list[Measurement]) -> str:
    lines = [RULE, "function       domain         max rel    ulp    vs torch   torch f32  worst at x", RULE]
    for m in rows:
        lines.append(f"{m.kind:<13s}  {DOMAIN.get(m.kind, ''):<13s}  {m.max_rel:9.2e}  {m.max_ulp:5.2f}  "
                     f"{m.max_rel_vs_eager:9.2e}  {m.eager_max_rel:9.2e}  {m.x_at_max_rel:.7g}")
    lines.append(RULE)
    return "\n".join(lines)


def pow_row(target: str) -> str:
    k = kernels(target)
    x, y = pow_grid()
    got = k.binary("pow", x, y)
    truth = torch.pow(x.double(), y.double())
    rel, ulp = rel_err(got, truth), ulp_err(got, truth)
    i = int(rel.argmax())
    return (f"pow(x, y) f32: max rel {float(rel[i]):.2e}, max ulp {float(ulp.max()):.2f} over {x.numel()} pairs "
            f"(worst at x={x[i].item():.7g}, y={y[i].item():.7g})")


def f64_table(target: str) -> str:
    k = kernels(target, "f64", full=False)
    rule = "==============  =========  =========="
    lines = [rule, "function        max rel    worst at x", rule]
    for kind in F64_KINDS:
        x = f64_points(kind, scale=8.0)
        if kind == "gelu_tanh":
            x = x[x > -3].contiguous()
        err, at = max_rel_f64(k, kind, x)
        lines.append(f"{kind + (' x>-3' if kind == 'gelu_tanh' else ''):<14s}  {err:9.2e}  {at:.6g}")
    lines.append(rule)
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="avx512")
    ap.add_argument("--kinds", nargs="*", default=list(SMOOTH_KINDS))
    ap.add_argument("--no-f64", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"f32, target={args.target}")
    rows = f32_rows(args.target, args.kinds)
    print(f32_table(rows))
    bad = [m for m in rows if m.consistency_violations]
    for m in bad:
        print(f"eager-inconsistent points for {m.kind}: {m.consistency_violations}")
    print(pow_row(args.target))
    if not args.no_f64:
        print(f"\nf64, target={args.target}")
        print(f64_table(args.target))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
