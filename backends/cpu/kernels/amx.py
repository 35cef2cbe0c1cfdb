"""Intel AMX at run time: the tile-data permission, and the tile intrinsics in LLVM IR.

Linux gives a process the AMX tile registers only after it asks
(``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``); an AMX instruction run before
that raises SIGILL.  :func:`amx_permitted` asks once per process (the grant covers every
thread, OpenMP's included) and reports whether the OS agreed.  Code generation chooses AMX
kernels only when it did (:func:`choose_bf16_kernel`, :func:`choose_int8_kernel`), and
loading compiled code asks again (:mod:`~ziggurat.backends.cpu.jit`), so object code saved
by one process runs in another.

The tile intrinsics are LLVM's ``*.internal`` forms, which take each tile's shape (rows, and
bytes per row) as operands; LLVM's AMX passes write the tile configuration (``ldtilecfg``)
from those shapes, so no kernel here handles a configuration by hand.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import I8P, I64, VOID, NamedType, declare, instr, value_type

_SYS_ARCH_PRCTL = 158
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18

# The environment variable that forbids AMX kernels (tests of the fallback, or a host whose
# kernel misbehaves).
DISABLE_ENV = "ZIGGURAT_DISABLE_AMX"

_lock = threading.Lock()
_granted: bool | None = None
_refusal: str = ""


def request_tile_permission() -> tuple[bool, str]:
    """Ask the OS for the AMX tile state; ``(granted, why not)``.  Asks once per process."""
    global _granted, _refusal
    with _lock:
        if _granted is None:
            _granted, _refusal = _ask()
        return _granted, _refusal


def _ask() -> tuple[bool, str]:
    if not os.uname().sysname == "Linux":
        return False, "AMX tile permission is requested through Linux's arch_prctl only"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA)
    except (OSError, AttributeError) as exc:
        return False, f"arch_prctl is not callable: {exc}"
    if rc != 0:
        err = ctypes.get_errno()
        return False, f"arch_prctl(ARCH_REQ_XCOMP_PERM) refused: {os.strerror(err)} (errno {err})"
    return True, ""


#: The end of an AMX kernel's entry symbol: loading object code that defines one asks the OS
#: for the tile permission first (:mod:`~ziggurat.backends.cpu.jit`), never SIGILL.
AMX_SYMBOL_SUFFIX = "__amx"


def entry_symbol(symbol: str, kernel: str) -> str:
    """A GEMM kernel's entry symbol: ``symbol``, with :data:`AMX_SYMBOL_SUFFIX` for ``"amx"``."""
    return symbol + (AMX_SYMBOL_SUFFIX if kernel == "amx" else "")


def host_has_amx_bf16(features: Mapping[str, bool]) -> bool:
    return bool(features.get("amx-tile")) and bool(features.get("amx-bf16"))


def choose_bf16_kernel(features: Mapping[str, bool], amx_granted: bool, amx_disabled: bool = False) -> str | None:
    """The bf16 GEMM kernel for a host: ``"amx"`` (tile ``tdpbf16ps``), ``"avx512bf16"``
    (``vdpbf16ps``), or None when the host has neither (bf16 GEMMs then run in torch).

    ``features`` are LLVM's host feature names; ``amx_granted`` whether the OS gave this
    process the tile state."""
    if host_has_amx_bf16(features) and amx_granted and not amx_disabled and features.get("avx512f"):
        return "amx"
    if features.get("avx512bf16") and features.get("avx512f") and features.get("avx512bw"):
        return "avx512bf16"
    return None


def amx_disabled_by_env() -> bool:
    return os.environ.get(DISABLE_ENV, "").strip() not in ("", "0")


def host_bf16_kernel() -> str | None:
    """:func:`choose_bf16_kernel` for this process (asks for the tile permission on an AMX host)."""
    from ziggurat.backends.cpu.isa import host_features

    feats = host_features()
    granted = request_tile_permission()[0] if host_has_amx_bf16(feats) and not amx_disabled_by_env() else False
    return choose_bf16_kernel(feats, granted, amx_disabled_by_env())


def bf16_kernel_for(isa_name: str) -> str | None:
    """:func:`host_bf16_kernel` for code compiled for the ISA named ``isa_name``: none below
    ``avx512`` (both kernels are AVX-512 code)."""
    return host_bf16_kernel() if isa_name == "avx512" else None


def host_has_amx_int8(features: Mapping[str, bool]) -> bool:
    return bool(features.get("amx-tile")) and bool(features.get("amx-int8"))


def choose_int8_kernel(features: Mapping[str, bool], amx_granted: bool, amx_disabled: bool = False) -> str | None:
    """The int8 GEMM kernel for a host: ``"amx"`` (tile ``tdpbusd``), ``"vnni"``
    (``vpdpbusd``), or None when the host has neither (int8 GEMMs then run in torch).

    Both need AVX512F and AVX512BW: the requantizing pass and the epilogue are AVX512 code.
    ``features`` are LLVM's host feature names; ``amx_granted`` whether the OS gave this
    process the tile state."""
    avx512 = bool(features.get("avx512f")) and bool(features.get("avx512bw"))
    if host_has_amx_int8(features) and amx_granted and not amx_disabled and avx512:
        return "amx"
    if features.get("avx512vnni") and avx512:
        return "vnni"
    return None


def host_int8_kernel() -> str | None:
    """:func:`choose_int8_kernel` for this process (asks for the tile permission on an AMX host)."""
    from ziggurat.backends.cpu.isa import host_features

    feats = host_features()
    granted = request_tile_permission()[0] if host_has_amx_int8(feats) and not amx_disabled_by_env() else False
    return choose_int8_kernel(feats, granted, amx_disabled_by_env())


#: Int8 GEMMs this shallow take the VNNI kernel on an AMX host (see :func:`int8_kernel_for_depth`)
VNNI_INT8_MAX_K = 192


def int8_kernel_for_depth(host_kernel: str | None, k: int) -> str | None:
    """The int8 kernel for a GEMM of depth ``k`` on a host whose int8 kernel is ``host_kernel``
    (:func:`host_int8_kernel`): the VNNI kernel instead of AMX where ``k`` is at most 64, or
    under :data:`VNNI_INT8_MAX_K` and not a multiple of 64.

    A ``tdpbusd`` step reads 64 bytes of K, so K is padded to 64 (147 to 192: 23 % of the
    products are zeros), and a 32-row block's sums go through memory to its epilogue; VNNI's
    ``vpdpbusd`` pads K to 4 and keeps 8 rows' sums in registers.  Interleaved in one process,
    1 thread, Emerald Rapids, uint8 in and out with bias, relu and requantize (AMX / VNNI, us):
    K = 64: 3136x256 357 / 241, 3136x64 113 / 94; K = 96: 418 / 287 (3136x256), 258 / 183
    (784x512); K = 147: 567 / 520, 301 / 288, 168 / 167, 120 / 103 (196x1024); K = 160: 544 /
    502, 340 / 288, 168 / 176, 123 / 112.  At K = 128 and 192 (no padding) and K = 224 AMX is
    level or ahead (K = 128: 379 / 351, 225 / 235, 128 / 141, 129 / 143), and from K = 256 on it
    is 1.2-1.8x faster."""
    if host_kernel != "amx":
        return host_kernel
    if k <= 64 or (k < VNNI_INT8_MAX_K and k % 64):
        return "vnni"
    return "amx"


def tile_row_stride(row_bytes: int) -> int:
    """The row stride, in bytes, for an operand whose rows of ``row_bytes`` a tile load reads:
    ``row_bytes``, or 64 more where it is an even number (at least 4) of 64-byte lines.

    A tile load reads 16 rows at once, 64 bytes of each.  At a stride of an even number of
    lines those rows fall in half of L1's 64 sets or fewer (2 sets at 2,048 or 6,144 bytes),
    more lines than a set's 12 ways, and each step of K misses again; an odd number of lines
    spreads them over 16 sets.  Interleaved in one process, Emerald Rapids, 1 thread:
    - bf16, A padded by 32 elements (a convolution's weight, run-time B): 256x196x1024 747 ->
      847 GFLOP/s, 512x49x2048 +9 %, 1024x196x256 +8 %, 128x784x512 +5 %, 512x784x128 +6 %;
      K = 64 (2 lines) unchanged, hence the 4 lines.  The AVX512-BF16 kernel did not change
      (-1 to +1 %): it is not used there.
    - int8, the requantized workspace rows (hot weights): 128x768x3072 801 -> 1,115 GOP/s,
      128x3072x768 +9 %, 1024^3 +6 %, ResNet-50's 1x1 convolution shapes +1 to +3 %."""
    return row_bytes + 64 if row_bytes >= 256 and row_bytes % 128 == 0 else row_bytes


AMX = NamedType("x86_amx")  # one tile register
I16 = ir.IntType(16)


def _i16(v: int | ir.Value) -> ir.Value:
    """A tile dimension: a constant, or an ``i16`` value computed at run time (LLVM then writes
    the tile configuration from it when the function starts; it must be set before that)."""
    if isinstance(v, ir.Value):
        if value_type(v) != I16:
            raise ValueError(f"a run-time tile dimension must be an i16, got {value_type(v)}")
        return v
    if not 0 < v <= 1024:
        raise ValueError(f"tile dimension {v} out of range")
    return ir.Constant(I16, v)


def tile_zero(module: ir.Module, b: ir.IRBuilder, rows: int | ir.Value, col_bytes: int) -> ir.Value:
    fn = declare(module, "llvm.x86.tilezero.internal", AMX, [I16, I16])
    return instr(b.call(fn, [_i16(rows), _i16(col_bytes)]))


def tile_load(module: ir.Module, b: ir.IRBuilder, rows: int | ir.Value, col_bytes: int, ptr: ir.Value,
              stride_bytes: int | ir.Value) -> ir.Value:
    fn = declare(module, "llvm.x86.tileloadd64.internal", AMX, [I16, I16, I8P, I64])
    stride = ir.Constant(I64, stride_bytes) if isinstance(stride_bytes, int) else stride_bytes
    return instr(b.call(fn, [_i16(rows), _i16(col_bytes), b.bitcast(ptr, I8P), stride]))


def tile_store(module: ir.Module, b: ir.IRBuilder, rows: int | ir.Value, col_bytes: int, ptr: ir.Value,
               stride_bytes: int, tile: ir.Value) -> None:
    fn = declare(module, "llvm.x86.tilestored64.internal", VOID, [I16, I16, I8P, I64, AMX])
    b.call(fn, [_i16(rows), _i16(col_bytes), b.bitcast(ptr, I8P), ir.Constant(I64, stride_bytes), tile])


def tile_dpbf16ps(module: ir.Module, b: ir.IRBuilder, rows: int, c_col_bytes: int, a_col_bytes: int,
                  acc: ir.Value, a: ir.Value, bt: ir.Value) -> ir.Value:
    """``acc[rows x c_col_bytes/4] += a[rows x a_col_bytes/2] @ b`` (b in VNNI-2 pairs)."""
    fn = declare(module, "llvm.x86.tdpbf16ps.internal", AMX, [I16, I16, I16, AMX, AMX, AMX])
    return instr(b.call(fn, [_i16(rows), _i16(c_col_bytes), _i16(a_col_bytes), acc, a, bt]))


def tile_dpbusd(module: ir.Module, b: ir.IRBuilder, rows: int | ir.Value, c_col_bytes: int, a_col_bytes: int,
                acc: ir.Value, a: ir.Value, bt: ir.Value) -> ir.Value:
    """``acc[rows x c_col_bytes/4] += a[rows x a_col_bytes] @ b`` in int32: ``a`` uint8, ``b``
    int8 in VNNI-4 groups (``a_col_bytes / 4`` rows of 4 k per column)."""
    fn = declare(module, "llvm.x86.tdpbusd.internal", AMX, [I16, I16, I16, AMX, AMX, AMX])
    return instr(b.call(fn, [_i16(rows), _i16(c_col_bytes), _i16(a_col_bytes), acc, a, bt]))
