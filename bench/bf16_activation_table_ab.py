"""Kernel-level A/B of the bf16 activation tables (``Bf16GemmSpec.unary_table``): each GEMM +
activation is compiled computed (vecmath), looked up, and without the activation, checked
against eager's activation of the plain kernel's output, and timed interleaved in one process.

    python bench/bf16_activation_table_ab.py [--kernel amx|avx512bf16] [--rounds 15]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    sys.path.pop(0)

import torch

from ziggurat.backends.cpu.kernels.bf16_tables import eager_activation
from ziggurat.backends.cpu.kernels.gemm_bf16_callable import bf16_gemm_callable
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.pack_bf16 import pack_b_bf16

#: (M, N, K, activation): ConvNeXt's expansion, BERT-base's FFN, a SiLU convolution-sized GEMM
SHAPES = [(3136, 384, 96, "gelu_erf"), (128, 3072, 768, "gelu_erf"), (3136, 96, 32, "silu")]


def _differing(a: torch.Tensor, b: torch.Tensor) -> int:
    return int((a.view(torch.int16) != b.view(torch.int16)).sum())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="amx", choices=["amx", "avx512bf16"])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    print("| M x N x K | activation | computed ms | table ms | no activation ms | elements off eager: computed / table |")
    print("|---|---|---:|---:|---:|---|")
    for m, n, k, unary in SHAPES:
        base = Bf16GemmSpec(m=m, n=n, k=k, kernel=args.kernel, threads=1, bias=True, unary=unary, rounded_steps=True)
        kernels = {"computed": bf16_gemm_callable(base),
                   "table": bf16_gemm_callable(dataclasses.replace(base, unary_table=True)),
                   "none": bf16_gemm_callable(dataclasses.replace(base, unary=None))}
        a = (torch.randn(m, k) * 2).bfloat16()
        b, bias = pack_b_bf16(torch.randn(k, n)), torch.randn(n)
        outs = {name: kern(a, b, bias) for name, kern in kernels.items()}
        want = eager_activation(unary, outs["none"])
        off = f"{_differing(outs['computed'], want)} / {_differing(outs['table'], want)} of {want.numel()}"
        samples: dict[str, list[float]] = {name: [] for name in kernels}
        for _ in range(args.rounds):
            for name, kern in kernels.items():
                t = time.perf_counter()
                for _ in range(5):
                    kern(a, b, bias)
                samples[name].append((time.perf_counter() - t) / 5 * 1e3)
        med = {name: statistics.median(s) for name, s in samples.items()}
        print(f"| {m}x{n}x{k} | {unary} | {med['computed']:.3f} | {med['table']:.3f} | {med['none']:.3f} | {off} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
