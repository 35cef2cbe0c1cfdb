"""Model-level A/B of ``fuse-requantize`` on PT2E-quantized models: each model is quantized
once (X86InductorQuantizer, as ``--precision int8``), compiled with the CPU backend's pipeline
and with the same pipeline without the pass, checked bit for bit against each other, and
timed with alternating calls.

    python bench/fuse_requantize_ab.py [--threads 1] [--calls 300] resnet50 mobilenet_v2 bert-base
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import torch

import ziggurat
from ziggurat.bench.models import MODELS
from ziggurat.bench.quantize import quantize_x86


def without_pass(threads: int) -> str:
    """The CPU backend's default pipeline (``isa=auto``, prepacking) without ``fuse-requantize``."""
    return ("graph-opt,widen-half-floats,prepack-weights{isa=auto},convert-fused-to-kernel,kernel-fuse,kernel-layout,"
            f"convert-kernel-to-loop{{isa=auto threads={threads} prepack=true fallback=true}}")


def _bits(out: Any) -> torch.Tensor:
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    return out.contiguous().view(torch.int32)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=300, help="timed calls of each build, alternating")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    failed = False
    for name in args.models:
        spec = MODELS[name]
        inputs = spec.example_inputs()
        quantized = quantize_x86(spec.build(), inputs)
        builds = {"with": ziggurat.compile(quantized, inputs, backend="cpu", threads=args.threads),
                  "without": ziggurat.compile(quantized, inputs, backend="cpu", threads=args.threads,
                                              passes=without_pass(args.threads))}
        stats = builds["with"].report.pass_stats.get("fuse-requantize", {})
        same = torch.equal(_bits(builds["with"](*inputs)), _bits(builds["without"](*inputs)))
        failed |= not same
        times: dict[str, list[float]] = {k: [] for k in builds}
        for _ in range(args.calls):
            for key, build in builds.items():
                start = time.perf_counter()
                build(*inputs)
                times[key].append((time.perf_counter() - start) * 1e3)
        with_ms, without_ms = (statistics.median(times[k]) for k in ("with", "without"))
        print(f"{name:14s} with {with_ms:8.3f} ms  without {without_ms:8.3f} ms  ratio {without_ms / with_ms:5.2f}x  "
              f"bit for bit {'yes' if same else 'NO'}  {dict(stats)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
