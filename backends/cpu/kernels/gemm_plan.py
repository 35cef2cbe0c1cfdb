"""Blocking and work split for a static GEMM (decided in Python, baked into IR).

Loop nest of one task (a rectangle of C)::

    for jc in task columns, step NC:          B block  KC x NC  stays in L2
      for pc in 0..K, step KC:                (pack B block if B is not prepacked)
        for ic in task rows, step MC:         (pack A block into MR-row panels)
          for ir in ic block, step MR:        A micro-panel MR x KC stays in L1
            for jr in jc block, step TW:      B micro-panel streams from L2
              microkernel(MR x TW)

Cache sizes come from ``/sys/devices/system/cpu/cpu0/cache``.  With several
threads, C is cut into ``sm x sn`` task rectangles (per batch entry), chosen by
a small cost model (padded flops + packing) to balance the threads.
"""

from __future__ import annotations

import dataclasses

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ziggurat.backends.cpu.isa import Isa, vector_registers, vector_width
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpec
from ziggurat.backends.cpu.kernels.tiles import MICROKERNEL_TILE

_DEFAULT_CACHES = {1: 32 * 1024, 2: 1024 * 1024, 3: 8 * 1024 * 1024}


@dataclass
class Tuning:
    """Blocking heuristics (module-level so benchmarks can explore them)."""

    l1_share_a: float = 0.4  # share of L1 for the A micro-panel (MR x KC)
    kc_cap: int = 512
    l2_share_b: float = 0.5  # share of L2 for the B block (KC x NC)
    l2_share_a: float = 0.25  # share of L2 for a packed A block (MC x KC)
    # The least L2 the blocks are planned for.  A core with a smaller one (AMD Zen 1-3: 512 KB,
    # with an 8-32 MB L3 close behind) keeps part of a 1 MB plan's B block in L3, which the
    # panel prefetch hides; planned for its own 512 KB (NC 128, MC 60) the blocks were too small
    # (an AVX2-only EPYC, 1 thread, medians of 7 interleaved: 1024^3 33.4 -> 35.6 GFLOP/s,
    # 128x3072x768 32.4 -> 34.5, the other gemm_bench shapes unchanged; planned for 2 MB,
    # 128x3072x768 lost, 30.9).
    l2_floor: int = 1024 * 1024
    # Packing A into MR-row panels (interleaved A/B medians of gemm_callable(spec, plan)
    # with pack_a on and off, bench/gemm_bench.py shapes): it pays when A's rows alias in L1 -- a row stride that is a
    # multiple of 4 KiB puts all MR rows of a micro-panel in one L1 set (2048^3 at
    # 1 thread +18 %, 128x3072x768 +16 %; 1024^3 at 2 threads +14 %) -- and, with
    # two threads sharing L3 and the memory bus, for K >= pack_a_min_k (128x768x768
    # +7 %, 197x768x3072 +4 %, 512^3 +3 % at 2 threads).  With a short K the copy is
    # not repaid (3136x64x256 at 2 threads -8 %), and at 1 thread with an unaliased
    # stride reading A in place is as fast (hardware prefetchers follow the MR rows).
    pack_a_alias_bytes: int = 4096  # row stride multiple that aliases in L1
    pack_a_min_k: int = 512  # with more than one thread, pack when K >= this ...
    pack_a_min_rows: int = 2  # ... and in every case M >= this many MR tiles ...
    pack_a_min_tiles: int = 4  # ... and N spans more than this many microkernel tiles
    pack_b_min_rows: int = 2  # pack a plain [K, N] B when M > this many MR tiles ...
    pack_b_min_tiles: int = 4  # ... and N spans more than this many microkernel tiles
    # Software prefetch of B rows this many k steps ahead (0 = off): +1-5 % on
    # the measured shapes, most for wide N (B streamed from L3).
    prefetch_b: int = 8
    # Column-outer tile order with streaming L2 prefetch of the next prepacked B
    # micro-panel (GemmPlan.cols_outer / prefetch_stream) when a task's rows fit one
    # A block: B is then read once, in order, and each panel is in L2 before its first
    # use.  Interleaved bench/gemm_bench.py runs on this host: 64x50257x768 (gpt2 LM
    # head) 60 -> 80 GFLOP/s, 64..197-row transformer shapes +5-25 %, 1024^3 unchanged
    # (not selected: its rows need several A blocks).
    stream_b: bool = True
    # Split cost of one float of prepacked B read by a task, in units of 32 FMAs
    # (about what a float from L3/DRAM costs against the FMA rate).
    b_read_cost: float = 0.5
    min_flops_per_thread: int = 1 << 21  # below this a thread costs more than it saves
    # ... unless it streams this many bytes of B: a matrix-vector product (M = 1) is bound
    # by reading B, and two cores read it about twice as fast.
    min_b_bytes_per_thread: int = 1 << 20


TUNING = Tuning()


@cache
def cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level for cpu0, in bytes."""
    sizes = dict(_DEFAULT_CACHES)
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        entries = sorted(root.glob("index*"))
    except OSError:  # pragma: no cover
        return sizes
    for entry in entries:
        try:
            level = int((entry / "level").read_text())
            kind = (entry / "type").read_text().strip()
            text = (entry / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(text[-1:], 1)
        try:
            sizes[level] = int(text.rstrip("KMG")) * mult
        except ValueError:
            continue
    return sizes


@dataclass(frozen=True)
class GemmPlan:
    width: int  # vector lanes
    mr: int  # rows of the main microkernel
    nvec: int  # vectors per microkernel row
    tw: int  # microkernel tile width (columns) = nvec * width
    kc: int
    mc: int
    nc: int
    pack_a: bool
    pack_b: bool  # pack an unpacked B on the fly (always for B^T)
    unroll: int
    prefetch_b: int
    mt: int  # rows per task
    nt: int  # columns per task
    tasks_m: int
    tasks_n: int
    a_once: bool  # a task's rows fit one A block: loop pc -> jc, packing A once per K block
    threads: int
    # Tile loop order inside a block: rows outer (A micro-panel stays in L1 while the B
    # micro-panels stream, the default) or columns outer (a B micro-panel is reused by
    # every row tile while the small A block stays in L1/L2; B streams once, in order).
    cols_outer: bool = False
    # With cols_outer and prepacked B (tile width = panel width): the row tiles of one
    # column each prefetch a share of the next column's B micro-panel into L2.
    prefetch_stream: bool = False
    # A C tile staged in the workspace (a run-time n or ldc: GemmSpec.stages_c), mr x tw floats.
    ws_c_floats: int = 0

    @property
    def tasks(self) -> int:
        return self.tasks_m * self.tasks_n

    @property
    def ws_a_floats(self) -> int:
        return self.mc * self.kc if self.pack_a else 0

    @property
    def ws_b_floats(self) -> int:
        return self.nc * self.kc if self.pack_b else 0

    @property
    def ws_thread_floats(self) -> int:
        """Workspace floats per thread, rounded to 64 bytes."""
        total = self.ws_a_floats + self.ws_b_floats + self.ws_c_floats
        return -(-total // 16) * 16


def _small_m_nvec(isa: Isa, m: int) -> int:
    """Vectors per row for a tile of ``m`` rows (m below the main MR)."""
    regs = vector_registers(isa)
    best = max(1, (regs - 2) // (m + 1))
    return min(best, 8)


def _round_up(x: int, q: int) -> int:
    return -(-x // q) * q


def even_block(total: int, most: int) -> int:
    """The block of the fewest blocks of at most ``most`` that cover ``total``, made as even as
    they can be: 4 tiles at most 3 a block are 2 and 2, not 3 and 1 (the last block short, and
    the thread that takes it idle for most of the time the others work)."""
    return -(-total // -(-total // max(1, most)))


def _compatible_nvec(nvec: int, width: int, nr: int) -> int:
    """Largest ``v <= nvec`` whose tile width nests with the B panel width."""
    for v in range(nvec, 0, -1):
        tw = v * width
        if tw % nr == 0 or nr % tw == 0:
            return v
    return 1


def make_plan(spec: GemmSpec) -> GemmPlan:
    isa = spec.isa
    assert isinstance(isa, Isa) and spec.threads is not None
    width = vector_width(isa, 32)
    mr_main, nvec_main = MICROKERNEL_TILE[isa]
    m, n, k = spec.m, spec.n, spec.k
    if m < mr_main:
        mr, nvec = m, _small_m_nvec(isa, m)
        if isa is Isa.SCALAR:
            nvec = max(nvec_main, nvec)
    else:
        mr, nvec = mr_main, nvec_main
    if spec.b_packed:
        assert spec.nr is not None
        nvec = _compatible_nvec(nvec, width, spec.nr)
    if n < nvec * width:
        # Do not make the tile wider than N needs.
        need = -(-n // width)
        for v in range(need, nvec + 1):
            if not spec.b_packed or _compatible_nvec(v, width, spec.nr) == v:  # type: ignore[arg-type]
                nvec = v
                break
    tw = nvec * width

    caches = cache_sizes()
    tune = TUNING
    l1, l2 = caches.get(1, _DEFAULT_CACHES[1]), max(caches.get(2, _DEFAULT_CACHES[2]), tune.l2_floor)
    unroll = 4
    # The A micro-panel (mr x KC) takes a share of L1, leaving room for B lines.
    kc_max = max(64, min(tune.kc_cap, int(tune.l1_share_a * l1) // (4 * max(mr, 1)) // unroll * unroll))
    kc = _round_up(even_block(k, kc_max), unroll)
    kc = min(kc, _round_up(k, unroll))
    # The B block (KC x NC) takes a share of L2; column blocks are balanced.
    nc_max = max(tw, int(l2 * tune.l2_share_b) // (4 * kc) // tw * tw)
    nc = _round_up(even_block(n, nc_max), tw)
    # A packed A block (MC x KC) takes another share of L2.
    mc_max = max(mr, int(l2 * tune.l2_share_a) // (4 * kc) // mr * mr)
    mc = min(_round_up(m, mr), mc_max)

    pack_b = (not spec.b_packed) and (
        spec.b_transposed or (m > tune.pack_b_min_rows * mr_main and n > tune.pack_b_min_tiles * tw)
        or any(f in spec.runtime for f in ("n", "k", "ldb"))  # zero-padded panels of a run-time B
    )

    # Forking a team costs microseconds; do not split tiny problems.
    b_bytes = 4 * spec.k * spec.n * (spec.batch if spec.batch_stride_b else 1)
    worth = max(spec.flops // max(1, tune.min_flops_per_thread), b_bytes // max(1, tune.min_b_bytes_per_thread))
    threads = max(1, min(spec.threads, worth))
    pack_a = _auto_pack_a(spec, mr, mr_main, tw, threads) if spec.pack_a is None else spec.pack_a
    pack_a = pack_a or "lda" in spec.runtime
    sm, sn = _split(spec, mr, tw, nc, pack_a, pack_b, threads)
    mt = _round_up(-(-m // sm), mr)
    nt = _round_up(-(-n // sn), tw)
    tasks_m, tasks_n = -(-m // mt), -(-n // nt)
    nc = min(nc, nt)
    a_once = mt <= mc
    stream = tune.stream_b and spec.b_packed and (a_once or spec.m_runtime) and tw == spec.nr and width > 1 and unroll > 1
    return GemmPlan(
        width=width, mr=mr, nvec=nvec, tw=tw, kc=kc, mc=mc, nc=nc,
        pack_a=pack_a, pack_b=pack_b, unroll=unroll, prefetch_b=tune.prefetch_b if width > 1 else 0,
        mt=mt, nt=nt, tasks_m=tasks_m, tasks_n=tasks_n, a_once=a_once,
        threads=max(1, min(threads, tasks_m * tasks_n * spec.batch)),
        cols_outer=stream, prefetch_stream=stream, ws_c_floats=mr * tw if spec.stages_c else 0,
    )


def split_table(spec: GemmSpec, plan: GemmPlan) -> list[tuple[int, int, int]]:
    """For a run-time ``m`` (``m_runtime``, a static ``n``) on several threads: per bound
    ``mr * 2**i`` below the planned ``m``, ``(bound, row splits, columns per task)`` as
    :func:`make_plan` would split a GEMM of ``bound`` rows with this plan's tiles and blocks
    (few rows split the columns, so each thread streams its share of B once); the entry picks
    the first bound at or above each call's ``m``, and the plan's own split above them all."""
    if not spec.m_runtime or "n" in spec.runtime or plan.threads == 1:
        return []
    table: list[tuple[int, int, int]] = []
    bound = plan.mr
    while bound < spec.m:
        at = dataclasses.replace(spec, m=bound, m_runtime=False)
        sm, sn = _split(at, plan.mr, plan.tw, plan.nc, plan.pack_a, plan.pack_b, plan.threads)
        table.append((bound, sm, _round_up(-(-spec.n // sn), plan.tw)))
        bound *= 2
    return table


def _auto_pack_a(spec: GemmSpec, mr: int, mr_main: int, tw: int, threads: int) -> bool:
    """Pack A into MR-row panels?  See :class:`Tuning` for the measurements."""
    tune = TUNING
    if mr != mr_main or spec.m < tune.pack_a_min_rows * mr_main or spec.n <= tune.pack_a_min_tiles * tw:
        return False
    aliased = (4 * spec.lda) % tune.pack_a_alias_bytes == 0 and spec.k >= mr_main  # type: ignore[operator]
    return aliased or (threads > 1 and spec.k >= tune.pack_a_min_k)


def _split(spec: GemmSpec, mr: int, tw: int, nc: int, pack_a: bool, pack_b: bool, threads: int) -> tuple[int, int]:
    """Rows/columns split counts (sm, sn) minimising the slowest thread's cost."""
    m, n, k, batch = spec.m, spec.n, spec.k, spec.batch
    if threads == 1 or batch >= 4 * threads:
        return 1, 1  # whole batch entries balance well enough
    max_sm, max_sn = -(-m // mr), -(-n // tw)
    tune_b = TUNING.b_read_cost
    limit = max(8 * threads, 1)
    best: tuple[float, int, int, int] | None = None
    for sn in range(1, min(max_sn, limit) + 1):
        for sm in range(1, min(max_sm, limit // sn) + 1):
            mt = _round_up(-(-m // sm), mr)
            nt = _round_up(-(-n // sn), tw)
            tm, tn = -(-m // mt), -(-n // nt)
            costs = []
            for _b in range(batch):
                for jn in range(tn):
                    ncur = min(nt, n - jn * nt)
                    for im in range(tm):
                        mcur = min(mt, m - im * mt)
                        flops = _round_up(mcur, mr) * _round_up(ncur, tw) * k / 32.0
                        pack = (mcur * k * math.ceil(ncur / nc) if pack_a else 0) + (ncur * k if pack_b else 0)
                        # Every task streams its columns of a prepacked B from memory once: with
                        # few rows and wide N (an LM head) splitting N halves that traffic,
                        # splitting M doubles it.
                        stream = tune_b * ncur * k if spec.b_packed else 0.0
                        costs.append(flops + 1.5 * pack + stream + 2000.0)
            total = len(costs)
            worst = 0.0
            team = min(threads, total)
            for t in range(team):
                lo, hi = t * total // team, (t + 1) * total // team
                worst = max(worst, sum(costs[lo:hi]))
            key = (worst, total, sm, sn)
            if best is None or key < best:
                best = key
            if len(costs) > 4096:
                break
    assert best is not None
    return best[2], best[3]
