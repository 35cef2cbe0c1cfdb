"""``make demo``: compile the built-in example model and show every level of the ziggurat.

1. import: the model's ``torch`` dialect IR;
2. graph rewrites: the ``fused`` IR after ``graph-opt`` (batch norms folded, post-ops fused)
   and the CPU backend's ``prepack-weights`` (weights prepacked), checked by the reference
   interpreter against eager;
3. the CPU backend's ``kernel`` IR (each kernel, why its results are kept in memory and in
   which order), run by the reference interpreter and checked against eager;
4. the CPU backend: the ``loop`` IR and native code, run and checked against eager, with the
   speed ratio against eager;
5. the ``explain`` report of the model.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ziggurat  # noqa: E402
from small_cnn import build  # noqa: E402  (examples/small_cnn.py)
from ziggurat.backends.registry import backend_names  # noqa: E402


def banner(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * max(4, 70 - len(title))}")


def excerpt(text: str, lines: int = 40) -> str:
    rows = [r for r in text.rstrip().splitlines() if r.strip()]
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join(rows[:lines] + [f"    ... ({len(rows) - lines} more lines)"])


def max_rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return float((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-30))


def interleaved_median_ms(fns: list[Callable[[], object]], rounds: int = 40) -> list[float]:
    """Median latency of each function, timed in turns (A B A B ...) so drift hits all alike."""
    for fn in fns:
        for _ in range(3):
            fn()
    times: list[list[int]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter_ns()
            fn()
            times[i].append(time.perf_counter_ns() - start)
    return [statistics.median(t) / 1e6 for t in times]


def main() -> int:
    start = time.perf_counter()
    model, inputs = build()
    with torch.no_grad():
        expected = model(*inputs)
    ok = True

    reference = ziggurat.compile(model, inputs, backend="reference", passes="graph-opt,prepack-weights")
    banner("level 1: torch dialect (imported)")
    print(excerpt(reference.ir["torch"], 45))
    banner("level 2: graph rewrites (graph-opt: fold-batchnorm, fuse-post-ops; then prepack-weights)")
    print(excerpt(reference.ir["graph"], 30))
    print("\npass statistics:")
    for pass_name, counters in reference.report.pass_stats.items():
        print(f"  {pass_name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counters.items())))
    err = max_rel_error(reference(*inputs), expected)
    print(f"\nreference interpreter after graph-opt,prepack-weights vs eager: max relative error {err:.3e}")
    ok &= err <= 1e-5

    if "cpu" in backend_names():
        kernels = ziggurat.compile(model, inputs, backend="reference",
                                   passes="graph-opt,prepack-weights,convert-fused-to-kernel,kernel-fuse,kernel-layout")
        banner("level 3: kernel dialect (CPU backend: kernel-fuse, kernel-layout)")
        print(excerpt(kernels.ir["graph"], 40))
        err = max_rel_error(kernels(*inputs), expected)
        print(f"\nreference interpreter at the kernel level vs eager: max relative error {err:.3e}")
        ok &= err <= 1e-5

        torch.set_num_threads(1)  # eager and Ziggurat on one thread each: a like-for-like ratio
        compiled = ziggurat.compile(model, inputs, backend="cpu", threads=1)
        banner("level 4: loop dialect (CPU backend)")
        print(excerpt(compiled.ir.get("loop", "(no loop IR recorded)"), 50))
        if "llvm" in compiled.ir:
            banner("native code: LLVM IR excerpt")
            llvm = [r for r in compiled.ir["llvm"].splitlines() if "<16 x float>" in r or "<8 x float>" in r]
            print(excerpt("\n".join(llvm), 12))
        with torch.no_grad():
            err = max_rel_error(compiled(*inputs), expected)
            eager_ms, native_ms = interleaved_median_ms([lambda: model(*inputs), lambda: compiled(*inputs)])
        banner("native run vs eager (1 thread each, interleaved, median)")
        print(f"max relative error: {err:.3e}")
        print(f"median latency: eager {eager_ms:.3f} ms, ziggurat cpu {native_ms:.3f} ms "
              f"-> speed ratio {eager_ms / native_ms:.2f}x")
        print("\n" + compiled.report.format())
        ok &= err <= 1e-4
    else:
        print("\n(the CPU backend is not available in this checkout)")

    banner("explain")
    backend = "cpu" if "cpu" in backend_names() else "reference"
    print(ziggurat.explain(model, inputs, backend=backend))

    print(f"\n{'OK' if ok else 'MISMATCH'}: demo finished in {time.perf_counter() - start:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
