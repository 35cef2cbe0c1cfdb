"""Model-level A/B of the GEMM planner's B streaming (``gemm_plan.TUNING.stream_b`` and
``b_read_cost``): each model is compiled twice (before: row-outer tiles, no B-read term in
the thread split; after: the planner's defaults) and timed interleaved with eager.

    python bench/gemm_order_ab.py [--threads 1] [--rounds 10] gpt2-small bert-base ...
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

import ziggurat
from ziggurat.backends.cpu.kernels import gemm_plan
from ziggurat.bench.models import MODELS


def _compile(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], threads: int, stream: bool) -> Any:
    tune = gemm_plan.TUNING
    saved = (tune.stream_b, tune.b_read_cost)
    defaults = gemm_plan.Tuning()
    tune.stream_b, tune.b_read_cost = (True, defaults.b_read_cost) if stream else (False, 0.0)
    try:
        return ziggurat.compile(model, inputs, backend="cpu", threads=threads)
    finally:
        tune.stream_b, tune.b_read_cost = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    for name in args.models:
        spec = MODELS[name]
        model, inputs = spec.build(), spec.example_inputs()
        fns: dict[str, Callable[..., Any]] = {
            "eager": model,
            "before": _compile(model, inputs, args.threads, stream=False),
            "after": _compile(model, inputs, args.threads, stream=True),
        }
        times: dict[str, list[float]] = {k: [] for k in fns}
        with torch.no_grad():
            ref = model(*inputs)
            for k, f in fns.items():
                torch.testing.assert_close(f(*inputs), ref, rtol=1e-3, atol=1e-3, msg=lambda m: f"{k}: {m}")
            t = time.perf_counter()
            model(*inputs)
            reps = max(1, int(0.05 / (time.perf_counter() - t)))
            for _ in range(args.rounds):
                for k, f in fns.items():
                    t = time.perf_counter()
                    for _ in range(reps):
                        f(*inputs)
                    times[k].append((time.perf_counter() - t) / reps * 1e3)
        eager = statistics.median(times["eager"])
        print(f"{name} threads={args.threads}: " + "  ".join(
            f"{k} {statistics.median(v):.3f} ms (min {min(v):.3f}) x{eager / statistics.median(v):.2f}"
            for k, v in times.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
