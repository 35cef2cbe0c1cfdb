"""IR helpers shared by the convolution kernels (``conv_igemm.py``, ``depthwise.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from llvmlite import ir

from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.kernels.microkernel import Epilogue, combine_binary
from ziggurat.backends.cpu.kernels.unary import emit_unary
from ziggurat.backends.cpu.kernels.vec_ops import VecOps
from ziggurat.backends.cpu.llvm_ir import F32, F32P, I64, constant_global, gep, i64

CarryBody = Callable[[ir.IRBuilder, ir.Value, list[ir.Value]], list[ir.Value]]


def carry_loop(b: ir.IRBuilder, n_iter: int | ir.Value, values: Sequence[ir.Value], body: CarryBody,
               name: str = "l") -> list[ir.Value]:
    """``for i in range(n_iter): values = body(b, i, values)``; returns the final values.

    ``n_iter`` may be static (0 emits nothing) or an i64 value."""
    if isinstance(n_iter, int):
        if n_iter <= 0:
            return list(values)
        if n_iter == 1:
            return body(b, i64(0), list(values))
    fn = b.function
    pre = b.block
    loop = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    n_val = i64(n_iter)
    if isinstance(n_iter, int):
        b.branch(loop)
    else:
        b.cbranch(b.icmp_signed(">", n_val, i64(0)), loop, done)
    b.position_at_end(loop)
    idx = b.phi(I64, name=f"{name}.i")
    phis = [b.phi(llvm_ir.value_type(v)) for v in values]
    idx.add_incoming(i64(0), pre)
    for p, v in zip(phis, values, strict=True):
        p.add_incoming(v, pre)
    new = body(b, idx, list(phis))
    nxt = llvm_ir.add(b, idx, i64(1))
    end = b.block
    idx.add_incoming(nxt, end)
    for p, v in zip(phis, new, strict=True):
        p.add_incoming(v, end)
    b.cbranch(b.icmp_signed("<", nxt, n_val), loop, done)
    b.position_at_end(done)
    if isinstance(n_iter, int):
        return new
    out = []
    for v0, v1 in zip(values, new, strict=True):
        phi = b.phi(llvm_ir.value_type(v0))
        phi.add_incoming(v0, pre)
        phi.add_incoming(v1, end)
        out.append(phi)
    return out


def zero_page(module: ir.Module, floats: int) -> ir.GlobalVariable:
    """An internal, 64-byte aligned constant of ``floats`` zeros (what padding taps read)."""
    floats = max(16, -(-floats // 16) * 16)
    ty = ir.ArrayType(F32, floats)
    return constant_global(module, f"zig.conv.zero{floats}", ty, lambda: ir.Constant(ty, None))


def zero_pointer(b: ir.IRBuilder, page: ir.GlobalVariable) -> ir.Value:
    return cast(ir.Value, b.bitcast(page, F32P))


def apply_epilogue(b: ir.IRBuilder, vec: VecOps, epi: Epilogue, acc: ir.Value, bias: ir.Value | None,
                   other_ptr: ir.Value | None, lanes: int) -> ir.Value:
    """``acc`` (+ bias), then the activation and the binary op in the epilogue's order.

    ``bias`` is the loaded bias vector (or None), ``other_ptr`` points at the residual's
    vector (read with ``lanes`` lanes)."""
    x = epilogue_before_activation(b, vec, epi, acc, bias, other_ptr, lanes)
    if epi.unary is not None:
        x = emit_unary(b, vec, epi.unary, x, dict(epi.unary_params))
    return epilogue_after_activation(b, vec, epi, x, other_ptr, lanes)


def epilogue_before_activation(b: ir.IRBuilder, vec: VecOps, epi: Epilogue, acc: ir.Value, bias: ir.Value | None,
                               other_ptr: ir.Value | None, lanes: int) -> ir.Value:
    """The bias, and the binary op when it comes first."""
    x = acc
    if epi.bias and bias is not None:
        x = llvm_ir.fadd(b, x, bias)
    return _binary(b, vec, epi, x, other_ptr, lanes) if epi.binary_first else x


def epilogue_after_activation(b: ir.IRBuilder, vec: VecOps, epi: Epilogue, x: ir.Value,
                              other_ptr: ir.Value | None, lanes: int) -> ir.Value:
    """The binary op when it follows the activation."""
    return x if epi.binary_first else _binary(b, vec, epi, x, other_ptr, lanes)


def _binary(b: ir.IRBuilder, vec: VecOps, epi: Epilogue, x: ir.Value, other_ptr: ir.Value | None,
            lanes: int) -> ir.Value:
    if epi.binary is None or other_ptr is None:
        return x
    return combine_binary(b, vec, epi, x, vec.load(b, other_ptr, lanes))


def vector_lanes(cols: int, width: int) -> list[int]:
    """Lanes of each vector covering ``cols`` columns."""
    return [min(width, cols - v * width) for v in range(-(-cols // width))]


def ptr_at(b: ir.IRBuilder, ptr: ir.Value, offset: int | ir.Value) -> ir.Value:
    return gep(b, ptr, offset)
