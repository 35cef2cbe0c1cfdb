"""Python entry point of the GEMM kernels: compile a :class:`GemmSpec` on its
own (object cache + in-process memo) and call it on torch tensors, with every
shape, stride, dtype, device and aliasing problem reported as a ``ValueError``
before native code runs."""

from __future__ import annotations

import ctypes
import hashlib
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch
from llvmlite import ir

from ziggurat.backends.cpu.jit import JitLibrary, compile_ir
from ziggurat.backends.cpu.kernels.gemm import emit_gemm, gc_paused
from ziggurat.backends.cpu.kernels.gemm_plan import GemmPlan, make_plan
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpec, GemmSpecError

__all__ = ["GemmKernel", "gemm_callable", "generator_digest"]


class GemmKernel:
    """A compiled GEMM callable on torch tensors: ``kernel(a, b, c, bias=None, other=None)``.

    ``b`` is the prepacked ``[panels, K, nr]`` tensor (``[batch, panels, K, nr]``
    when batched) or, for ``b_packed=False``, the plain ``[K, N]`` / ``[N, K]``
    operand.  ``c`` is written in place and returned.  Shapes, strides, dtype
    (float32) and device (cpu) are checked; mismatches raise ``ValueError``.
    """

    def __init__(self, spec: GemmSpec, library: JitLibrary, plan: GemmPlan) -> None:
        self.spec = spec
        self.plan = plan
        self.library = library
        self.workspace_bytes = self.plan.ws_thread_floats * self.plan.threads * 4
        self._fn: Callable[..., None] = library.ctypes_function(spec.symbol, None, [ctypes.c_void_p] * 6)
        self._local = threading.local()
        # Tensor metadata (dtype, device, layout, shape, strides) of operand
        # sets that passed the checks: repeated calls skip re-validation.
        # Value: each operand's byte extent relative to its data pointer.
        self._accepted: dict[tuple[Any, ...], tuple[tuple[int, int] | None, ...]] = {}

    def _workspace(self) -> int:
        if not self.workspace_bytes:
            return 0
        ws = getattr(self._local, "ws", None)
        if ws is None:
            ws = torch.empty(self.workspace_bytes // 4 + 16, dtype=torch.float32)
            self._local.ws = ws
        return (ws.data_ptr() + 63) // 64 * 64

    def __call__(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                 bias: torch.Tensor | None = None, other: torch.Tensor | None = None) -> torch.Tensor:
        try:
            sig = (_meta(a), _meta(b), _meta(c), _meta(bias), _meta(other))
        except AttributeError:
            sig = None  # not tensors: the full checks below explain what is wrong
        extents = self._accepted.get(sig) if sig is not None else None
        if extents is None:
            self._check_operands(a, b, c, bias, other)
            extents = tuple(None if t is None else _extent(t) for t in (a, b, c, bias, other))
            if sig is not None:
                self._accepted[sig] = extents
        self._check_aliasing((a, b, c, bias, other), extents)
        self._fn(a.data_ptr(), b.data_ptr(), c.data_ptr(),
                 bias.data_ptr() if bias is not None else 0,
                 other.data_ptr() if other is not None else 0,
                 self._workspace())
        return c

    def _check_operands(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                        bias: torch.Tensor | None, other: torch.Tensor | None) -> None:
        s = self.spec
        batch = s.batch
        _check(a, "a", (batch, s.m, s.k), (s.batch_stride_a, s.lda, 1))  # type: ignore[arg-type]
        if s.b_packed:
            lay = s.b_layout
            _check(b, "b (prepacked)", (batch, *lay.packed_shape), (s.batch_stride_b, lay.k * lay.nr, lay.nr, 1))  # type: ignore[arg-type]
        elif s.b_transposed:
            _check(b, "b (as [N, K])", (batch, s.n, s.k), (s.batch_stride_b, s.ldb, 1))  # type: ignore[arg-type]
        else:
            _check(b, "b (as [K, N])", (batch, s.k, s.n), (s.batch_stride_b, s.ldb, 1))  # type: ignore[arg-type]
        _check(c, "c", (batch, s.m, s.n), (s.batch_stride_c, s.ldc, 1))  # type: ignore[arg-type]
        if s.bias:
            if bias is None:
                raise ValueError(f"gemm {s.symbol}: the spec has bias=True but no bias tensor was given")
            _check(bias, "bias", (s.n,), (1,))
        elif bias is not None:
            raise ValueError(f"gemm {s.symbol}: a bias tensor was given but the spec has bias=False")
        if s.binary:
            if other is None:
                raise ValueError(f"gemm {s.symbol}: the spec has binary={s.binary!r} but no `other` tensor was given")
            ors, ocs = s.other_strides  # type: ignore[misc]
            _check_broadcast(other, (batch, s.m, s.n), (s.other_batch_stride, ors, ocs))
        elif other is not None:
            raise ValueError(f"gemm {s.symbol}: an `other` tensor was given but the spec has no binary op")

    def _check_aliasing(self, ops: tuple[torch.Tensor | None, ...],
                        extents: tuple[tuple[int, int] | None, ...]) -> None:
        s = self.spec
        a, b, c, bias, other = ops
        spans = [None if t is None or e is None else (t.data_ptr() + e[0], t.data_ptr() + e[1])
                 for t, e in zip(ops, extents)]
        c_span = spans[2]
        assert c is not None and c_span is not None
        for span, what in ((spans[0], "a"), (spans[1], "b"), (spans[3], "bias")):
            if span is not None and _overlaps(span, c_span):
                raise ValueError(f"gemm {s.symbol}: output c overlaps input {what}; use a separate output tensor")
        if other is not None and spans[4] is not None and _overlaps(spans[4], c_span):
            exact = other.data_ptr() == c.data_ptr() and tuple(other.shape) == tuple(c.shape) \
                and tuple(other.stride()) == tuple(c.stride())
            single_k_block = self.plan.kc >= s.k
            if not exact:
                raise ValueError(f"gemm {s.symbol}: `other` partially overlaps the output c; "
                                 "pass either c itself (in-place residual) or a separate tensor")
            if not (s.epilogue.binary_is_early or single_k_block):
                raise ValueError(
                    f"gemm {s.symbol}: `other` is the output c, but the residual follows the activation "
                    f"({s.unary!r}) and K={s.k} is computed in blocks of {self.plan.kc}, so c is overwritten "
                    "before `other` is read; pass a separate residual tensor"
                )


def _meta(t: torch.Tensor | None) -> tuple[Any, ...] | None:
    if t is None:
        return None
    return (t.dtype, t.device.type, t.layout, tuple(t.shape), t.stride())


def _extent(t: torch.Tensor) -> tuple[int, int]:
    """Bytes ``[lo, hi)`` touched by ``t``, relative to ``t.data_ptr()``."""
    if t.numel() == 0:
        return (0, 0)
    lo = hi = 0
    for size, stride in zip(t.shape, t.stride()):
        if stride >= 0:
            hi += (size - 1) * stride
        else:
            lo += (size - 1) * stride
    item = t.element_size()
    return (lo * item, (hi + 1) * item)


def _overlaps(x: tuple[int, int], y: tuple[int, int]) -> bool:
    return x[0] < y[1] and y[0] < x[1]


def _check_common(t: Any, what: str) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"gemm operand {what}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise ValueError(f"gemm operand {what}: expected dtype torch.float32, got {t.dtype}")
    if t.device.type != "cpu":
        raise ValueError(f"gemm operand {what}: expected a cpu tensor, got device {t.device}")
    if t.is_sparse or t.layout != torch.strided:
        raise ValueError(f"gemm operand {what}: expected a dense strided tensor")


def _check(t: Any, what: str, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    """``t`` must have ``shape``/``strides`` (strides of size-1 dims are free);
    a leading batch dim of size 1 may be omitted."""
    _check_common(t, what)
    got_shape, got_strides = tuple(t.shape), tuple(t.stride())
    if len(got_shape) == len(shape) - 1 and len(shape) > 1 and (shape[0] == 1 or strides[0] == 0):
        shape, strides = shape[1:], strides[1:]
    if got_shape != shape:
        raise ValueError(f"gemm operand {what}: expected shape {shape}, got {got_shape}")
    for dim, (size, want, got) in enumerate(zip(shape, strides, got_strides)):
        if size > 1 and want != got:
            raise ValueError(
                f"gemm operand {what}: stride {got} in dim {dim} does not match the compiled stride {want} "
                f"(strides {got_strides}, expected {strides}; make it contiguous or recompile)"
            )


def _check_broadcast(t: Any, shape: tuple[int, int, int], strides: tuple[int, int, int]) -> None:
    _check_common(t, "other")
    try:
        view = torch.broadcast_to(t, shape) if t.dim() <= 3 else None
    except RuntimeError:
        view = None
    if view is None:
        raise ValueError(f"gemm operand other: shape {tuple(t.shape)} does not broadcast to {shape}")
    for dim, (size, want, got) in enumerate(zip(shape, strides, view.stride())):
        if size > 1 and want != got:
            raise ValueError(
                f"gemm operand other: broadcast stride {got} in dim {dim} does not match the compiled "
                f"stride {want} (strides {tuple(view.stride())}, expected {strides})"
            )


def generator_files() -> list[Path]:
    """The sources that shape the emitted GEMM IR: this kernels package, the ISA, threading
    and llvmlite helpers, the bf16 conversions, and the vector math used by activation
    epilogues.  (Not the whole backend: unrelated edits elsewhere must not invalidate cached
    kernels.)"""
    cpu = Path(__file__).resolve().parent.parent  # backends/cpu
    return sorted([
        *cpu.joinpath("kernels").rglob("*.py"), cpu / "isa.py", cpu / "threads.py", cpu / "llvm_ir.py",
        cpu / "codegen" / "bf16.py", *cpu.joinpath("vecmath").rglob("*.py"),
    ])


@lru_cache(maxsize=1)
def generator_digest() -> str:
    """sha256 over :func:`generator_files` (once a process: every kernel's cache key reads it)."""
    cpu = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in generator_files():
        if path.is_file():
            h.update(str(path.relative_to(cpu)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _build_ir(spec: GemmSpec, plan: GemmPlan) -> str:
    module = ir.Module(name=spec.symbol)
    emit_gemm(module, spec, plan)
    with gc_paused():
        return str(module)


@lru_cache(maxsize=256)
def _compile(spec: GemmSpec, plan: GemmPlan) -> GemmKernel:
    # Spec + plan + generator source determine the IR, so they key the cache.
    key = f"gemm-spec/{spec!r}/{plan!r}/generator={generator_digest()}"
    lib = compile_ir(lambda: _build_ir(spec, plan), spec.isa, key_source=key)  # type: ignore[arg-type]
    return GemmKernel(spec, lib, plan)


def gemm_callable(spec: GemmSpec, plan: GemmPlan | None = None) -> GemmKernel:
    """Compile ``spec`` (object cache + in-process memo) and wrap it for torch.

    ``plan`` overrides :func:`make_plan` (benchmarks and tests of plan variants)."""
    if not isinstance(spec, GemmSpec):
        raise GemmSpecError(f"gemm_callable expects a GemmSpec, got {type(spec).__name__}")
    return _compile(spec, make_plan(spec) if plan is None else plan)
