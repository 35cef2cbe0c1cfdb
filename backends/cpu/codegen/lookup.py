"""``loop.lookup`` as LLVM IR: a ``vpgatherdd`` of 16 lanes (avx512) or 8 (avx2), or one 16-bit
load (a scalar kernel), from a table of eager's answers.

A float32 function of a widened 16-bit value, rounded back to 16 bits (``extf -> loop.unary ->
truncf``, what ``widen-half-floats`` makes of a bf16 or float16 activation), has only 65,536
possible inputs.  :func:`eager_table` asks torch for all of them once, and the kernel looks its
lanes up instead of computing about 45 vector instructions (GELU) per 16 lanes.  The answers are
eager's own bits: eager's float32 function, then eager's rounding.  Which 16-bit answers, where
eager is not one function:

* eager's float32 function on the path eager's 16-bit kernel takes (``on_eager_16_bit_path``:
  a float16 GELU on a host whose oneDNN has no float16 kernels is torch's own loop, where a
  float32 one is oneDNN's; 402 float16 answers an ulp apart on Zen 4).  A model that widens
  a float16 value itself and takes a float32 GELU gets those 402 answers from torch's loop, as
  it does from the computed kernel;
* eager's vector loop for finite inputs with finite answers: every element of a tensor but the
  last ``numel mod 16`` runs it;
* eager's scalar function (``vecmath``'s choice too) for infinite and NaN inputs, and where the
  vector loop overflows or gives NaN: float32 GELU's vector loop returns NaN for ``+inf`` and
  ``inf`` above 1.7e38, its scalar one ``+inf`` and ``x``.  Elementwise kernels read a strided
  tensor one element at a time, so a strided copy of the inputs gives the scalar answers.

Not eager's bits: a bf16 result in bf16's subnormal range, which eager's bf16 GELU returns as
zero on this Intel host (508 of the 65,536 inputs; why, not established) and the table,
rounding with ``Tensor.to`` as the computed kernel rounds, keeps.  The AMX epilogue's table
(``kernels/bf16_tables.py``) is eager's bf16 vector loop throughout, +inf included: one rule for
both is still to be chosen.

Each table is a module constant of ``2 * 65,536 + 2`` bytes (the gather reads 4 bytes at
``2 * index`` and keeps the low half: the last entry needs two bytes after it), shared by every
kernel of the module that looks the same function up.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial

import torch
import torch.nn.functional as F
from llvmlite import ir
from xdsl.dialects.builtin import BFloat16Type, VectorType
from xdsl.ir import Operation

from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter, handles
from ziggurat.backends.cpu.codegen.types import CodegenError
from ziggurat.backends.cpu.kernels.bf16_tables import look_up, table_bytes
from ziggurat.backends.cpu.llvm_ir import bytes_constant, constant_global
from ziggurat.dialects import loop
from ziggurat.dialects.torch.eager_half_floats import every_bit_pattern, on_eager_16_bit_path

#: ``loop.unary`` kinds with a table: the parameterless transcendental float32 functions (tens of
#: vector instructions each; GELU about 45), and eager's float32 function of each (what the
#: table holds)
LOOKUP_FUNCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "gelu_erf": F.gelu,
    "gelu_tanh": partial(F.gelu, approximate="tanh"),
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "mish": F.mish,
    "selu": F.selu,
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "erf": torch.erf,
    "erfc": torch.erfc,
    "sin": torch.sin,
    "cos": torch.cos,
}

_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


@lru_cache(maxsize=None)
def eager_table(kind: str, dtype: str) -> bytes:
    """Eager's ``kind`` of every ``dtype`` (``"bf16"``/``"f16"``) bit pattern widened to float32,
    rounded back (:func:`~ziggurat.backends.cpu.kernels.bf16_tables.table_bytes`)."""
    fn = LOOKUP_FUNCTIONS.get(kind)
    if fn is None or dtype not in _DTYPES:
        raise CodegenError(f"loop.lookup: no table of '{kind}' for {dtype}")
    half = _DTYPES[dtype]
    wide = every_bit_pattern(half).float()
    strided = torch.empty(2 << 16)[::2]
    strided.copy_(wide)
    with torch.no_grad():
        vector, scalar = fn(on_eager_16_bit_path(wide, half)).flatten(), fn(strided)
    special = ~torch.isfinite(wide) | ~torch.isfinite(vector)
    return table_bytes(torch.where(special, scalar, vector).to(half))


def table_global(module: ir.Module, kind: str, dtype: str) -> ir.GlobalVariable:
    """``module``'s constant holding :func:`eager_table` (made on first use)."""
    table = bytes_constant(eager_table(kind, dtype))
    return constant_global(module, f"zig_lookup_{kind}_{dtype}", table.type, lambda: table)


@handles(loop.LookupOp)
def _lookup(em: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.LookupOp)
    ty = op.input.type  # verified: a bf16/f16 scalar, or a vector of 16 or 8 of them
    element = ty.element_type if isinstance(ty, VectorType) else ty
    dtype = "bf16" if isinstance(element, BFloat16Type) else "f16"
    em.set(op.result, look_up(em.b, table_global(em.module, op.kind.data, dtype), em.get(op.input)))
