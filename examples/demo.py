"""``make demo``: compile the built-in example model and show every level of the ziggurat.

1. import: the model's ``torch`` dialect IR;
2. the reference interpreter's result against eager;
(later levels — graph rewrites, loop IR, native code, speed — are shown as they exist).
"""

from __future__ import annotations

import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ziggurat  # noqa: E402
from small_cnn import build  # noqa: E402  (examples/small_cnn.py)
from ziggurat.ir.importer import import_torchscript  # noqa: E402
from ziggurat.ir.pipeline import print_module  # noqa: E402


def banner(title: str) -> None:
    print(f"\n{'=' * 8} {title} {'=' * (70 - len(title))}")


def excerpt(text: str, lines: int = 40) -> str:
    rows = text.rstrip().splitlines()
    if len(rows) <= lines:
        return "\n".join(rows)
    return "\n".join(rows[:lines] + [f"    ... ({len(rows) - lines} more lines)"])


def max_rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return float((actual - expected).abs().max() / expected.abs().max().clamp_min(1e-30))


def main() -> int:
    model, inputs = build()
    with torch.no_grad():
        expected = model(*inputs)

    banner("level 1: torch dialect (imported from TorchScript)")
    module = import_torchscript(model, inputs)
    print(excerpt(print_module(module), 60))

    banner("reference interpreter vs eager")
    reference = ziggurat.compile(model, inputs, backend="reference")
    err = max_rel_error(reference(*inputs), expected)
    print(f"max relative error: {err:.3e}")
    ok = err <= 1e-5

    start = time.perf_counter()
    print(f"\n{'OK' if ok else 'MISMATCH'}: demo finished in {time.perf_counter() - start:.2f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
