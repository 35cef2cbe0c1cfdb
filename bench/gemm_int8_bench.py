"""int8 GEMM benchmark: Ziggurat's int8 kernels (uint8 x int8, int32 sums, float32 epilogue) on
AMX-INT8 tiles (``tdpbusd``) and on AVX512-VNNI (``vpdpbusd``), each against this machine's
peak of its instruction measured in the same run, next to torch's float32 matmul and
``torch._int_mm`` (int8 x int8 -> int32, no epilogue).

    python bench/gemm_int8_bench.py [--threads 1 2] [--kernels amx vnni] [--json out.json]

The AMX peak is a JIT'd loop of 4 independent ``tdpbusd`` on 16x16x64 tiles held in tile
registers (no memory traffic), the VNNI one 24 independent ``vpdpbusd`` chains.  Interleaved
as ``gemm_bf16_bench.py``: peak probe, ours, torch's, per round; the share of peak is the
median of the per-round ratios.  Operations count a multiply and an add (2 m n k).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    sys.path.pop(0)

import torch

from ziggurat.backends.cpu.isa import host_features
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec
from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable
from ziggurat.bench.gemm_bf16_bench import SHAPES, PeakProbe, interleaved
from ziggurat.dialects.fused.pack_int8 import pack_quantized_linear

#: the instruction each kernel's products are built on, named in the table
INSTRUCTIONS = {"amx": "tdpbusd", "vnni": "vpdpbusd"}


def peak_probe(kernel: str) -> PeakProbe:
    return PeakProbe("amx-int8" if kernel == "amx" else "avx512vnni")


def bench(kernel: str, threads: int, shapes: list[tuple[int, int, int]], rounds: int) -> list[dict[str, object]]:
    torch.set_num_threads(threads)
    probe = peak_probe(kernel)
    rows: list[dict[str, object]] = []
    for m, n, k in shapes:
        a_scale, zp = 0.02, 128
        a = (torch.randint(0, 256, (m, k)) - zp).float() * a_scale
        w = torch.randint(-128, 128, (n, k), dtype=torch.int8)
        packed = pack_quantized_linear(w, torch.rand(n) * 0.01 + 1e-3, a_scale, zp)
        ours = int8_gemm_callable(Int8GemmSpec(m=m, n=n, k=k, a_scale=a_scale, a_zero_point=zp, threads=threads,
                                               kernel=kernel))
        wf, a8, w8t = w.float().t().contiguous(), torch.randint(-128, 128, (m, k), dtype=torch.int8), w.t()
        peaks, got = interleaved(probe, threads, 2 * m * n * k, rounds, {
            "ours": lambda: ours(a, packed), "torch_fp32": lambda: torch.mm(a, wf),
            "torch_int_mm": lambda: torch._int_mm(a8, w8t)})  # pyright: ignore[reportPrivateImportUsage]
        row: dict[str, object] = {"kernel": kernel, "threads": threads, "m": m, "n": n, "k": k,
                                  "peak_gops": round(max(peaks), 1)}
        for name, values in got.items():
            row[f"{name}_gops"] = round(statistics.median(values), 1)
            row[f"{name}_share"] = round(statistics.median(x / p for x, p in zip(values, peaks, strict=True)), 3)
        rows.append(row)
        print(f"{kernel:4s} t{threads} {m:5d}x{n:5d}x{k:5d}  {INSTRUCTIONS[kernel]:8s} peak {row['peak_gops']:7.0f}  "
              f"ours {row['ours_gops']:7.0f} "
              f"({100 * float(row['ours_share']):5.1f} %)  torch fp32 {row['torch_fp32_gops']:6.0f}  "  # pyright: ignore[reportArgumentType]
              f"torch._int_mm {row['torch_int_mm_gops']:6.0f}  GOP/s", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/gemm_int8_bench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--kernels", nargs="+", choices=sorted(INSTRUCTIONS), default=None,
                   help="amx and/or vnni (default: what the host has)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="1024^3 and one transformer shape only")
    p.add_argument("--json", help="write the rows to this file")
    args = p.parse_args(argv)
    if not host_features().get("avx512vnni"):
        print("this host has no AVX512-VNNI: nothing to measure", file=sys.stderr)
        return 1
    has_amx = amx.host_int8_kernel() == "amx"
    kernels = args.kernels or (["amx", "vnni"] if has_amx else ["vnni"])
    if "amx" in kernels and not has_amx:
        print("this host has no AMX-INT8 (or the OS refused the tiles): no amx kernel to measure", file=sys.stderr)
        return 1
    shapes = SHAPES[:1] + SHAPES[4:5] if args.quick else SHAPES
    rows = [row for kernel in kernels for threads in args.threads for row in bench(kernel, threads, shapes, args.rounds)]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
