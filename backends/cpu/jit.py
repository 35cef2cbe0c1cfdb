"""Compile LLVM IR to native code in this process (MCJIT).

Pipeline: parse (text or ``llvmlite.ir.Module``) -> verify -> check that every
external symbol resolves in the process -> the new-pass-manager ``O<opt>``
pipeline for the target machine of the chosen :class:`Isa` -> object code
(``TargetMachine.emit_object``) -> loaded into an MCJIT engine with
``add_object_file``.  The object bytes go through :class:`ObjectCache`, so a
cache hit skips optimisation and code generation; hits and misses load
identically.

Every LLVM failure becomes a :class:`JitError` naming the stage and carrying
LLVM's message; unresolved symbols are detected *before* MCJIT sees them
(MCJIT would abort the process).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

import llvmlite.binding as llvm
import llvmlite.ir as lir

from ziggurat.backends.cpu.elf_object import STB_WEAK, ElfObject, ObjectCodeError, parse_object
from ziggurat.backends.cpu.isa import (
    Isa,
    ensure_llvm_initialized,
    feature_string,
    host_cpu_name,
    parse_isa,
    target_machine,
)
from ziggurat.backends.cpu.object_cache import ObjectCache, cache_key
from ziggurat.backends.cpu.threads import load_openmp

# Bumped whenever the optimisation pipeline below changes meaningfully.
PIPELINE_VERSION = "newpm-o3-v1"

_UNSET: Any = object()
# llvmlite parses into LLVM's global context and its calls release the GIL, so
# all LLVM work of this module is serialised.
_llvm_lock = threading.RLock()
_default_cache: ObjectCache | None = None
_default_cache_lock = threading.Lock()


class JitError(RuntimeError):
    """LLVM IR could not be parsed, verified, linked or compiled."""


def default_object_cache() -> ObjectCache:
    global _default_cache
    with _default_cache_lock:
        if _default_cache is None:
            _default_cache = ObjectCache()
        return _default_cache


def ir_text(ir: str | lir.Module) -> str:
    if isinstance(ir, lir.Module):
        return str(ir)
    if isinstance(ir, str):
        return ir
    raise JitError(f"expected LLVM IR text or llvmlite.ir.Module, got {type(ir).__name__}")


def parse_and_verify(ir: str | lir.Module, isa: Isa) -> llvm.ModuleRef:
    """Parse and verify ``ir``; set the triple and data layout for ``isa``."""
    ensure_llvm_initialized()
    text = ir_text(ir)
    try:
        mod = llvm.parse_assembly(text)
    except RuntimeError as exc:
        raise JitError(f"LLVM IR does not parse:\n{str(exc).strip()}") from None
    try:
        mod.verify()
    except RuntimeError as exc:
        raise JitError(f"LLVM IR fails verification:\n{str(exc).strip()}") from None
    tm = target_machine(isa)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    return mod


def optimize(mod: llvm.ModuleRef, isa: Isa, opt: int = 3) -> None:
    """Run the default new-pass-manager pipeline at ``O<opt>`` in place."""
    tm = target_machine(isa, opt)
    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    pto.loop_vectorization = opt >= 2
    pto.slp_vectorization = opt >= 2
    pto.loop_unrolling = opt >= 1
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)


def compile_object(ir: str | lir.Module, isa: Isa | str = "auto", opt: int = 3) -> bytes:
    """Optimised relocatable object code (ELF) for ``ir``."""
    isa = parse_isa(isa)
    with _llvm_lock:
        mod = parse_and_verify(ir, isa)
        _check_declarations_resolve(mod)
        optimize(mod, isa, opt)
        try:
            return target_machine(isa, opt).emit_object(mod)
        except RuntimeError as exc:
            raise JitError(f"LLVM code generation failed: {exc}") from None


def emit_assembly(ir: str | lir.Module, isa: Isa | str = "auto", opt: int = 3) -> str:
    """Optimised native assembly for ``ir`` (for inspection and tests)."""
    isa = parse_isa(isa)
    with _llvm_lock:
        mod = parse_and_verify(ir, isa)
        optimize(mod, isa, opt)
        try:
            return target_machine(isa, opt).emit_assembly(mod)
        except RuntimeError as exc:
            raise JitError(f"LLVM code generation failed: {exc}") from None


def optimized_ir(ir: str | lir.Module, isa: Isa | str = "auto", opt: int = 3) -> str:
    """The module after the optimisation pipeline, as LLVM IR text."""
    isa = parse_isa(isa)
    with _llvm_lock:
        mod = parse_and_verify(ir, isa)
        optimize(mod, isa, opt)
        return str(mod)


class JitLibrary:
    """Native code loaded into this process; keeps its engine alive.

    Function pointers handed out by :meth:`address` and :meth:`ctypes_function`
    are valid while this object (or a ctypes function obtained from it) lives.
    """

    def __init__(self, engine: llvm.ExecutionEngine, isa: Isa, key: str, from_cache: bool) -> None:
        self._engine = engine
        self.isa = isa
        self.key = key
        self.from_cache = from_cache

    def address(self, name: str) -> int:
        addr = self._engine.get_function_address(name)
        if not addr:
            raise JitError(f"JIT library has no function named {name!r}")
        return int(addr)

    def ctypes_function(self, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
        """A ctypes callable for ``name``; it holds a reference to this library."""
        fn = ctypes.CFUNCTYPE(restype, *argtypes)(self.address(name))
        fn._ziggurat_library = self  # type: ignore[attr-defined]  # keep the code mapped
        return fn

    def has_function(self, name: str) -> bool:
        return bool(self._engine.get_function_address(name))


def compile_ir(
    ir: str | lir.Module | Callable[[], str | lir.Module],
    isa: Isa | str = "auto",
    opt: int = 3,
    cache: ObjectCache | None = _UNSET,
    key_source: str | None = None,
) -> JitLibrary:
    """Compile ``ir`` for ``isa`` at ``O<opt>`` and load it.

    ``cache``: an :class:`ObjectCache`; by default the process-wide one
    (``$ZIGGURAT_CACHE_DIR`` or ``~/.cache/ziggurat``); ``None`` disables
    caching.  The cache key hashes the IR text, unless ``key_source`` is given:
    a string that determines the IR completely (e.g. a kernel spec plus a
    digest of the generator's source), in which case ``ir`` may be a callable
    that builds the IR only on a cache miss.
    """
    isa = parse_isa(isa)
    text: str | None = None
    if key_source is None:
        text = ir_text(ir() if callable(ir) else ir)
        key_source = text
    if cache is _UNSET:
        cache = default_object_cache()
    key = cache_key(key_source, f"isa={isa.value}", f"cpu={host_cpu_name()}",
                    f"features={feature_string(isa)}", f"opt={opt}", f"pipeline={PIPELINE_VERSION}")
    obj = cache.load(key) if cache is not None else None
    from_cache = obj is not None
    if obj is None:
        if text is None:
            text = ir_text(ir() if callable(ir) else ir)
        obj = compile_object(text, isa, opt)
        if cache is not None:
            cache.store(key, obj)
    engine = load_object(obj, isa)
    return JitLibrary(engine, isa, key, from_cache)


def load_object(obj: bytes, isa: Isa, entry_symbols: Sequence[str] = ()) -> llvm.ExecutionEngine:
    """Load object code into a new MCJIT engine.  The object is checked first
    (:func:`~ziggurat.backends.cpu.elf_object.parse_object`: LLVM's loader would crash on a
    malformed one), must define ``entry_symbols`` and may only need symbols this process has."""
    try:
        parsed = parse_object(obj)
        parsed.require_functions(entry_symbols)
    except ObjectCodeError as exc:
        raise JitError(f"malformed object code: {exc}") from None
    ensure_llvm_initialized()
    _require_amx_permission(parsed)
    needed = _needed_symbols(parsed)
    if any(s.startswith(("GOMP_", "omp_")) for s in needed):
        load_openmp()  # code generation loads it; saved code may reach a fresh process
    missing = [s for s in needed if not _resolvable(s)]
    if missing:
        raise JitError(
            "compiled code references symbols that are not loaded in this process: "
            + ", ".join(sorted(missing))
        )
    with _llvm_lock:
        tm = target_machine(isa)
        holder = llvm.parse_assembly("")
        holder.triple = tm.triple
        holder.data_layout = str(tm.target_data)
        try:
            engine = llvm.create_mcjit_compiler(holder, tm)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
        except RuntimeError as exc:
            raise JitError(f"MCJIT could not load the object code: {exc}") from None
    return engine


def _require_amx_permission(parsed: ElfObject) -> None:
    """Object code with AMX kernels (their symbols end in ``__amx``) runs only after the OS
    gave this process the tile state; without it the first tile instruction is SIGILL."""
    from ziggurat.backends.cpu.kernels.amx import request_tile_permission
    from ziggurat.backends.cpu.kernels.amx import AMX_SYMBOL_SUFFIX

    amx_kernels = sorted(n for n in parsed.defined_functions() if n.endswith(AMX_SYMBOL_SUFFIX))
    if not amx_kernels:
        return
    granted, why = request_tile_permission()
    if not granted:
        raise JitError(f"the compiled code uses AMX tiles ({amx_kernels[0]}), which this process may not "
                       f"use: {why}; recompile the model in this process (it then chooses another kernel)")


def _resolvable(name: str) -> bool:
    return name.startswith("_GLOBAL_OFFSET_TABLE_") or bool(llvm.address_of_symbol(name))


def _check_declarations_resolve(mod: llvm.ModuleRef) -> None:
    missing: list[str] = []
    for fn in mod.functions:
        if fn.is_declaration and not fn.name.startswith("llvm.") and not _resolvable(fn.name):
            missing.append(fn.name)
    for gv in mod.global_variables:
        if gv.is_declaration and not _resolvable(gv.name):
            missing.append(gv.name)
    if missing:
        raise JitError(
            "LLVM IR declares external symbols that are not loaded in this process: "
            + ", ".join(sorted(missing))
            + " (load the defining library first, e.g. ziggurat.backends.cpu.threads.load_openmp())"
        )


def undefined_symbols(obj: bytes) -> list[str]:
    """Names of the global symbols an ELF object needs from elsewhere."""
    ensure_llvm_initialized()
    try:
        return _needed_symbols(parse_object(obj))
    except ObjectCodeError as exc:
        raise JitError(f"malformed object code: {exc}") from None


def _needed_symbols(obj: ElfObject) -> list[str]:
    out: list[str] = []
    for sym in obj.undefined_globals():
        if sym.binding == STB_WEAK and not _resolvable(sym.name):
            continue  # an unresolved weak reference is allowed to stay null
        out.append(sym.name)
    return out
