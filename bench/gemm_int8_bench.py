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
import ctypes
import json
import statistics
import sys
import time

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    sys.path.pop(0)

import torch

from ziggurat.backends.cpu.isa import Isa, host_features
from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec
from ziggurat.backends.cpu.kernels.gemm_int8_callable import int8_gemm_callable
from ziggurat.bench.gemm_bf16_bench import PROBE_SECONDS, SHAPES, PeakProbe, interleaved
from ziggurat.dialects.fused.pack_int8 import pack_quantized_linear

#: the instruction each kernel's products are built on, named in the table
INSTRUCTIONS = {"amx": "tdpbusd", "vnni": "vpdpbusd"}


def _amx_int8_peak_ir(tiles: int = 4) -> str:
    """A loop of ``tiles`` independent ``tdpbusd`` (16 rows x 16 int32 += 16x64 uint8 @ 64x16
    int8), every operand in a tile register."""
    phis = "\n".join(f"  %c{i} = phi x86_amx [%z, %entry], [%d{i}, %loop]" for i in range(tiles))
    dps = "\n".join(f"  %d{i} = call x86_amx @llvm.x86.tdpbusd.internal(i16 16, i16 64, i16 64, x86_amx %c{i}, "
                    f"x86_amx %ta, x86_amx %tb)" for i in range(tiles))
    stores = "\n".join(f"  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %out, i64 64, x86_amx %d{i})"
                       for i in range(tiles))
    return f"""
declare x86_amx @llvm.x86.tileloadd64.internal(i16, i16, ptr, i64)
declare x86_amx @llvm.x86.tdpbusd.internal(i16, i16, i16, x86_amx, x86_amx, x86_amx)
declare void @llvm.x86.tilestored64.internal(i16, i16, ptr, i64, x86_amx)
declare x86_amx @llvm.x86.tilezero.internal(i16, i16)
define void @peak(i64 %n, ptr %out, ptr %in) {{
entry:
  %z = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  %ta = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %in, i64 64)
  %tb = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %in, i64 64)
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
{phis}
{dps}
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
{stores}
  ret void
}}
"""


class AmxInt8PeakProbe(PeakProbe):
    """:class:`PeakProbe` of ``tdpbusd``: 4 tiles x 16 x 16 x 64 multiply-adds an iteration."""

    def __init__(self) -> None:  # not PeakProbe's: that one compiles its loop by kernel name
        granted, why = amx.request_tile_permission()  # without it the first tile instruction is SIGILL
        if not granted:
            raise RuntimeError(f"AMX-INT8 peak probe: the OS refused the tile permission ({why})")
        self.flops = 4 * 16 * 16 * 64 * 2
        self.fn = compile_ir(_amx_int8_peak_ir(), Isa.AVX512).ctypes_function(
            "peak", None, [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p])
        self.buf, self.out = torch.zeros(1024), torch.zeros(1024)
        self.fn(1000, self.out.data_ptr(), self.buf.data_ptr())
        start = time.perf_counter()  # as PeakProbe: long enough that the threads' start is noise
        self.fn(200_000, self.out.data_ptr(), self.buf.data_ptr())
        self.iters = max(200_000, int(200_000 * PROBE_SECONDS / max(time.perf_counter() - start, 1e-6)))


def peak_probe(kernel: str) -> PeakProbe:
    return AmxInt8PeakProbe() if kernel == "amx" else PeakProbe("avx512vnni")


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
