"""Print the vecmath accuracy table (the one in backends/cpu/vecmath.py's docstring).

    /work/main/.venv/bin/python tests/cpu_vecmath/measure_accuracy.py [--wide] [--target avx512|avx2|scalar]

Columns: max relative error vs float64 truth, max ulp vs truth, max relative error vs torch
eager float32, and torch eager's own max relative error vs truth on the same inputs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu_vecmath.accuracy import SMOOTH_KINDS, kernels, measure, opinfo_samples  # noqa: E402
from cpu_vecmath.references import OPINFO_NAME, inputs, wide_trig_inputs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wide", action="store_true", help="4x denser sweeps")
    ap.add_argument("--target", default="avx512")
    ap.add_argument("--kinds", nargs="*", default=list(SMOOTH_KINDS))
    args = ap.parse_args()
    torch.set_num_threads(1)
    k = kernels(args.target)
    samples = opinfo_samples({OPINFO_NAME[kd] for kd in args.kinds})
    scale = 4.0 if args.wide else 1.0
    print(f"target={args.target} width={k.target.width}")
    print(f"{'function':<13s} {'max rel':>9s} {'ulp':>6s} {'vs torch':>11s} {'torch f32':>11s}")
    for kind in args.kinds:
        x = inputs(kind, scale)
        extra = samples.get(OPINFO_NAME[kind])
        if extra is not None:
            x = torch.cat([x, extra])
        m = measure(k, kind, x)
        print(m.row() + (f"  eager-inconsistent points: {m.consistency_violations}" if m.consistency_violations else ""))
        if kind in ("sin", "cos"):
            for lim in (1e3, 1e4, 1e5):
                m2 = measure(k, kind, wide_trig_inputs(lim, int(200_000 * scale)))
                print(f"  |x|<={lim:g}: " + m2.row())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
