"""Running a compiled graph: one native call per segment, torch ops in between.

Before entering native code every input is checked against what was compiled (shape,
dtype, device, contiguity; a run-time dim against the range its ``loop.dim`` declares, for
which the arena was planned); outputs are fresh tensors, shaped from the call's sizes where
they have run-time dims; weights, the arena and the GEMM
workspace are allocated once per compiled module.  After each native call the status
word is checked: a kernel that met an out-of-range index (embedding ids, gather
indices) reports its site, raised here as an :class:`InputError` naming the op.

Threads: a module compiled without ``threads=`` sets the native code's thread limit to
``torch.get_num_threads()`` before every call (as eager and Inductor follow it), so a
process that called ``torch.set_num_threads(1)`` runs its parallel loops on one thread;
the code is planned for every core, which caps the count.  An explicit ``threads=N`` fixes
the count at compile time.
"""

from __future__ import annotations

import ctypes
import json
import struct
import threading
from collections.abc import MutableMapping, Sequence
from typing import Any

import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.cpu.codegen.module import ForwardAbi
from ziggurat.backends.cpu.jit import JitLibrary
from ziggurat.backends.cpu.threads import TEAM_PTR_FN, THREADS_PTR_FN
from ziggurat.backends.fallback_errors import torch_op_error
from ziggurat.backends.input_check import InputSignature
from ziggurat.dialects import loop
from ziggurat.dialects.loop.sizes import evaluate_size
from ziggurat.ir.errors import InputError
from ziggurat.ir.signature import input_names
from ziggurat.ir.types import torch_dtype

_ALIGN = 64


def _dtype(ty: MemRefType) -> torch.dtype:
    return torch_dtype(ty.element_type)  # pyright: ignore[reportUnknownArgumentType]


def _tensor_type(ty: Attribute) -> Attribute:
    """The tensor type an input buffer was compiled for (what ``input_signature`` checks against)."""
    if isinstance(ty, MemRefType):
        return TensorType(ty.element_type, ty.get_shape())  # pyright: ignore[reportUnknownArgumentType]
    return ty


def _aligned(nbytes: int) -> tuple[torch.Tensor, int]:
    raw = torch.empty(max(nbytes, 1) + _ALIGN, dtype=torch.uint8)
    ptr = raw.data_ptr()
    return raw, (ptr + _ALIGN - 1) // _ALIGN * _ALIGN - ptr


def _dim_ranges(fn: func.FuncOp, abi: ForwardAbi) -> list[tuple[int, int]]:
    """The range of each run-time size of ``abi.dims``: where several ``loop.dim`` ops read
    one input dim, the sizes all of them allow."""
    ranges: dict[tuple[int, int], tuple[int, int]] = {}
    for op in fn.body.block.ops:
        if isinstance(op, loop.DimOp):
            key = (abi.inputs.index(op.source), op.dim)
            low, high = op.bounds
            if key in ranges:
                low, high = max(low, ranges[key][0]), min(high, ranges[key][1])
            ranges[key] = (low, high)
    return [ranges[key] for key in abi.dims]


def _addresses_storage(op: Operation) -> bool:
    from ziggurat.backends.cpu.lowering.storage import STORAGE_OPS
    from ziggurat.dialects.torch.op_registry import op_key

    return op_key(op) in STORAGE_OPS


class CpuExecutable:
    """The native code of one graph plus what it needs at run time."""

    device = "cpu"

    def __init__(self, fn: func.FuncOp, abi: ForwardAbi, library: JitLibrary, ir: MutableMapping[str, str],
                 cache: Any = None, follow_torch_threads: bool = False) -> None:
        self._cache = cache
        self.fn = fn
        self.abi = abi
        self.library = library
        self.ir = ir
        self._lock = threading.Lock()
        self._input_types = [_tensor_type(a.type) for a in fn.args]
        self._names = input_names(fn)
        self.input_signature = InputSignature(self._input_types, self._names, require_contiguous=True)
        self._constants = [op.tensor().contiguous() for op in abi.constants]
        # the torch segments' buffer lookups, by value: inputs by position, constants, and the
        # arena slices (shape, dtype, byte range) of the planned buffers
        self._input_pos: dict[SSAValue, int] = {v: i for i, v in reversed(list(enumerate(abi.inputs)))}
        self._constant_of: dict[SSAValue, torch.Tensor] = {
            op.result: t for op, t in reversed(list(zip(abi.constants, self._constants, strict=True)))}
        self._slices: dict[SSAValue, tuple[tuple[int, ...], torch.dtype, int, int]] = {}
        self._arena_raw, shift = _aligned(abi.plan.arena_bytes)
        self._arena = self._arena_raw[shift: shift + abi.plan.arena_bytes]
        self._ws_raw, ws_shift = _aligned(abi.workspace_bytes)
        self._status = ctypes.c_int64(0)
        self._args = (ctypes.c_void_p * abi.num_args)()
        base = len(abi.inputs) + len(abi.outputs)
        for i, t in enumerate(self._constants):
            self._args[base + i] = t.data_ptr()
        self._args[abi.arena_index] = self._arena_raw.data_ptr() + shift
        self._args[abi.workspace_index] = self._ws_raw.data_ptr() + ws_shift
        self._args[abi.status_index] = ctypes.addressof(self._status)
        # the run-time sizes the native code reads (loop.dim), filled at every call
        self._dims = (ctypes.c_int64 * max(1, len(abi.dims)))()
        self._args[abi.dims_index] = ctypes.addressof(self._dims)
        self._dim_ranges = _dim_ranges(fn, abi)
        #: input dims that must equal a size of other dims (loop.dim ... equals %size)
        self._dim_relations = [(op, abi.inputs.index(op.source), op.expected) for op in fn.body.block.ops
                               if isinstance(op, loop.DimOp) and op.expected is not None]
        self._dim_values: dict[tuple[int, int], int] = {}
        self._entries = {s.function: library.ctypes_function(s.function, None, [ctypes.c_void_p])
                         for s in abi.segments if s.kind == "native"}
        self._statics = self._static_values()
        self._interp: Any = None
        #: ``torch.loop`` ops whose bodies run as native code (``loop_bodies.NativeLoopBody``)
        self.loop_bodies: dict[Operation, Any] = {}
        # Per-call work decided once: fresh output tensors (slot, shape, dtype), the entries.
        self._fresh: list[tuple[SSAValue, int, tuple[int, ...], torch.dtype]] = []
        for j, v in enumerate(abi.outputs):
            ty = v.type
            if isinstance(ty, MemRefType) and all(v is not f[0] for f in self._fresh):
                self._fresh.append((v, len(abi.inputs) + j, tuple(ty.get_shape()), _dtype(ty)))
        #: outputs whose shapes are computed at each call (run-time dims)
        self._sized_outputs = [k for k, f in enumerate(self._fresh) if min(f[2], default=0) < 0]
        self._native_only = all(seg.kind == "native" for seg in abi.segments)
        self._calls = [self._entries[seg.function] for seg in abi.segments if seg.kind == "native"]
        self._output_index = [next(i for i, f in enumerate(self._fresh) if f[0] is v)
                              if isinstance(v.type, MemRefType) else -1 for v in abi.outputs]
        storage = fn.attributes.get("loop.storage_inputs")
        #: inputs whose storage an op addresses (as_strided): eager reads from the start of
        #: their storage, so they must start there
        self._storage_inputs = [int(a.value.data) for a in storage.data  # pyright: ignore
                                ] if isinstance(storage, ArrayAttr) else []
        # The native code's run-time thread limit and the team its last parallel region ran
        # with (threads.py); absent when the code has no parallel region.
        self._thread_limit: ctypes.c_int32 | None = None
        self._team: ctypes.c_int32 | None = None
        if library.has_function(THREADS_PTR_FN) and library.has_function(TEAM_PTR_FN):
            ptr_fn = [library.ctypes_function(f, ctypes.c_void_p, []) for f in (THREADS_PTR_FN, TEAM_PTR_FN)]
            self._thread_limit = ctypes.c_int32.from_address(ptr_fn[0]())
            self._team = ctypes.c_int32.from_address(ptr_fn[1]())
        #: set the limit to ``torch.get_num_threads()`` at every call (compiled without ``threads=``)
        self.follow_torch_threads = follow_torch_threads
        self._profile: Any = None
        if abi.profile:
            from ziggurat.backends.cpu.profile import NativeProfile

            self._profile = NativeProfile(library, abi.profile)

    def profile(self, reset: bool = False) -> Any:
        """The per-kernel / per-GEMM time table (:class:`~ziggurat.backends.cpu.profile.ProfileTable`)
        accumulated since the build or the last ``reset``; needs a build with ``profile=True``
        (or ``ZIGGURAT_PROFILE=1``)."""
        if self._profile is None:
            raise RuntimeError("this module was compiled without profiling; pass profile=True "
                               "to ziggurat.compile or set ZIGGURAT_PROFILE=1")
        table = self._profile.table()
        if reset:
            self._profile.reset()
        return table

    @property
    def threads_used(self) -> int | None:
        """The team size (``omp_get_num_threads()``) the last parallel region of the native code
        ran with; None when the code has no parallel region or none has run yet."""
        if self._team is None or self._team.value <= 0:
            return None
        return int(self._team.value)

    def reset_profile(self) -> None:
        if self._profile is not None:
            self._profile.reset()

    def serialize(self) -> bytes:
        """The object code and the machine it was compiled for (``CompiledModule.save``)."""
        from ziggurat.backends.cpu.isa import feature_string, host_cpu_name

        obj = self._cache.load(self.library.key) if self._cache is not None else None
        if obj is None:
            from ziggurat.backends.cpu.jit import compile_object

            obj = compile_object(self.ir["llvm"], self.library.isa)
        header = json.dumps({"isa": self.library.isa.value, "cpu": host_cpu_name(),
                             "features": feature_string(self.library.isa)}).encode()
        return struct.pack("<Q", len(header)) + header + obj

    # -- values ---------------------------------------------------------------------------
    def _static_values(self) -> dict[SSAValue, Any]:
        out: dict[SSAValue, Any] = {}
        for op in self.fn.body.block.ops:
            if isinstance(op, arith.ConstantOp):
                v = op.value
                if isinstance(v, IntegerAttr):
                    w = v.type.width.data  # pyright: ignore
                    out[op.result] = bool(v.value.data) if w == 1 else int(v.value.data)  # pyright: ignore
                elif isinstance(v, FloatAttr):
                    out[op.result] = float(v.value.data)  # pyright: ignore
        return out

    def _buffer(self, v: SSAValue, inputs: Sequence[torch.Tensor], outputs: dict[SSAValue, torch.Tensor]) -> torch.Tensor:
        if v in outputs:
            return outputs[v]
        pos = self._input_pos.get(v)
        if pos is not None:
            return inputs[pos]
        constant = self._constant_of.get(v)
        if constant is not None:
            return constant
        planned = self._slices.get(v)
        if planned is not None:
            shape, dtype, start, end = planned
            return self._arena[start:end].view(dtype).view(shape)
        off = self.abi.plan.offsets.get(v)
        ty = v.type
        if isinstance(ty, MemRefType) and 0 in tuple(ty.get_shape()):
            return torch.empty(tuple(ty.get_shape()), dtype=_dtype(ty))  # no element: no storage planned
        if off is None or not isinstance(ty, MemRefType):
            raise RuntimeError(f"buffer {v.name_hint or v} has no storage")
        dynamic = min(ty.get_shape(), default=0) < 0
        shape = self._shape_now(v) if dynamic else tuple(ty.get_shape())
        dtype = _dtype(ty)
        n = 1
        for d in shape:
            n *= d
        nbytes = n * torch.empty((), dtype=dtype).element_size()
        if not dynamic:
            self._slices[v] = (shape, dtype, off, off + nbytes)
        return self._arena[off: off + nbytes].view(dtype).view(shape)

    def _shape_now(self, buffer: SSAValue) -> tuple[int, ...]:
        """The shape of a buffer with run-time dims at the current call."""
        owner = buffer.owner
        if not isinstance(owner, loop.AllocOp):
            raise RuntimeError(f"buffer {buffer.name_hint or buffer} has run-time dims but no loop.alloc")
        values = self._dim_values
        return tuple(d if isinstance(d, int) else
                     evaluate_size(d, lambda dim: values[(self._input_pos[dim.source], dim.dim)])
                     for d in owner.shape())

    def _read_sizes(self, inputs: Sequence[torch.Tensor]) -> None:
        """The call's run-time dims into the native code's size array, each checked against
        the range the code was planned for."""
        for k, (pos, dim) in enumerate(self.abi.dims):
            n = int(inputs[pos].shape[dim])
            low, high = self._dim_ranges[k]
            if not low <= n <= high:
                name = self._names[pos] if pos < len(self._names) else str(pos)
                raise InputError(f"input {pos} ('{name}') has size {n} at dim {dim}, outside the range "
                                 f"[{low}, {high}] it was compiled for", op="call")
            self._dims[k] = n
            self._dim_values[(pos, dim)] = n
        values = self._dim_values
        for op, pos, expected in self._dim_relations:
            want = evaluate_size(expected, lambda d: values[(self._input_pos[d.source], d.dim)])
            if values[(pos, op.dim)] != want:
                name = self._names[pos] if pos < len(self._names) else str(pos)
                raise InputError(f"input {pos} ('{name}') has size {values[(pos, op.dim)]} at dim {op.dim}; the "
                                 f"other inputs' sizes make it {want}", op="call")

    def _interpreter(self):  # -> xdsl Interpreter
        """The reference interpreter runs the ops that fall back (torch ops, fused ops)."""
        if self._interp is None:
            from ziggurat.ir.interpreter import make_interpreter

            module = self.fn.parent_op()
            assert module is not None
            self._interp = make_interpreter(module)  # type: ignore[arg-type]
        return self._interp

    # -- running ----------------------------------------------------------------------------
    def run(self, inputs: Sequence[Any]) -> list[Any]:
        self.input_signature.check(inputs)
        return self.run_checked(inputs)

    def run_checked(self, inputs: Sequence[Any]) -> list[Any]:
        """``run`` for inputs that already passed ``input_signature.check``."""
        for i in self._storage_inputs:
            t = inputs[i] if i < len(inputs) else None
            if isinstance(t, torch.Tensor) and t.storage_offset() != 0:
                name = self._names[i] if i < len(self._names) else str(i)
                raise InputError(f"input {i} ('{name}') starts at storage offset {t.storage_offset()}: the graph "
                                 "reads its storage (as_strided), from the start of the storage in eager; pass "
                                 "a tensor that owns its storage (x.clone())", op="call")
        with self._lock:
            return self._run(list(inputs))

    def _run(self, inputs: list[torch.Tensor]) -> list[Any]:
        args = self._args
        limit = self._thread_limit
        if limit is not None and self.follow_torch_threads:
            limit.value = torch.get_num_threads()
        if self.abi.dims:
            self._read_sizes(inputs)
        fresh = [torch.empty(shape, dtype=dtype) if not self._sized_outputs or min(shape, default=0) >= 0
                 else torch.empty(self._shape_now(v), dtype=dtype) for v, _slot, shape, dtype in self._fresh]
        for (_v, slot, _shape, _dtype), t in zip(self._fresh, fresh):
            args[slot] = t.data_ptr()
        for i, t in enumerate(inputs):
            args[i] = t.data_ptr()
        if self._native_only:
            for call in self._calls:
                call(args)
                if self._status.value:
                    self._raise_status()
            if all(i >= 0 for i in self._output_index):
                return [fresh[i] for i in self._output_index]
            return [fresh[i] if i >= 0 else self._statics.get(v) for i, v in zip(self._output_index, self.abi.outputs)]
        outputs = {f[0]: t for f, t in zip(self._fresh, fresh)}
        env: dict[SSAValue, Any] = dict(self._statics)
        for seg in self.abi.segments:
            if seg.kind == "native":
                self._entries[seg.function](args)
                if self._status.value:
                    self._raise_status()
            else:
                for op in seg.ops:
                    self._torch_op(op, env, inputs, outputs)
        results: list[Any] = []
        for v in self.abi.outputs:
            if v in outputs:
                results.append(outputs[v])
            else:
                results.append(env.get(v, self._statics.get(v)))
        return results

    def _raise_status(self) -> None:
        site = int(self._status.value)
        self._status.value = 0
        sites = self.abi.error_sites
        message = sites[site - 1] if 0 < site <= len(sites) else f"site {site}"
        raise InputError(message, op="call")

    def _torch_op(self, op: Operation, env: dict[SSAValue, Any], inputs: Sequence[torch.Tensor],
                  outputs: dict[SSAValue, torch.Tensor]) -> None:
        if isinstance(op, loop.ToTensorOp):
            env[op.result] = self._buffer(op.buffer, inputs, outputs)
            return
        if isinstance(op, loop.ToBufferOp):
            self._buffer(op.result, inputs, outputs).copy_(env[op.tensor])
            return
        values = tuple(env[v] for v in op.operands)
        if _addresses_storage(op):
            # a buffer is a slice of the arena, whose storage is the whole arena: give an op that
            # addresses storage (as_strided) a tensor that owns its storage, as in eager
            values = tuple(v.clone() if isinstance(v, torch.Tensor) else v for v in values)
        try:
            body = self.loop_bodies.get(op)
            results = body.run(values) if body is not None else self._interpreter().run_op(op, values)
        except Exception as e:  # noqa: BLE001  (torch raising on call-time values: name the op)
            raise torch_op_error(op, e) from None
        for res, value in zip(op.results, results, strict=True):
            if isinstance(res.type, TensorType) and isinstance(value, torch.Tensor):
                value = value.contiguous()
            env[res] = value
