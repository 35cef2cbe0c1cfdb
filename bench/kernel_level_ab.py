"""Model-level A/B of the kernel level: each zoo model is compiled twice and timed interleaved
with eager.

* before: ``graph-opt,prepack-weights,convert-kernel-to-loop``: no kernel level, so the loop
  generation decides what to realize on its lazy values (the rules as they were);
* after: the default pipeline, ``... convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop``:
  ``kernel-fuse`` decides on IR and the loop generation follows ``realize``.

For each model it prints whether the two loop-level IRs are the same text (then the code is
the same and the timing only measures noise), the kernel counts, and median latencies.

    python bench/kernel_level_ab.py [--threads 1] [--rounds 10] [models ...]   (default: the zoo)
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from typing import Any

import torch
import torch.utils._pytree as pytree

import ziggurat
from ziggurat.bench.models import MODELS
from ziggurat.bench.timing import measure_interleaved


def _compile(model: torch.nn.Module, inputs: tuple[Any, ...], threads: int, kernel_level: bool) -> Any:
    if kernel_level:
        return ziggurat.compile(model, inputs, backend="cpu", threads=threads)
    passes = f"graph-opt,prepack-weights{{isa=auto}},convert-kernel-to-loop{{threads={threads}}}"
    return ziggurat.compile(model, inputs, backend="cpu", threads=threads, passes=passes)


def _relative_error(got: Any, want: Any) -> float:
    """max |got - want| / max |want| over every tensor leaf."""
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    worst = 0.0
    for a, b in zip(got_leaves, want_leaves, strict=True):
        if isinstance(b, torch.Tensor) and b.is_floating_point() and b.numel():
            worst = max(worst, float((a - b).abs().max() / b.abs().max().clamp_min(1e-30)))
    return worst


def _kernels(loop_ir: str) -> int:
    return len(re.findall(r"loop\.(?:kernel|gemm) @", loop_ir))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ir-only", action="store_true", help="compare the loop IR, do not time")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print("| model | threads | same loop IR | kernels before/after | eager ms | before ms | after ms | after/before |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models or list(MODELS):
        spec = MODELS[name]
        model, inputs = spec.build(), spec.example_inputs()
        before = _compile(model, inputs, args.threads, kernel_level=False)
        after = _compile(model, inputs, args.threads, kernel_level=True)
        with torch.no_grad():
            ref = model(*inputs)
            for label, fn in (("before", before), ("after", after)):
                error = _relative_error(fn(*inputs), ref)
                if error > spec.tolerance:
                    raise SystemExit(f"{name} {label}: max relative error {error:.2e} > {spec.tolerance:.0e}")
            same = before.ir["loop"] == after.ir["loop"]
            if args.ir_only:
                print(f"| {name} | {args.threads} | {'yes' if same else 'no'} | {_kernels(before.ir['loop'])}/"
                      f"{_kernels(after.ir['loop'])} | | | | |", flush=True)
                continue
            timings = measure_interleaved({"eager": model, "before": before, "after": after}, tuple(inputs),
                                          3, args.rounds, 5.0)
        med = {k: statistics.median(t.samples_ms) for k, t in timings.items()}
        print(f"| {name} | {args.threads} | {'yes' if same else 'no'} | {_kernels(before.ir['loop'])}/"
              f"{_kernels(after.ir['loop'])} | {med['eager']:.3f} | {med['before']:.3f} | {med['after']:.3f} | "
              f"{med['after'] / med['before']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
