""":class:`VecOps`: the f32 vector operations of the kernels, for one ISA's register width.

With width 1 (``Isa.SCALAR``) values are plain ``float``; otherwise ``<W x float>``.  Partial
vectors (tails) use ``llvm.masked.load`` / ``llvm.masked.store`` with constant masks, so no
scalar remainder loop is needed on the vector ISAs.
"""

from __future__ import annotations

from llvmlite import ir

from ziggurat.backends.cpu.isa import Isa, vector_width
from ziggurat.backends.cpu.llvm_ir import F32, I1, I32, I64, VOID, declare, gep, mul


class _ZeroMask(ir.Constant):
    """An all-zero vector constant printed as ``zeroinitializer`` (keeps the
    IR text of broadcasts short; llvmlite still sees the element values)."""

    def _get_reference(self) -> str:
        return "zeroinitializer"


class _UndefVector(ir.Constant):
    """A vector ``undef`` printed as one word."""

    def _get_reference(self) -> str:
        return "undef"


class VecOps:
    """f32 vector operations for one ISA's register width."""

    def __init__(self, module: ir.Module, isa: Isa) -> None:
        self.module = module
        self.isa = isa
        self.width = vector_width(isa, 32)
        self.ty: ir.Type = F32 if self.width == 1 else ir.VectorType(F32, self.width)
        self.ptr_ty = self.ty.as_pointer()

    # -- constants -------------------------------------------------------
    def zero(self) -> ir.Value:
        if self.width == 1:
            return ir.Constant(self.ty, 0.0)
        return _ZeroMask(self.ty, [0.0] * self.width)

    def const(self, x: float) -> ir.Value:
        return ir.Constant(self.ty, x if self.width == 1 else [x] * self.width)

    def mask(self, lanes: int) -> ir.Value:
        return ir.Constant(ir.VectorType(I1, self.width), [1 if i < lanes else 0 for i in range(self.width)])

    # -- data movement ---------------------------------------------------
    def splat(self, b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        if self.width == 1:
            return x
        undef = _UndefVector(self.ty, ir.Undefined)
        v = b.insert_element(undef, x, I32(0))
        return b.shuffle_vector(v, undef, _ZeroMask(ir.VectorType(I32, self.width), [0] * self.width))

    def load(self, b: ir.IRBuilder, ptr: ir.Value, lanes: int | None = None) -> ir.Value:
        """Load ``lanes`` consecutive floats at ``ptr`` (others read as 0)."""
        lanes = self.width if lanes is None else lanes
        self._check_lanes(lanes)
        if self.width == 1:
            return b.load(ptr, align=4)
        vp = b.bitcast(ptr, self.ptr_ty)
        if lanes == self.width:
            return b.load(vp, align=4)
        fn = declare(
            self.module, f"llvm.masked.load.v{self.width}f32.p0v{self.width}f32",
            self.ty, [self.ptr_ty, I32, ir.VectorType(I1, self.width), self.ty],
        )
        return b.call(fn, [vp, I32(4), self.mask(lanes), self.zero()])

    def store(self, b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, lanes: int | None = None) -> None:
        lanes = self.width if lanes is None else lanes
        self._check_lanes(lanes)
        if self.width == 1:
            b.store(value, ptr, align=4)
            return
        vp = b.bitcast(ptr, self.ptr_ty)
        if lanes == self.width:
            b.store(value, vp, align=4)
            return
        fn = declare(
            self.module, f"llvm.masked.store.v{self.width}f32.p0v{self.width}f32",
            VOID, [self.ty, self.ptr_ty, I32, ir.VectorType(I1, self.width)],
        )
        b.call(fn, [value, vp, I32(4), self.mask(lanes)])

    def load_strided(self, b: ir.IRBuilder, ptr: ir.Value, stride: int, lanes: int | None = None) -> ir.Value:
        """Lanes ``ptr[0], ptr[stride], ...``; stride 1 is a (masked) vector
        load, stride 0 a broadcast, others are assembled lane by lane."""
        lanes = self.width if lanes is None else lanes
        self._check_lanes(lanes)
        if stride == 1:
            return self.load(b, ptr, lanes)
        if stride == 0:
            return self.splat(b, b.load(ptr, align=4))
        if self.width == 1:
            return b.load(ptr, align=4)
        v = self.zero()
        for lane in range(lanes):
            x = b.load(gep(b, ptr, lane * stride), align=4)
            v = b.insert_element(v, x, I32(lane))
        return v

    def load_strided_runtime(self, b: ir.IRBuilder, ptr: ir.Value, stride: ir.Value, lanes: int | None = None) -> ir.Value:
        """Lanes ``ptr[0], ptr[stride], ...`` with ``stride`` an ``i64`` known at run time: a
        vector load where it is 1, else lane by lane."""
        lanes = self.width if lanes is None else lanes
        self._check_lanes(lanes)
        if self.width == 1:
            return b.load(ptr, align=4)
        pre = b.block
        with b.if_else(b.icmp_signed("==", stride, ir.Constant(I64, 1))) as (unit, other):
            with unit:
                contiguous = self.load(b, ptr, lanes)
                unit_end = b.block
            with other:
                v = self.zero()
                for lane in range(lanes):
                    x = b.load(gep(b, ptr, mul(b, stride, ir.Constant(I64, lane))), align=4)
                    v = b.insert_element(v, x, I32(lane))
                other_end = b.block
        del pre
        phi = b.phi(self.ty)
        phi.add_incoming(contiguous, unit_end)
        phi.add_incoming(v, other_end)
        return phi

    # -- arithmetic ------------------------------------------------------
    def fma(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
        """``x * y + acc``: a true FMA on the vector ISAs, ``llvm.fmuladd`` on
        the scalar one (which has no FMA unit to rely on)."""
        suffix = "f32" if self.width == 1 else f"v{self.width}f32"
        base = "llvm.fmuladd" if self.isa is Isa.SCALAR else "llvm.fma"
        fn = declare(self.module, f"{base}.{suffix}", self.ty, [self.ty] * 3)
        return b.call(fn, [x, y, acc])

    def max(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        """``max(x, y)``; a NaN in ``x`` propagates (as torch's clamp does)."""
        return b.select(b.fcmp_unordered(">", x, y), x, y)

    def min(self, b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        """``min(x, y)``; a NaN in ``x`` propagates."""
        return b.select(b.fcmp_unordered("<", x, y), x, y)

    # -- run-time lane counts ----------------------------------------------
    # A lane count known only at run time is a branch around the masked access where it is 0:
    # a masked load or store whose lanes are all off still costs a microcode assist on AMD
    # (Zen 5) when its address is on a page not yet touched (the rows of a buffer planned for
    # the top of a range, past the run's end), about 10 us per GEMM call in a range build.
    def copy_lanes(self, b: ir.IRBuilder, src: ir.Value, dst: ir.Value, count: ir.Value) -> None:
        """``dst[l] = src[l]`` for ``l < count`` (an ``i64`` known only at run time, at most
        the width; nothing outside those lanes is read or written).  ``count <= 0`` copies
        nothing."""
        with b.if_then(b.icmp_signed(">", count, ir.Constant(I64, 0))):
            if self.width == 1:
                b.store(b.load(src, align=4), dst, align=4)
                return
            mask = self.runtime_mask(b, count)
            vt = ir.VectorType(I1, self.width)
            load = declare(self.module, f"llvm.masked.load.v{self.width}f32.p0v{self.width}f32",
                           self.ty, [self.ptr_ty, I32, vt, self.ty])
            store = declare(self.module, f"llvm.masked.store.v{self.width}f32.p0v{self.width}f32",
                            VOID, [self.ty, self.ptr_ty, I32, vt])
            x = b.call(load, [b.bitcast(src, self.ptr_ty), I32(4), mask, self.zero()])
            b.call(store, [x, b.bitcast(dst, self.ptr_ty), I32(4), mask])

    def load_lanes(self, b: ir.IRBuilder, ptr: ir.Value, count: ir.Value) -> ir.Value:
        """The first ``count`` floats at ``ptr`` (a run-time ``i64``), the other lanes 0;
        nothing is read where ``count <= 0``."""
        pre = b.block
        with b.if_then(b.icmp_signed(">", count, ir.Constant(I64, 0))):
            if self.width == 1:
                loaded = b.load(ptr, align=4)
            else:
                fn = declare(self.module, f"llvm.masked.load.v{self.width}f32.p0v{self.width}f32",
                             self.ty, [self.ptr_ty, I32, ir.VectorType(I1, self.width), self.ty])
                loaded = b.call(fn, [b.bitcast(ptr, self.ptr_ty), I32(4), self.runtime_mask(b, count), self.zero()])
            then = b.block
        phi = b.phi(self.ty)
        phi.add_incoming(self.zero(), pre)
        phi.add_incoming(loaded, then)
        return phi

    def runtime_mask(self, b: ir.IRBuilder, count: ir.Value) -> ir.Value:
        """Lanes ``l < count`` on (``count`` an ``i64``; none when it is <= 0)."""
        iota = ir.Constant(ir.VectorType(ir.IntType(64), self.width), list(range(self.width)))
        undef = _UndefVector(ir.VectorType(ir.IntType(64), self.width), ir.Undefined)
        v = b.insert_element(undef, count, I32(0))
        splat = b.shuffle_vector(v, undef, _ZeroMask(ir.VectorType(I32, self.width), [0] * self.width))
        return b.icmp_signed("<", iota, splat)

    def _check_lanes(self, lanes: int) -> None:
        if not 1 <= lanes <= self.width:
            raise ValueError(f"lanes must be in 1..{self.width}, got {lanes}")
