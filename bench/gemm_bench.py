"""GEMM benchmark: ziggurat's native kernel vs torch.matmul, against this
machine's measured FMA peak.

    python bench/gemm_bench.py [--threads 1 2] [--json out.json] [--quick] [--isa auto] [--orders] [--contention]

The FMA peak is measured in the same run with a JIT'd kernel of independent
FMA chains (per core, and with every requested thread count).  Each shape is
timed interleaved (ours, torch, ours, torch, ...) and medians are reported,
which matters on a shared machine.  ``--orders`` also times, interleaved with
the others, the row-outer tile order without B streaming (the plan before
``GemmPlan.cols_outer`` / ``prefetch_stream`` were selected), wherever the
planner picked the column-outer streaming order.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass

import torch
from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa, parse_isa, vector_registers
from ziggurat.backends.cpu.jit import compile_ir
from ziggurat.backends.cpu.kernels import GemmSpec, gemm_callable, make_plan, pack_gemm_b
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, F32P, I64, VOID, i64
from ziggurat.backends.cpu.threads import emit_parallel_for

SQUARE = [256, 512, 1024, 2048]
# (M, N, K): bert-base (seq 128) and gpt2-small (seq 64) linears, gpt2's LM head.
TRANSFORMER = [(1, 3072, 768), (128, 768, 768), (128, 3072, 768), (128, 768, 3072), (64, 2304, 768),
               (64, 3072, 768), (64, 50257, 768)]


def _fma_peak_library(isa: Isa, threads: int, chains: int | None = None):  # type: ignore[no-untyped-def]
    """``peak(iters, out)``: every thread runs ``iters`` x 4 x ``chains``
    independent vector FMAs and writes a checksum (so nothing is optimised out).  ``chains``
    defaults to 24 where they fit the registers (AVX-512's 32), else the registers less 4
    (AVX2's 16: 24 chains spilled to the stack, and the "peak" on an AVX2-only EPYC was 28
    GFLOP/s a core against the GEMM's 38); at least the FMA latency times the FMA units (10)."""
    chains = chains if chains is not None else min(24, vector_registers(isa) - 4)
    module = ir.Module("fma_peak")
    vec = VecOps(module, isa)
    fn = ir.Function(module, ir.FunctionType(VOID, [I64, F32P]), name="peak")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def body(bb: ir.IRBuilder, begin, end, tid, caps) -> None:  # type: ignore[no-untyped-def]
        iters, out = caps
        f = bb.function
        pre = bb.block
        loop = f.append_basic_block("loop")
        done = f.append_basic_block("done")
        bb.branch(loop)
        bb.position_at_end(loop)
        accs = [bb.phi(vec.ty) for _ in range(chains)]
        cnt = bb.phi(I64)
        x, y = vec.const(0.999999), vec.const(1e-7)
        cur = list(accs)
        for _ in range(4):
            cur = [vec.fma(bb, c, x, y) for c in cur]
        for phi, new in zip(accs, cur):
            phi.add_incoming(vec.const(1.0), pre)
            phi.add_incoming(new, loop)
        nxt = bb.add(cnt, i64(1))
        cnt.add_incoming(i64(0), pre)
        cnt.add_incoming(nxt, loop)
        bb.cbranch(bb.icmp_unsigned("<", nxt, iters), loop, done)
        bb.position_at_end(done)
        s = cur[0]
        for c in cur[1:]:
            s = bb.fadd(s, c)
        if vec.width > 1:
            s = bb.extract_element(s, ir.Constant(ir.IntType(32), 0))
        bb.store(s, bb.gep(out, [tid]))

    emit_parallel_for(module, b, threads, body, num_threads=threads, captures=list(fn.args), name="peak.par")
    b.ret_void()
    lib = compile_ir(module, isa, cache=None)
    return lib, chains * 4 * vec.width * 2


class PeakProbe:
    """The FMA peak kernel for ``threads`` threads, callable for a given duration."""

    def __init__(self, isa: Isa, threads: int) -> None:
        self.lib, self.flops_per_iter = _fma_peak_library(isa, threads)
        self.fn = self.lib.ctypes_function("peak", None, [ctypes.c_int64, ctypes.c_void_p])
        self.threads = threads
        self.out = torch.zeros(threads)
        self.fn(1000, self.out.data_ptr())
        t = time.perf_counter()
        self.fn(100_000, self.out.data_ptr())
        self.per_iter = max((time.perf_counter() - t) / 100_000, 1e-10)

    def sample(self, seconds: float) -> float:
        """GFLOP/s of one run lasting about ``seconds``."""
        iters = max(1000, int(seconds / self.per_iter))
        t = time.perf_counter()
        self.fn(iters, self.out.data_ptr())
        return iters * self.flops_per_iter * self.threads / (time.perf_counter() - t) / 1e9


def measure_peak(isa: Isa, threads: int, seconds: float = 0.3, trials: int = 25) -> float:
    """FMA throughput in GFLOP/s with ``threads`` threads: the best of many
    short trials (short ones are more likely to run undisturbed on a shared
    machine)."""
    probe = PeakProbe(isa, threads)
    return max(probe.sample(seconds / trials) for _ in range(trials))


def contention(isa: Isa, size: int = 1024, samples: int = 9) -> dict[str, float]:
    """The two-core ceiling of the GEMM kernel itself, interleaved: a 1-thread ``size``^3 GEMM
    alone; the same 1-thread GEMM on both cores at once on separate data (two Python threads,
    ctypes releases the GIL), as aggregate GFLOP/s; and the 2-thread GEMM.  Two independent
    copies share nothing but the machine (power/frequency budget, L3, memory, a virtualised
    host), so their aggregate bounds what splitting one GEMM across both cores can reach."""
    import threading

    torch.set_num_threads(1)
    one = gemm_callable(GemmSpec(m=size, n=size, k=size, isa=isa, threads=1))
    two_spec = GemmSpec(m=size, n=size, k=size, isa=isa, threads=2)
    two = gemm_callable(two_spec)
    data = [(torch.randn(size, size), pack_gemm_b(torch.randn(size, size), two_spec.b_layout.nr),
             torch.empty(size, size)) for _ in range(2)]
    flops, reps = 2 * size ** 3, 5

    def run(kern, i: int) -> None:  # type: ignore[no-untyped-def]
        a, b, c = data[i]
        for _ in range(reps):
            kern(a, b, c)

    run(one, 0)
    run(two, 0)
    rates: dict[str, list[float]] = {"alone": [], "both": [], "split": []}
    for _ in range(samples):
        t = time.perf_counter()
        run(one, 0)
        rates["alone"].append(flops * reps / (time.perf_counter() - t) / 1e9)
        workers = [threading.Thread(target=run, args=(one, i)) for i in range(2)]
        t = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        rates["both"].append(2 * flops * reps / (time.perf_counter() - t) / 1e9)
        t = time.perf_counter()
        run(two, 0)
        rates["split"].append(flops * reps / (time.perf_counter() - t) / 1e9)
    med = {k: statistics.median(v) for k, v in rates.items()}
    return {"size": size, "alone_gflops": med["alone"], "two_independent_gflops": med["both"],
            "two_thread_gflops": med["split"]}


@dataclass
class Row:
    shape: str
    m: int
    n: int
    k: int
    threads: int
    ours_gflops: float  # median over interleaved samples
    torch_gflops: float
    ours_best_gflops: float  # fastest sample (least disturbed by other load)
    torch_best_gflops: float
    peak_gflops: float
    ours_share_of_peak: float
    # The FMA kernel run for as long as one GEMM sample right before each of them: what the
    # cores delivered at that moment on this shared machine (median), and the median of the
    # per-sample ratios ours / that peak.
    interleaved_peak_gflops: float
    ours_share_of_interleaved_peak: float
    max_abs_err: float
    plan: str
    rows_order_gflops: float | None = None  # --orders: median of the row-outer, non-streaming plan


def bench_shape(m: int, n: int, k: int, threads: int, isa: Isa, peak: float, budget: float,
                orders: bool = False, probe: PeakProbe | None = None) -> Row:
    torch.set_num_threads(threads)
    spec = GemmSpec(m=m, n=n, k=k, isa=isa, threads=threads)
    kern = gemm_callable(spec)
    p = make_plan(spec)
    alt = None
    if orders and p.cols_outer:
        alt = gemm_callable(spec, dataclasses.replace(p, cols_outer=False, prefetch_stream=False))
    a = torch.randn(m, k)
    w = torch.randn(k, n)
    bp = pack_gemm_b(w, spec.b_layout.nr)
    c = torch.empty(m, n)
    flops = 2 * m * n * k
    kern(a, bp, c)
    ref = torch.matmul(a, w)
    err = (c - ref).abs().max().item()
    # Calibrate repetitions so that one timed sample takes ~budget/20 s.
    t = time.perf_counter()
    kern(a, bp, c)
    one = max(time.perf_counter() - t, 1e-7)
    reps = max(1, int(budget / 20 / one))
    ours: list[float] = []
    theirs: list[float] = []
    rows_order: list[float] = []
    probe = probe or PeakProbe(isa, threads)
    peaks: list[float] = []
    if alt is not None:
        alt(a, bp, c)
        err = max(err, (c - ref).abs().max().item())
    for _ in range(10):
        peaks.append(probe.sample(one * reps))
        t = time.perf_counter()
        for _ in range(reps):
            kern(a, bp, c)
        ours.append((time.perf_counter() - t) / reps)
        if alt is not None:
            t = time.perf_counter()
            for _ in range(reps):
                alt(a, bp, c)
            rows_order.append((time.perf_counter() - t) / reps)
        t = time.perf_counter()
        for _ in range(reps):
            torch.matmul(a, w, out=ref)
        theirs.append((time.perf_counter() - t) / reps)
    g_ours = flops / statistics.median(ours) / 1e9
    g_torch = flops / statistics.median(theirs) / 1e9
    plan = (f"{p.mr}x{p.tw} kc={p.kc} mc={p.mc} nc={p.nc} packA={int(p.pack_a)} tasks={p.tasks_m}x{p.tasks_n}"
            + (" cols+stream" if p.cols_outer else ""))
    g_rows = flops / statistics.median(rows_order) / 1e9 if rows_order else None
    shares = [flops / o / 1e9 / p for o, p in zip(ours, peaks)]
    return Row(f"{m}x{k} . {k}x{n}", m, n, k, threads, g_ours, g_torch, flops / min(ours) / 1e9,
               flops / min(theirs) / 1e9, peak, g_ours / peak, statistics.median(peaks),
               statistics.median(shares), err, plan, g_rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--quick", action="store_true", help="fewer shapes and shorter timings (< ~30 s)")
    ap.add_argument("--isa", default="auto")
    ap.add_argument("--orders", action="store_true",
                    help="also time the row-outer, non-streaming tile order where the planner streams B")
    ap.add_argument("--contention", action="store_true",
                    help="also time two independent 1-thread 1024^3 GEMMs at once: the kernel's two-core ceiling")
    args = ap.parse_args(argv)
    isa = parse_isa(args.isa)
    squares = [256, 512, 1024] if args.quick else SQUARE
    budget = 0.25 if args.quick else 1.0
    shapes = [(s, s, s) for s in squares] + TRANSFORMER
    peaks = {t: measure_peak(isa, t, 0.3 if args.quick else 1.0) for t in args.threads}
    load = os.getloadavg()[0]
    print(f"isa={isa.value}  FMA peak (best of 25 trials): "
          + ", ".join(f"{t} thread(s) {g:.1f} GFLOP/s" for t, g in peaks.items())
          + f"   [load average {load:.1f} on {os.cpu_count()} cpus: other work skews timings]")
    print("GFLOP/s: median of 10 interleaved samples (best sample in brackets); %peak uses the median;\n"
          "%live: median over samples of ours / the FMA peak measured for as long right before it")
    rows: list[Row] = []
    probes = {t: PeakProbe(isa, t) for t in args.threads}
    header = (f"{'shape (MxK . KxN)':>22} {'thr':>3} {'ours':>15} {'torch':>15} {'%peak':>6} {'%live':>6} "
              f"{'ours/torch':>10}  plan")
    print(header)
    print("-" * len(header))
    for m, n, k in shapes:
        for t in args.threads:
            r = bench_shape(m, n, k, t, isa, peaks[t], budget, args.orders, probes[t])
            rows.append(r)
            ours = f"{r.ours_gflops:6.1f} [{r.ours_best_gflops:6.1f}]"
            theirs = f"{r.torch_gflops:6.1f} [{r.torch_best_gflops:6.1f}]"
            print(f"{r.shape:>22} {t:>3} {ours:>15} {theirs:>15} {100 * r.ours_share_of_peak:5.1f}% "
                  f"{100 * r.ours_share_of_interleaved_peak:5.1f}% "
                  f"{r.ours_gflops / r.torch_gflops:10.2f}  {r.plan}"
                  + (f"  [row order {r.rows_order_gflops:.1f}]" if r.rows_order_gflops is not None else ""),
                  flush=True)
    busy = contention(isa) if args.contention else None
    if busy is not None:
        print(f"{busy['size']}^3, medians of interleaved samples: 1 thread alone {busy['alone_gflops']:.1f} GFLOP/s; "
              f"the same 1-thread GEMM on both cores at once {busy['two_independent_gflops']:.1f} (aggregate); "
              f"the 2-thread GEMM {busy['two_thread_gflops']:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"isa": isa.value, "peak_gflops": peaks, "load_average": load,
                       "rows": [asdict(r) for r in rows], "contention": busy}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
