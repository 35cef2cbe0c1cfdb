"""Operand packing emitted as IR (run inside the GEMM, per thread workspace).

* ``pack_a``: rows of A -> MR-row panels, ``dst[p*MR*KC + k*MR + i]``.
* ``pack_b_kn``: a row-major ``[K, N]`` B block -> TW-column panels,
  ``dst[q*KC*TW + k*TW + j]`` (zero padded past N).
* ``pack_b_nk``: the same panels from B stored transposed (``[N, K]``).

Both transposing packs move ``width x width`` blocks through registers with a
butterfly of two-input shuffles (log2(width) stages), so the copy runs at
vector speed instead of element by element.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, F32P, I32, I64, VOID, for_range, gep, i64


def transpose(b: ir.IRBuilder, vec: VecOps, rows: list[ir.Value]) -> list[ir.Value]:
    """Transpose a ``width x width`` block held as ``width`` row vectors."""
    n = vec.width
    if len(rows) != n or n & (n - 1):
        raise ValueError(f"transpose needs {n} rows and a power-of-two width")
    r = list(rows)
    d = n // 2
    while d >= 1:
        lo_mask = [(l if not l & d else n + l - d) for l in range(n)]
        hi_mask = [(l + d if not l & d else n + l) for l in range(n)]
        lo_c = ir.Constant(ir.VectorType(I32, n), lo_mask)
        hi_c = ir.Constant(ir.VectorType(I32, n), hi_mask)
        nr = list(r)
        for i in range(n):
            if i & d:
                continue
            nr[i] = b.shuffle_vector(r[i], r[i + d], lo_c)
            nr[i + d] = b.shuffle_vector(r[i], r[i + d], hi_c)
        r = nr
        d //= 2
    return r


def _new_fn(module: ir.Module, name: str, runtime_ld: bool = False) -> tuple[ir.Function, ir.IRBuilder]:
    """``pack(src, dst, count, kc[, ld])``: with ``runtime_ld`` the source's leading dim is
    the fifth argument (a GEMM with run-time strides)."""
    fn = ir.Function(module, ir.FunctionType(VOID, [F32P, F32P, I64, I64] + [I64] * runtime_ld), name=name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    for arg, nm in zip(fn.args, ("src", "dst", "count", "kc", "ld")):
        arg.name = nm
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _load_if(b: ir.IRBuilder, cond: ir.Value, ptr: ir.Value) -> ir.Value:
    """``*ptr`` where ``cond`` holds, else 0.0, reading nothing otherwise."""
    pre = b.block
    with b.if_then(cond):
        x = b.load(ptr, align=4)
        then = b.block
    phi = b.phi(F32)
    phi.add_incoming(ir.Constant(F32, 0.0), pre)
    phi.add_incoming(x, then)
    return phi


def _transposed_panel(
    b: ir.IRBuilder, vec: VecOps, src: ir.Value, src_ld: int | ir.Value, nrows: int | ir.Value, dst: ir.Value,
    dst_ld: int, kc: ir.Value,
) -> None:
    """``dst[k*dst_ld + r] = src[r*src_ld + k]`` for ``r < nrows``, ``k < kc``;
    lanes ``nrows..dst_ld`` of each dst row are written as zeros when
    ``dst_ld > nrows`` (panel padding).  ``nrows`` may be a run-time ``i64`` (at most
    ``dst_ld``): each row is then read only where it is below it."""
    static_rows = nrows if isinstance(nrows, int) else dst_ld

    def present(r: int) -> ir.Value | None:
        return None if isinstance(nrows, int) else b.icmp_signed("<", i64(r), nrows)

    w = vec.width
    groups = -(-max(static_rows, dst_ld) // w) if w > 1 else 0
    if w > 1:
        kblocks = llvm_ir.udiv(b, kc, i64(w))
        with for_range(b, 0, kblocks, name="kb") as kb:
            k0 = llvm_ir.mul(b, kb, i64(w))
            for g in range(groups):
                rows = []
                for r in range(g * w, g * w + w):
                    if r < static_rows:
                        ptr = gep(b, src, llvm_ir.add(b, llvm_ir.mul(b, i64(r), i64(src_ld)), k0))
                        cond = present(r)
                        rows.append(vec.load(b, ptr) if cond is None
                                    else vec.load_lanes(b, ptr, b.select(cond, i64(w), i64(0))))
                    else:
                        rows.append(vec.zero())
                cols = transpose(b, vec, rows)
                lanes = min(w, dst_ld - g * w)
                if lanes <= 0:
                    continue
                for kk in range(w):
                    off = llvm_ir.add(b, llvm_ir.mul(b, llvm_ir.add(b, k0, i64(kk)), i64(dst_ld)), i64(g * w))
                    vec.store(b, cols[kk], gep(b, dst, off), lanes)
        kstart: ir.Value = llvm_ir.mul(b, kblocks, i64(w))
    else:
        kstart = i64(0)
    with for_range(b, kstart, kc, name="kt") as k:
        for r in range(dst_ld):
            if r < static_rows:
                ptr = gep(b, src, llvm_ir.add(b, llvm_ir.mul(b, i64(r), i64(src_ld)), k))
                cond = present(r)
                x = b.load(ptr, align=4) if cond is None else _load_if(b, cond, ptr)
            else:
                x = ir.Constant(F32, 0.0)
            b.store(x, gep(b, dst, llvm_ir.add(b, llvm_ir.mul(b, k, i64(dst_ld)), i64(r))), align=4)


def emit_pack_a(module: ir.Module, vec: VecOps, name: str, mr: int, kc_max: int, lda: int | None,
                tails: tuple[int, ...]) -> ir.Function:
    """``pack(src=A[ic, pc], dst, rows, kc[, lda])``; ``rows % mr`` is 0 or one of ``tails``
    (the static tail, or every count below ``mr`` for a run-time ``m``); ``lda`` None: given
    at run time."""
    fn, b = _new_fn(module, name, runtime_ld=lda is None)
    src, dst, rows, kc = fn.args[:4]
    ld: int | ir.Value = fn.args[4] if lda is None else lda
    panel_stride = llvm_ir.mul(b, i64(mr), i64(ld))
    panels = llvm_ir.udiv(b, rows, i64(mr))
    with for_range(b, 0, panels, name="p") as p:
        s = gep(b, src, llvm_ir.mul(b, p, panel_stride))
        d = gep(b, dst, llvm_ir.mul(b, p, i64(mr * kc_max)))
        _transposed_panel(b, vec, s, ld, mr, d, mr, kc)
    rem = llvm_ir.urem(b, rows, i64(mr))
    for tail in tails:
        present = b.icmp_unsigned("==" if len(tails) > 1 else "!=", rem, i64(tail if len(tails) > 1 else 0))
        with b.if_then(present):
            s = gep(b, src, llvm_ir.mul(b, panels, panel_stride))
            d = gep(b, dst, llvm_ir.mul(b, panels, i64(mr * kc_max)))
            _transposed_panel(b, vec, s, ld, tail, d, mr, kc)
    b.ret_void()
    return fn


def emit_pack_b_nk(module: ir.Module, vec: VecOps, name: str, tw: int, kc_max: int, ldb: int | None,
                   ntail: int | None) -> ir.Function:
    """``pack(src=Bt[jc, pc], dst, cols, kc[, ldb])`` for B stored ``[N, K]``; ``ldb`` None:
    given at run time; ``ntail`` None: the column tail is any count (run-time ``n``)."""
    fn, b = _new_fn(module, name, runtime_ld=ldb is None)
    src, dst, cols, kc = fn.args[:4]
    ld: int | ir.Value = fn.args[4] if ldb is None else ldb
    panel_stride = llvm_ir.mul(b, i64(tw), i64(ld))
    panels = llvm_ir.udiv(b, cols, i64(tw))
    with for_range(b, 0, panels, name="q") as q:
        s = gep(b, src, llvm_ir.mul(b, q, panel_stride))
        d = gep(b, dst, llvm_ir.mul(b, q, i64(tw * kc_max)))
        _transposed_panel(b, vec, s, ld, tw, d, tw, kc)
    if ntail is None or ntail:
        rem = llvm_ir.urem(b, cols, i64(tw))
        with b.if_then(b.icmp_unsigned("!=", rem, i64(0))):
            s = gep(b, src, llvm_ir.mul(b, panels, panel_stride))
            d = gep(b, dst, llvm_ir.mul(b, panels, i64(tw * kc_max)))
            _transposed_panel(b, vec, s, ld, rem if ntail is None else ntail, d, tw, kc)
    b.ret_void()
    return fn


def emit_pack_b_kn(module: ir.Module, vec: VecOps, name: str, tw: int, kc_max: int, ldb: int | None,
                   ntail: int | None) -> ir.Function:
    """``pack(src=B[pc, jc], dst, cols, kc[, ldb])`` for a row-major ``[K, N]`` B; ``ldb``
    None: given at run time; ``ntail`` None: the column tail is any count (run-time ``n``),
    read under a run-time mask."""
    fn, b = _new_fn(module, name, runtime_ld=ldb is None)
    src, dst, cols, kc = fn.args[:4]
    ld: int | ir.Value = fn.args[4] if ldb is None else ldb
    w = vec.width
    nvec = tw // w
    panels = llvm_ir.udiv(b, cols, i64(tw))

    def copy_panel(s: ir.Value, d: ir.Value, valid: int | ir.Value) -> None:
        with for_range(b, 0, kc, name="k") as k:
            srow = gep(b, s, llvm_ir.mul(b, k, i64(ld)))
            drow = gep(b, d, llvm_ir.mul(b, k, i64(tw)))
            for v in range(nvec):
                if isinstance(valid, int):
                    lanes = min(w, valid - v * w)
                    x = vec.load(b, gep(b, srow, v * w), lanes) if lanes > 0 else vec.zero()
                else:
                    x = vec.load_lanes(b, gep(b, srow, v * w), llvm_ir.sub(b, valid, i64(v * w)))
                vec.store(b, x, gep(b, drow, v * w))

    with for_range(b, 0, panels, name="q") as q:
        copy_panel(gep(b, src, llvm_ir.mul(b, q, i64(tw))), gep(b, dst, llvm_ir.mul(b, q, i64(tw * kc_max))), tw)
    if ntail is None or ntail:
        rem = llvm_ir.urem(b, cols, i64(tw))
        with b.if_then(b.icmp_unsigned("!=", rem, i64(0))):
            copy_panel(gep(b, src, llvm_ir.mul(b, panels, i64(tw))), gep(b, dst, llvm_ir.mul(b, panels, i64(tw * kc_max))),
                       rem if ntail is None else ntail)
    b.ret_void()
    return fn
