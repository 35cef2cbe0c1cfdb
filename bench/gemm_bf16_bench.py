"""bf16 GEMM benchmark: Ziggurat's bf16 kernels vs torch's bf16 matmul (oneDNN), against this
machine's measured peak of the instruction they are built on.

    python bench/gemm_bf16_bench.py [--threads 1 2] [--kernels amx avx512bf16] [--json out.json]

The peak is measured in the same run by a JIT'd loop of independent ``tdpbf16ps`` (4 tile
accumulators, operands in tile registers: no memory traffic) for AMX, or of 24 independent
``vdpbf16ps`` chains for AVX512-BF16, on every requested thread count.  Each shape is timed
interleaved (peak probe, ours, torch, ...), and the share of peak is the median of the
per-round ratios, so a busy moment of the shared machine moves both sides.

For AMX a second loop is sampled in the same rounds: the *L1-fed* loop, the same four
accumulators with their operands loaded by ``tileloadd`` at every step from 32 KB of random
values that stay in L1 (two A tiles from 32 rows of a 512-byte-row A, two B tiles from a
contiguous B: what a kernel's inner loop does at best).  On the Emerald Rapids host it runs at
about 80 % of the register-only loop (which reads as the same peak on zero or random tiles),
so no kernel that loads its tiles reaches more; the share of it is printed beside the share
of the peak.  A third, the *L2-fed* loop, loads the same tiles from 128 KB: a 32-row block of
a 1024-deep A and the whole 1024 x 32 panel of B that a 1024^3 kernel's block reads, more than
L1 holds.  Its share is the ceiling of a kernel whose operands come from L2.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping

if __name__ == "__main__" and sys.path and sys.path[0].rstrip("/").endswith("bench"):
    sys.path.pop(0)

import torch

from ziggurat.backends.cpu.isa import Isa
from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.kernels import amx
from ziggurat.backends.cpu.kernels.gemm_bf16_callable import bf16_gemm_callable
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.pack_bf16 import pack_b_bf16

SHAPES = [(1024, 1024, 1024), (512, 512, 512), (2048, 2048, 2048), (128, 768, 768), (128, 3072, 768),
          (197, 2304, 768), (64, 3072, 768)]

def _amx_loop_ir(instruction: str, prologue: str, body: str, tiles: int = 4) -> str:
    """``peak(n, out, in)``: ``n`` iterations of ``body`` over ``tiles`` accumulators ``%c<i>``
    (``body`` defines ``%d<i>``, their next values), after ``prologue``; the sums stored to ``out``."""
    phis = "\n".join(f"  %c{i} = phi x86_amx [%z, %entry], [%d{i}, %loop]" for i in range(tiles))
    stores = "\n".join(f"  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %out, i64 64, x86_amx %d{i})"
                       for i in range(tiles))
    return f"""
declare x86_amx @llvm.x86.tileloadd64.internal(i16, i16, ptr, i64)
declare x86_amx @llvm.x86.{instruction}.internal(i16, i16, i16, x86_amx, x86_amx, x86_amx)
declare void @llvm.x86.tilestored64.internal(i16, i16, ptr, i64, x86_amx)
declare x86_amx @llvm.x86.tilezero.internal(i16, i16)
define void @peak(i64 %n, ptr %out, ptr %in) {{
entry:
  %z = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
{prologue}
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
{phis}
{body}
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
{stores}
  ret void
}}
"""


def _tile_load(ptr: str, stride: int) -> str:
    return f"call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr {ptr}, i64 {stride})"


def _tile_dp(instruction: str, i: int, a: str, b: str) -> str:
    return (f"  %d{i} = call x86_amx @llvm.x86.{instruction}.internal(i16 16, i16 64, i16 64, "
            f"x86_amx %c{i}, x86_amx {a}, x86_amx {b})")


def _amx_peak_ir(instruction: str, tiles: int = 4) -> str:
    """A loop of ``tiles`` independent ``instruction`` (``tdpbf16ps`` or ``tdpbusd``: 16 rows x
    16 float32/int32 accumulators, 64 bytes of K), every operand in a tile register."""
    prologue = f"  %ta = {_tile_load('%in', 64)}\n  %tb = {_tile_load('%in', 64)}"
    body = "\n".join(_tile_dp(instruction, i, "%ta", "%tb") for i in range(tiles))
    return _amx_loop_ir(instruction, prologue, body, tiles)


def _amx_fed_ir(instruction: str, row_bytes: int = 512) -> str:
    """Four accumulators as in :func:`_amx_peak_ir`, their operands loaded at every step:
    A tiles at ``in + (64 i mod row_bytes)`` and 16 rows below, row stride ``row_bytes``; B
    tiles at ``in + 32 row_bytes + (2048 i mod 32 row_bytes)`` and 1 KB on, row stride 64
    (``64 row_bytes`` bytes in all).  512: 32 KB, the L1-fed loop; 2048: 128 KB, the L2-fed
    one, whose operands are a 1024-deep block's: a 32-row block of A of a 1024-deep GEMM and a
    whole 1024 x 32 panel of B, more than L1 holds (:data:`FED_ROW_BYTES`)."""
    if row_bytes < 64 or row_bytes & (row_bytes - 1):
        raise ValueError(f"the fed loop's row_bytes must be a power of two of 64 or more, not {row_bytes}")
    half = 32 * row_bytes
    body = f"""  %ak = mul i64 %i, 64
  %ao = and i64 %ak, {row_bytes - 64}
  %bk = mul i64 %i, 2048
  %bo = and i64 %bk, {half - 2048}
  %pa0 = getelementptr i8, ptr %in, i64 %ao
  %pa1 = getelementptr i8, ptr %pa0, i64 {16 * row_bytes}
  %pb0 = getelementptr i8, ptr %b, i64 %bo
  %pb1 = getelementptr i8, ptr %pb0, i64 1024
  %ta0 = {_tile_load("%pa0", row_bytes)}
  %ta1 = {_tile_load("%pa1", row_bytes)}
  %tb0 = {_tile_load("%pb0", 64)}
{_tile_dp(instruction, 0, "%ta0", "%tb0")}
{_tile_dp(instruction, 1, "%ta1", "%tb0")}
  %tb1 = {_tile_load("%pb1", 64)}
{_tile_dp(instruction, 2, "%ta0", "%tb1")}
{_tile_dp(instruction, 3, "%ta1", "%tb1")}"""
    return _amx_loop_ir(instruction, f"  %b = getelementptr i8, ptr %in, i64 {half}", body)


#: A's row bytes of the fed loops (:func:`_amx_fed_ir`): the L1-fed (32 KB) and L2-fed (128 KB) ones
FED_ROW_BYTES = {"L1": 512, "L2": 2048}


#: operations per iteration of the AMX peak loops: 4 tiles x 16 x 16 x (32 bf16 | 64 int8) x 2
_AMX_FLOPS_PER_ITER = {"amx": 4 * 16 * 16 * 32 * 2, "amx-int8": 4 * 16 * 16 * 64 * 2}
#: seconds one peak sample runs for
PROBE_SECONDS = 0.05


def _dot_peak_ir(intrinsic: str, acc: str, operand: str, add: str, chains: int = 24) -> str:
    """A loop of ``chains`` independent ``intrinsic(acc, x, y)`` calls (``acc`` the accumulator
    vector type, ``operand`` the sources', ``add`` the instruction summing the chains)."""
    phis = "\n".join(f"  %a{i} = phi {acc} [zeroinitializer, %entry], [%n{i}, %loop]" for i in range(chains))
    dps = "\n".join(f"  %n{i} = call {acc} @{intrinsic}({acc} %a{i}, {operand} %x, {operand} %y)" for i in range(chains))
    sums = "\n".join(f"  %s{i} = {add} {acc} %s{i - 1}, %n{i}" for i in range(1, chains))
    return f"""
declare {acc} @{intrinsic}({acc}, {operand}, {operand})
define void @peak(i64 %n, ptr %out, ptr %in) {{
entry:
  %x = load {operand}, ptr %in
  %y = load {operand}, ptr %in
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
{phis}
{dps}
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  %s0 = {add} {acc} %n0, zeroinitializer
{sums}
  store {acc} %s{chains - 1}, ptr %out
  ret void
}}
"""


def _dp_peak_ir(chains: int = 24) -> str:
    """``vdpbf16ps``: 16 lanes x 2 bf16 products."""
    return _dot_peak_ir("llvm.x86.avx512bf16.dpbf16ps.512", "<16 x float>", "<32 x bfloat>", "fadd", chains)


def _vnni_peak_ir(chains: int = 24) -> str:
    """``vpdpbusd``: 16 lanes x 4 uint8 x int8 products into int32."""
    return _dot_peak_ir("llvm.x86.avx512.vpdpbusd.512", "<16 x i32>", "<64 x i8>", "add", chains)


class PeakProbe:
    """The kernel's instruction at full rate: the JIT'd loop runs in ``threads`` Python threads
    at once (a ctypes call releases the GIL), one per core."""

    def __init__(self, kernel: str, fed: str | None = None) -> None:
        """``fed``: a fed AMX loop (:func:`_amx_fed_ir`) whose operands stay in that cache level
        (a key of :data:`FED_ROW_BYTES`), instead of the register-only one."""
        if fed is not None and kernel not in _AMX_FLOPS_PER_ITER:
            raise ValueError(f"the {fed}-fed loop is an AMX probe, not one of {kernel!r}")
        row_bytes = FED_ROW_BYTES[fed] if fed is not None else 0
        self.buf = torch.zeros(1024)
        if kernel in _AMX_FLOPS_PER_ITER:  # without the permission the first tile instruction is SIGILL
            granted, why = amx.request_tile_permission()
            if not granted:
                raise RuntimeError(f"AMX peak probe: the OS refused the tile permission ({why})")
            instruction = "tdpbf16ps" if kernel == "amx" else "tdpbusd"
            text = _amx_fed_ir(instruction, row_bytes) if row_bytes else _amx_peak_ir(instruction)
            self.flops = _AMX_FLOPS_PER_ITER[kernel]
            if row_bytes:  # random operands: 64 row_bytes of bf16 values or of bytes
                gen = torch.Generator().manual_seed(0)
                if kernel == "amx":
                    self.buf = torch.randn(32 * row_bytes, generator=gen).bfloat16().view(torch.float32)
                else:
                    self.buf = torch.randint(-128, 128, (64 * row_bytes,), dtype=torch.int8,
                                             generator=gen).view(torch.float32)
        elif kernel == "avx512vnni":  # int8: operations (multiply + add) per iteration
            text, self.flops = _vnni_peak_ir(), 24 * 16 * 4 * 2
        else:
            text, self.flops = _dp_peak_ir(), 24 * 16 * 2 * 2
        self.fn = compile_ir(text, Isa.AVX512).ctypes_function("peak", None, [ctypes.c_int64, ctypes.c_void_p,
                                                                                ctypes.c_void_p])
        self.out = torch.zeros(1024)
        self.fn(1000, self.out.data_ptr(), self.buf.data_ptr())
        # Long enough that starting and joining the Python threads is noise: 200,000 iterations
        # of 24 vdpbf16ps take 0.6 ms on Zen 5, where the threads' overhead read as a 78 GFLOP/s
        # peak for a 505 GFLOP/s core.
        start = time.perf_counter()
        self.fn(200_000, self.out.data_ptr(), self.buf.data_ptr())
        self.iters = max(200_000, int(200_000 * PROBE_SECONDS / max(time.perf_counter() - start, 1e-6)))

    def sample(self, threads: int, iters: int | None = None) -> float:
        import threading

        iters = self.iters if iters is None else iters

        outs = [torch.zeros(1024) for _ in range(threads)]  # alive until every thread is done

        def run(out: torch.Tensor) -> None:
            self.fn(iters, out.data_ptr(), self.buf.data_ptr())

        workers = [threading.Thread(target=run, args=(out,)) for out in outs]
        t = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return iters * self.flops * threads / (time.perf_counter() - t) / 1e9


def interleaved(probe: PeakProbe, threads: int, ops: int, rounds: int,
                candidates: dict[str, Callable[[], object]],
                fed: Mapping[str, PeakProbe] | None = None) -> tuple[list[float], dict[str, list[float]]]:
    """Per round: a peak sample (and one of each ``fed`` loop, as the candidate of its name),
    then each candidate timed (G-operations per second, ``ops`` a call); after one untimed call
    of each."""
    reps = max(1, int(0.02 * 1e12 / max(ops, 1)))

    def timed(fn: Callable[[], object]) -> float:
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        return ops * reps / (time.perf_counter() - t) / 1e9

    for fn in candidates.values():
        timed(fn)
    peaks: list[float] = []
    rates: dict[str, list[float]] = {name: [] for name in candidates}
    fed = dict(fed or {})
    for name in fed:
        rates[name] = []
    for _ in range(rounds):
        peaks.append(probe.sample(threads))
        for name, p in fed.items():
            rates[name].append(p.sample(threads))
        for name, fn in candidates.items():
            rates[name].append(timed(fn))
    return peaks, rates


def bench(kernel: str, threads: int, shapes: list[tuple[int, int, int]], rounds: int) -> list[dict[str, object]]:
    torch.set_num_threads(threads)
    probe = PeakProbe(kernel)
    # the fed loops as the rates "fed" (L1) and "fed_l2"
    fed = {"fed": PeakProbe(kernel, fed="L1"), "fed_l2": PeakProbe(kernel, fed="L2")} if kernel == "amx" else {}
    rows: list[dict[str, object]] = []
    for m, n, k in shapes:
        a, b = torch.randn(m, k).bfloat16(), torch.randn(k, n).bfloat16()
        packed = pack_b_bf16(b)
        out_ours, out_torch = torch.empty(m, n, dtype=torch.bfloat16), torch.empty(m, n, dtype=torch.bfloat16)
        ours = bf16_gemm_callable(Bf16GemmSpec(m, n, k, kernel=kernel, threads=threads))
        peaks, rates = interleaved(probe, threads, 2 * m * n * k, rounds, {
            "ours": lambda: ours(a, packed, out=out_ours), "torch": lambda: torch.mm(a, b, out=out_torch)}, fed)
        mine, theirs = rates["ours"], rates["torch"]
        share = statistics.median(x / p for x, p in zip(mine, peaks, strict=True))
        share_torch = statistics.median(x / p for x, p in zip(theirs, peaks, strict=True))
        rows.append({"kernel": kernel, "threads": threads, "m": m, "n": n, "k": k,
                     "peak_gflops": round(max(peaks), 1), "ours_gflops": round(statistics.median(mine), 1),
                     "torch_gflops": round(statistics.median(theirs), 1), "ours_share": round(share, 3),
                     "torch_share": round(share_torch, 3)})
        r = rows[-1]
        fed_text = ""
        if fed:
            fed_share = statistics.median(f / p for f, p in zip(rates["fed"], peaks, strict=True))
            ours_of_fed = statistics.median(x / f for x, f in zip(mine, rates["fed"], strict=True))
            l2_share = statistics.median(f / p for f, p in zip(rates["fed_l2"], peaks, strict=True))
            r.update({"fed_gflops": round(statistics.median(rates["fed"]), 1), "fed_share": round(fed_share, 3),
                      "ours_share_of_fed": round(ours_of_fed, 3), "fed_l2_share": round(l2_share, 3)})
            fed_text = (f"  L1-fed {r['fed_gflops']:7.0f} ({100 * fed_share:5.1f} %; ours {100 * ours_of_fed:5.1f} % of it)"
                        f"  L2-fed {100 * l2_share:5.1f} %")
        print(f"{kernel:10s} t{threads} {m:5d}x{n:5d}x{k:5d}  peak {r['peak_gflops']:7.0f}  ours {r['ours_gflops']:7.0f} "
              f"({100 * share:5.1f} %)  torch {r['torch_gflops']:7.0f} ({100 * share_torch:5.1f} %){fed_text}  GFLOP/s",
              flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/gemm_bf16_bench.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--kernels", nargs="+", default=None, help="amx and/or avx512bf16 (default: what the host has)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="1024^3 and one transformer shape only")
    p.add_argument("--json", help="write the rows to this file")
    args = p.parse_args(argv)
    host = amx.host_bf16_kernel()
    kernels = args.kernels or ([host] + (["avx512bf16"] if host == "amx" else []) if host else [])
    if not kernels:
        print("this host has neither AMX-BF16 nor AVX512-BF16: nothing to measure", file=sys.stderr)
        return 1
    shapes = SHAPES[:1] + SHAPES[4:5] if args.quick else SHAPES
    rows = [row for kernel in kernels for threads in args.threads for row in bench(kernel, threads, shapes, args.rounds)]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
