"""Register-blocked GEMM microkernel: ``C[mr, cols] (+)= A[mr, kc] @ B[kc, cols]``.

All ``mr * nvec`` accumulators are SSA values carried around the k loop, so
LLVM keeps them in vector registers (zmm on AVX-512, ymm on AVX2); each k
step loads ``nvec`` B vectors, broadcasts one A element per row and issues
``mr * nvec`` FMAs.  The epilogue (C accumulation across K blocks, bias,
activation, residual add/sub) runs on the accumulators in registers, before
the tile's single store.
Column tails use masked loads/stores; row tails are separate, smaller
instances of this kernel (shapes are static).

Emitted signature (internal linkage)::

    void uk(float* a, float* b, float* c, i64 kc, i32 flags, float* bias, float* other)

``flags`` bit 0 set: not the first K block, add the partial C tile stored by
the previous block (clear: run the early epilogue part instead); bit 1 set:
last K block, run the late epilogue part.  ``a`` points at A[0, 0] of the tile
(element (i, k) at ``a + i*a_rs + k*a_ks``), ``b`` at the tile's first column
of B for k = 0, ``c``/``bias``/``other`` at the tile's origin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.staged_epilogue import staged_rows, stages
from ziggurat.backends.cpu.kernels.unary import emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32P, I32, I64, VOID, gep, i64, if_update, mul_const

FLAG_ACCUMULATE = 1
FLAG_FINAL = 2


@dataclass(frozen=True)
class Epilogue:
    """What is applied to the accumulators besides the products.

    Order: ``acc + bias``, then ``unary``, then ``binary`` (``x + alpha*other``
    or ``x - alpha*other``, torch.add/sub semantics); with ``binary_first``
    the binary op comes before the activation (e.g. ResNet's add -> relu).
    Bias, and a binary op not preceded by an activation, are added with the
    first K block; the rest runs after the last one.
    ``other`` element (i, j) is at ``other + i*other_rs + j*other_cs``
    (a stride of 0 broadcasts).
    """

    bias: bool = False
    unary: str | None = None
    unary_params: tuple[tuple[str, float | None], ...] = ()
    binary: str | None = None
    alpha: float = 1.0
    other_rs: int = 0
    other_cs: int = 1
    binary_first: bool = False
    #: ``other``'s strides come at run time (two ``i64`` arguments after the others; a
    #: residual laid out along a dynamic dim in a range build); ``other_rs``/``other_cs`` are unused
    other_runtime: bool = False

    @property
    def is_identity(self) -> bool:
        return not self.bias and self.unary is None and self.binary is None

    @property
    def binary_is_early(self) -> bool:
        """The binary op is linear in the accumulator when no activation comes
        before it, so it is applied with the *first* K block: ``other`` is read
        before C is first written, which makes ``other is c`` (in-place
        residual) safe."""
        return self.binary is not None and (self.binary_first or self.unary is None)

    @property
    def has_early_part(self) -> bool:
        return self.bias or self.binary_is_early

    @property
    def has_late_part(self) -> bool:
        return self.unary is not None or (self.binary is not None and not self.binary_is_early)


@dataclass(frozen=True)
class TileAccess:
    """Static addressing of one microkernel instance."""

    a_rs: int  # A row stride (elements)
    a_ks: int  # A k stride
    b_ks: int  # B k stride
    b_nr: int  # B panel width (columns stored contiguously); a multiple of the vector width
    b_panel_stride: int  # elements between consecutive B panels
    b_padded: bool  # B panels are zero padded to b_nr columns: tails may load full vectors
    ldc: int

    def b_offset(self, col: int) -> int:
        return (col // self.b_nr) * self.b_panel_stride + col % self.b_nr


def emit_microkernel(
    module: ir.Module,
    vec: VecOps,
    name: str,
    mr: int,
    cols: int,
    access: TileAccess,
    epilogue: Epilogue,
    unroll: int = 4,
    prefetch_c: bool = True,
    prefetch_b: int = 0,
    prefetch_stream: bool = False,
) -> ir.Function:
    """Emit one microkernel instance (see the module docstring).

    ``prefetch_b``: software-prefetch the B rows this many k steps ahead into L1
    (0 = rely on the hardware prefetcher).  ``prefetch_stream``: the kernel takes an
    eighth argument ``pf`` and prefetches into L2 two cache lines from ``pf`` onwards
    per ``unroll`` k steps (``kc/2`` lines per call), so the caller can spread the
    streaming of the B panel the next tiles need over the calls of this one."""
    w = vec.width
    if mr < 1 or cols < 1:
        raise ValueError(f"microkernel {name}: empty tile {mr}x{cols}")
    if access.b_nr % w:
        raise ValueError(f"microkernel {name}: B panel width {access.b_nr} is not a multiple of {w}")
    nvec = -(-cols // w)
    lanes = [min(w, cols - v * w) for v in range(nvec)]
    b_lanes = [w if access.b_padded else n for n in lanes]
    b_offs = [access.b_offset(v * w) for v in range(nvec)]

    fnty = ir.FunctionType(VOID, [F32P, F32P, F32P, I64, I32, F32P, F32P] + ([F32P] if prefetch_stream else [])
                           + [I64, I64] * epilogue.other_runtime)
    fn = ir.Function(module, fnty, name=name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    a, bp, c, kc, flags, bias, other = fn.args[:7]
    for arg, nm in zip(fn.args, ("a", "b", "c", "kc", "flags", "bias", "other", *(["pf"] * prefetch_stream),
                                 "other_rs", "other_cs")):
        arg.name = nm
    strides = (fn.args[-2], fn.args[-1]) if epilogue.other_runtime else None
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    if prefetch_c:
        _prefetch_tile(module, b, c, mr, cols, access.ldc)

    accs = [vec.zero() for _ in range(mr * nvec)]

    lines = sorted({(b_offs[v] + u) // 16 * 16 for v in range(nvec) for u in (0, w - 1)})

    def step(bld: ir.IRBuilder, accs: list[ir.Value], ptrs: list[ir.Value], s: int) -> list[ir.Value]:
        ap, bptr = ptrs[0], ptrs[1]
        if prefetch_b:
            for off in lines:
                llvm_ir.prefetch(module, bld, gep(bld, bptr, (s + prefetch_b) * access.b_ks + off), write=False)
        if len(ptrs) > 2 and s == 0:
            for off in (0, 16):
                llvm_ir.prefetch(module, bld, gep(bld, ptrs[2], off), write=False, locality=2)
        bv = [vec.load(bld, gep(bld, bptr, s * access.b_ks + b_offs[v]), b_lanes[v]) for v in range(nvec)]
        out = list(accs)
        for i in range(mr):
            x = vec.splat(bld, bld.load(gep(bld, ap, i * access.a_rs + s * access.a_ks), align=4))
            for v in range(nvec):
                out[i * nvec + v] = vec.fma(bld, x, bv[v], out[i * nvec + v])
        return out

    ptrs: list[tuple[ir.Value, int]] = [(a, access.a_ks), (bp, access.b_ks)]
    n_main = llvm_ir.udiv(b, kc, i64(unroll), name="kmain") if unroll > 1 else kc
    main_ptrs = ptrs + ([(fn.args[7], 32 // unroll)] if prefetch_stream and unroll > 1 else [])
    accs, ends = _k_loop(b, n_main, accs, main_ptrs, step, unroll, "kmain")
    if unroll > 1:
        n_rem = llvm_ir.urem(b, kc, i64(unroll), name="krem")
        accs, _ = _k_loop(b, n_rem, accs, [(ends[0], access.a_ks), (ends[1], access.b_ks)], step, 1, "krem")

    def c_ptr(i: int | ir.Value, v: int) -> ir.Value:
        return gep(b, gep(b, c, mul_const(b, i, access.ldc)), v * w)

    def add_c(vals: list[ir.Value]) -> list[ir.Value]:
        return [llvm_ir.fadd(b, vals[i * nvec + v], vec.load(b, c_ptr(i, v), lanes[v]))
                for i in range(mr) for v in range(nvec)]

    accumulate = b.icmp_unsigned("!=", llvm_ir.and_(b, flags, I32(FLAG_ACCUMULATE)), I32(0))
    if epilogue.has_early_part:
        # First K block: fold bias (and a residual that precedes any
        # activation) into the accumulators; later blocks add the partial C.
        first_block = b.icmp_unsigned("==", llvm_ir.and_(b, flags, I32(FLAG_ACCUMULATE)), I32(0))
        accs = if_update(b, first_block, accs,
                         lambda vals: _early_epilogue(b, vec, vals, mr, lanes, bias, other, epilogue, strides),
                         name="epi0")
    accs = if_update(b, accumulate, accs, add_c, name="accc")

    def store_all(vals: list[ir.Value]) -> None:
        for i in range(mr):
            for v in range(nvec):
                vec.store(b, vals[i * nvec + v], c_ptr(i, v), lanes[v])

    if epilogue.has_late_part:
        # Finish and store each vector in turn, so the activation's temporaries
        # do not have to share the register file with all the accumulators.
        final = b.icmp_unsigned("!=", llvm_ir.and_(b, flags, I32(FLAG_FINAL)), I32(0))
        with b.if_else(final) as (then, otherwise):
            with then:
                _late_epilogue_store(b, vec, accs, mr, lanes, other, epilogue, c_ptr, strides)
            with otherwise:
                store_all(accs)
    else:
        store_all(accs)
    b.ret_void()
    return fn


StepFn = Callable[[ir.IRBuilder, list[ir.Value], list[ir.Value], int], list[ir.Value]]


def _k_loop(
    b: ir.IRBuilder, n_iter: ir.Value, accs: list[ir.Value], ptrs: list[tuple[ir.Value, int]],
    step: StepFn, steps: int, name: str,
) -> tuple[list[ir.Value], list[ir.Value]]:
    """``n_iter`` iterations of ``steps`` unrolled k steps; ``ptrs`` are (pointer, elements
    it advances per k step).  Returns the accumulators and the advanced pointers."""
    fn = b.function
    pre = b.block
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.cbranch(b.icmp_unsigned("!=", n_iter, i64(0)), body, done)

    b.position_at_end(body)
    acc_phis = [b.phi(llvm_ir.value_type(v)) for v in accs]
    ptr_phis = [b.phi(llvm_ir.value_type(p), name=f"p{i}") for i, (p, _) in enumerate(ptrs)]
    cnt = b.phi(I64, name="cnt")
    cur: list[ir.Value] = list(acc_phis)
    for s in range(steps):
        cur = step(b, cur, list(ptr_phis), s)
    nexts = [gep(b, phi, steps * stride) for phi, (_, stride) in zip(ptr_phis, ptrs)]
    cnt_next = llvm_ir.add(b, cnt, i64(1))
    end = b.block
    for phi, init, new in zip(acc_phis, accs, cur):
        phi.add_incoming(init, pre)
        phi.add_incoming(new, end)
    for phi, (init, _), new in zip(ptr_phis, ptrs, nexts):
        phi.add_incoming(init, pre)
        phi.add_incoming(new, end)
    cnt.add_incoming(i64(0), pre)
    cnt.add_incoming(cnt_next, end)
    b.cbranch(b.icmp_unsigned("!=", cnt_next, n_iter), body, done)

    b.position_at_end(done)
    out_accs = []
    for init, new in zip(accs, cur):
        phi = b.phi(llvm_ir.value_type(init))
        phi.add_incoming(init, pre)
        phi.add_incoming(new, end)
        out_accs.append(phi)
    out_ptrs = []
    for (init, _), new in zip(ptrs, nexts):
        phi = b.phi(llvm_ir.value_type(init))
        phi.add_incoming(init, pre)
        phi.add_incoming(new, end)
        out_ptrs.append(phi)
    return out_accs, out_ptrs


Strides = tuple[ir.Value, ir.Value] | None


def _binary(b: ir.IRBuilder, vec: VecOps, x: ir.Value, other: ir.Value, i: int | ir.Value, v: int, lanes: int,
            epi: Epilogue, strides: Strides = None) -> ir.Value:
    if strides is not None:  # run-time strides (Epilogue.other_runtime)
        rs, cs = strides
        optr = gep(b, other, llvm_ir.add(b, llvm_ir.mul(b, i64(i), rs), llvm_ir.mul(b, i64(v * vec.width), cs)))
        return combine_binary(b, vec, epi, x, vec.load_strided_runtime(b, optr, cs, lanes))
    optr = gep(b, gep(b, other, mul_const(b, i, epi.other_rs)), v * vec.width * epi.other_cs)
    return combine_binary(b, vec, epi, x, vec.load_strided(b, optr, epi.other_cs, lanes))


def combine_binary(b: ir.IRBuilder, vec: VecOps, epi: Epilogue, x: ir.Value, other: ir.Value) -> ir.Value:
    """``x + alpha*other`` or ``x - alpha*other`` (the epilogue's binary op on loaded ``other``)."""
    if epi.alpha != 1.0:
        other = llvm_ir.fmul(b, other, vec.const(epi.alpha))
    return llvm_ir.fadd(b, x, other) if epi.binary == "add" else llvm_ir.fsub(b, x, other)


def _early_epilogue(
    b: ir.IRBuilder, vec: VecOps, accs: list[ir.Value], mr: int, lanes: list[int],
    bias: ir.Value, other: ir.Value, epi: Epilogue, strides: Strides = None,
) -> list[ir.Value]:
    """Bias, and the binary op when no activation precedes it (first K block)."""
    w = vec.width
    nvec = len(lanes)
    bias_v = [vec.load(b, gep(b, bias, v * w), lanes[v]) for v in range(nvec)] if epi.bias else []
    out: list[ir.Value] = []
    for i in range(mr):
        for v in range(nvec):
            x = accs[i * nvec + v]
            if epi.bias:
                x = llvm_ir.fadd(b, x, bias_v[v])
            if epi.binary_is_early:
                x = _binary(b, vec, x, other, i, v, lanes[v], epi, strides)
            out.append(x)
    return out


def _late_epilogue_store(
    b: ir.IRBuilder, vec: VecOps, accs: list[ir.Value], mr: int, lanes: list[int],
    other: ir.Value, epi: Epilogue, c_ptr: Callable[[int | ir.Value, int], ir.Value], strides: Strides = None,
) -> None:
    """The activation, then a binary op that follows it (last K block); each
    result is stored as soon as it is ready (a transcendental activation runs
    over the staged tile, a few vectors at a time, see ``staged_epilogue``)."""
    nvec = len(lanes)
    params = dict(epi.unary_params)

    def activation(x: ir.Value) -> ir.Value:
        return x if epi.unary is None else emit_unary(b, vec, epi.unary, x, params)

    def post(x: ir.Value, i: int | ir.Value, v: int) -> ir.Value:
        if epi.binary is not None and not epi.binary_is_early:
            x = _binary(b, vec, x, other, i, v, lanes[v], epi, strides)
        return x

    def store(x: ir.Value, i: int | ir.Value, v: int) -> None:
        vec.store(b, x, c_ptr(i, v), lanes[v])

    if stages(epi.unary, vec.width):
        staged_rows(b, vec, accs, mr, nvec, activation, post, store)
        return
    for i in range(mr):
        for v in range(nvec):
            store(post(activation(accs[i * nvec + v]), i, v), i, v)


def _prefetch_tile(module: ir.Module, b: ir.IRBuilder, c: ir.Value, mr: int, cols: int, ldc: int) -> None:
    """Prefetch the C tile (every 64-byte line) for writing while the k loop runs."""
    for i in range(mr):
        for col in range(0, cols, 16):
            llvm_ir.prefetch(module, b, gep(b, c, i * ldc + col), write=True)
