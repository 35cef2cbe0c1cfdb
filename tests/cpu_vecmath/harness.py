"""A tiny llvmlite MCJIT harness for the vecmath tests (independent of backends/cpu/jit.py).

It builds element-wise loops ``out[i] = f(in[i])`` (and ``out[i] = f(x[i], y[i])``) whose body
is emitted by a vecmath function on ``<W x float>`` lanes, with a scalar tail loop for the
remainder, compiles them at O3 for a chosen target (host AVX-512, an AVX2-only Haswell target,
or scalar code), and runs them on torch tensors through ctypes pointers.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite.binding as llvm
import torch
from llvmlite import ir

F32 = ir.FloatType()
F64 = ir.DoubleType()
I64 = ir.IntType(64)

UnaryEmit = Callable[[ir.IRBuilder, ir.Value], ir.Value]
BinaryEmit = Callable[[ir.IRBuilder, ir.Value, ir.Value], ir.Value]

_llvm_ready = False


def _init_llvm() -> None:
    global _llvm_ready
    if not _llvm_ready:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _llvm_ready = True


@dataclass(frozen=True)
class Target:
    """Where the loops run: vector width plus the LLVM cpu/features to generate code for."""

    name: str
    width: int
    cpu: str
    features: str


def targets() -> dict[str, Target]:
    _init_llvm()
    host_cpu = llvm.get_host_cpu_name()
    host_features = llvm.get_host_cpu_features().flatten()
    return {
        "avx512": Target("avx512", 16, host_cpu, host_features),
        # Haswell: AVX2 + FMA, no AVX-512 -- the code must not rely on AVX-512 instructions
        "avx2": Target("avx2", 8, "haswell", ""),
        "scalar": Target("scalar", 1, host_cpu, host_features),
    }


def host_has_avx512() -> bool:
    _init_llvm()
    return bool(llvm.get_host_cpu_features().get("avx512f", False))


def _lane_type(elem: ir.Type, width: int) -> ir.Type:
    return elem if width == 1 else ir.VectorType(elem, width)


def _define_loop(module: ir.Module, name: str, elem: ir.Type, width: int, n_in: int,
                 emit: Callable[..., ir.Value]) -> None:
    """void name(elem* in_0 .. in_{n_in-1}, elem* out, i64 n): vector main loop + scalar tail."""
    ptr = elem.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * (n_in + 1) + [I64]), name=name)
    *ins, out, n = fn.args
    entry = fn.append_basic_block("entry")
    vhead = fn.append_basic_block("vhead")
    vbody = fn.append_basic_block("vbody") if width > 1 else None
    shead = fn.append_basic_block("shead")
    sbody = fn.append_basic_block("sbody")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(vhead)

    b.position_at_end(vhead)
    i = b.phi(I64, "i")
    i.add_incoming(ir.Constant(I64, 0), entry)
    if vbody is not None:
        b.cbranch(b.icmp_signed("<=", b.add(i, ir.Constant(I64, width)), n), vbody, shead)
        b.position_at_end(vbody)
        vty = ir.VectorType(elem, width)
        args = [b.load(b.bitcast(b.gep(p, [i]), vty.as_pointer()), align=4) for p in ins]
        y = emit(b, *args)
        b.store(y, b.bitcast(b.gep(out, [i]), vty.as_pointer()), align=4)
        i.add_incoming(b.add(i, ir.Constant(I64, width)), b.block)  # sin/cos may branch
        b.branch(vhead)
    else:
        b.branch(shead)

    b.position_at_end(shead)
    j = b.phi(I64, "j")
    j.add_incoming(i, vhead)
    b.cbranch(b.icmp_signed("<", j, n), sbody, done)
    b.position_at_end(sbody)
    args = [b.load(b.gep(p, [j])) for p in ins]
    b.store(emit(b, *args), b.gep(out, [j]))
    j.add_incoming(b.add(j, ir.Constant(I64, 1)), b.block)
    b.branch(shead)

    b.position_at_end(done)
    b.ret_void()


def _define_reduce(module: ir.Module, name: str, elem: ir.Type, width: int,
                   emit: Callable[[ir.IRBuilder, ir.Value], ir.Value]) -> None:
    """elem name(elem* in): reduce one <width x elem> vector loaded from ``in``."""
    fn = ir.Function(module, ir.FunctionType(elem, [elem.as_pointer()]), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    vty = _lane_type(elem, width)
    x = b.load(b.bitcast(fn.args[0], vty.as_pointer()), align=4)
    b.ret(emit(b, x))


@dataclass
class Kernels:
    """Compiled loops of one module, callable on torch tensors."""

    target: Target
    elem: ir.Type
    ir_text: str
    asm: str
    _engine: llvm.ExecutionEngine
    _cache: dict[str, Callable[..., object]] = field(default_factory=dict)

    @property
    def dtype(self) -> torch.dtype:
        return torch.float32 if isinstance(self.elem, ir.FloatType) else torch.float64

    def _fn(self, name: str, n_ptr: int, ret: type | None = None) -> Callable[..., object]:
        if name not in self._cache:
            addr = self._engine.get_function_address(name)
            if not addr:
                raise KeyError(f"no compiled function {name!r}")
            ctype = ctypes.c_float if self.dtype == torch.float32 else ctypes.c_double
            argtypes = [ctypes.c_void_p] * n_ptr + ([ctypes.c_int64] if ret is None else [])
            proto = ctypes.CFUNCTYPE(None if ret is None else ctype, *argtypes)
            self._cache[name] = proto(addr)
        return self._cache[name]

    def _check(self, *ts: torch.Tensor) -> None:
        for t in ts:
            if t.dtype != self.dtype or not t.is_contiguous() or t.device.type != "cpu":
                raise ValueError(f"expected contiguous cpu {self.dtype} tensors, got {t.dtype}")

    def unary(self, name: str, x: torch.Tensor) -> torch.Tensor:
        self._check(x)
        out = torch.empty_like(x)
        self._fn(name, 2)(x.data_ptr(), out.data_ptr(), x.numel())
        return out

    def unary_tail(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Run only the scalar (W=1) tail loop: calls on chunks shorter than the vector width."""
        self._check(x)
        out = torch.empty_like(x)
        fn = self._fn(name, 2)
        step = max(1, self.target.width - 1)
        item = x.element_size()
        xp, op = x.data_ptr(), out.data_ptr()
        for i in range(0, x.numel(), step):
            fn(xp + i * item, op + i * item, min(step, x.numel() - i))
        return out

    def binary(self, name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self._check(x, y)
        if x.shape != y.shape:
            raise ValueError("binary: shapes differ")
        out = torch.empty_like(x)
        self._fn(name, 3)(x.data_ptr(), y.data_ptr(), out.data_ptr(), x.numel())
        return out

    def reduce(self, name: str, x: torch.Tensor) -> float:
        self._check(x)
        if x.numel() != self.target.width:
            raise ValueError(f"reduce: expected {self.target.width} elements")
        return float(self._fn(name, 1, ret=float)(x.data_ptr()))  # type: ignore[arg-type]


def build_module(target: Target, unary: Mapping[str, UnaryEmit] = {},
                 binary: Mapping[str, BinaryEmit] = {}, reduce: Mapping[str, UnaryEmit] = {},
                 elem: ir.Type = F32) -> ir.Module:
    module = ir.Module(name=f"vecmath_{target.name}")
    for name, emit in unary.items():
        _define_loop(module, name, elem, target.width, 1, emit)
    for name, emit2 in binary.items():
        _define_loop(module, name, elem, target.width, 2, emit2)
    for name, emit in reduce.items():
        _define_reduce(module, name, elem, target.width, emit)
    return module


def cache_dir() -> Path | None:
    """Where compiled objects and OpInfo samples are kept between runs (None: caching off).

    ``<repo>/.cache/cpu_vecmath`` (git-ignored); ``ZIGGURAT_VECMATH_CACHE=0`` disables it.
    Entries are keyed by a hash of everything that determines their content.
    """
    if os.environ.get("ZIGGURAT_VECMATH_CACHE", "1") == "0":
        return None
    d = Path(__file__).resolve().parents[2] / ".cache" / "cpu_vecmath"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def compile_module(module: ir.Module, target: Target, elem: ir.Type = F32) -> Kernels:
    """Verify, optimise at O3 for ``target`` and JIT-compile with MCJIT.

    The object code (and its assembly listing) is cached on disk by a hash of the IR text,
    the target and the LLVM version, so repeated test runs skip the optimiser and codegen.
    """
    _init_llvm()
    text = str(module)
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        cpu=target.cpu, features=target.features, opt=3, jit=True)
    key = hashlib.sha256("\0".join([text, target.cpu, target.features, tm.triple,
                                     str(llvm.llvm_version_info)]).encode()).hexdigest()[:32]
    cdir = cache_dir()
    obj_path = asm_path = None
    if cdir is not None:
        obj_path, asm_path = cdir / f"{key}.o", cdir / f"{key}.s"
        if obj_path.exists() and asm_path.exists():
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj_path.read_bytes()))
            engine.finalize_object()
            return Kernels(target, elem, text, asm_path.read_text(), engine)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    asm = tm.emit_assembly(mod)
    obj = tm.emit_object(mod)
    if obj_path is not None and asm_path is not None:
        _write_atomic(asm_path, asm.encode())
        _write_atomic(obj_path, obj)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return Kernels(target, elem, text, asm, engine)
