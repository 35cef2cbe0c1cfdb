"""Parallel runtime for generated code: the GNU OpenMP runtime (libgomp).

Generated code forks a team the way GCC's (and Inductor's) OpenMP output
does: ``GOMP_parallel(fn, data, num_threads, flags)`` runs ``fn(data)`` on
every thread of the team, and each thread picks its share of the work with
``omp_get_thread_num()`` / ``omp_get_num_threads()``.

Only one OpenMP runtime should live in a process.  :func:`load_openmp` reuses
the libgomp already mapped into the process (torch loads its own
``torch/lib/libgomp.so.1``), else torch's copy, else the system one, and makes
its symbols visible to the JIT with ``load_library_permanently``.  Sharing
torch's runtime means a kernel's team reuses the same thread pool as
``torch.matmul``; calls from inside another OpenMP region get a team of one
(nested parallelism is off by default) and stay correct.

The team size is decided at run time.  Code generation fixes, per parallel
loop, the most threads the loop's split was planned for (``num_threads``); each
module holds an ``i32`` thread limit (:data:`THREADS_PTR_FN` returns its
address), which the runtime sets before a call (``torch.get_num_threads()``
when the compile left ``threads`` unset): the team is the smaller of the two,
and a limit of 0 leaves the planned count.  Thread 0 of each region records
the team it ran with (``omp_get_num_threads()``; :data:`TEAM_PTR_FN`), so the
count actually used can be read back.  Every split is balanced over the team
the region really got, so any team size gives the same result.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import llvmlite.binding as llvm
from llvmlite import ir

from ziggurat.backends.cpu.isa import ensure_llvm_initialized

#: Loop nests touching fewer elements than this run on one thread (fork/join costs more).
PARALLEL_MIN_ELEMENTS = 1 << 15
from ziggurat.backends.cpu.llvm_ir import I8P, I32, I64, VOID, value_type

BodyBuilder = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value, list[ir.Value]], None]
"""``body(builder, begin, end, thread_id, captures)`` emits the work for task
indices ``[begin, end)`` (i64 values) on thread ``thread_id`` (i64); the
``captures`` are the values handed to :func:`emit_parallel_for`, reloaded
inside the outlined function."""

_SYSTEM_GOMP = ("/usr/lib/x86_64-linux-gnu/libgomp.so.1", "/usr/lib64/libgomp.so.1", "/usr/lib/libgomp.so.1")

#: ``i32* zig_threads_ptr()``: the module's run-time thread limit (0: the planned counts).
THREADS_PTR_FN = "zig_threads_ptr"
#: ``i32* zig_team_ptr()``: the team size of the module's last parallel region.
TEAM_PTR_FN = "zig_team_ptr"
_THREADS_GLOBAL = "zig.threads"
_TEAM_GLOBAL = "zig.team"

_lock = threading.Lock()
_loaded_path: str | None = None


class OpenMPError(RuntimeError):
    """No usable OpenMP runtime could be loaded."""


def default_threads() -> int:
    """Cores this process may run on (``os.sched_getaffinity``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _mapped_libgomp() -> str | None:
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:  # pragma: no cover - non-Linux
        return None
    for line in maps.splitlines():
        path = line.split()[-1] if line.split() else ""
        if "/libgomp" in path and ".so" in path and os.path.exists(path):
            return path
    return None


def _torch_libgomp() -> str | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        cand = Path(base) / "lib" / "libgomp.so.1"
        if cand.exists():
            return str(cand)
    return None


def openmp_library_path() -> str:
    """The libgomp to use: already mapped > torch's > the system's."""
    for cand in (_mapped_libgomp(), _torch_libgomp()):
        if cand:
            return cand
    for cand in _SYSTEM_GOMP:
        if os.path.exists(cand):
            return cand
    found = ctypes.util.find_library("gomp")
    if found:
        return found
    raise OpenMPError("no libgomp found (looked for torch/lib/libgomp.so.1 and the system libgomp.so.1)")


def load_openmp() -> str:
    """Make ``GOMP_parallel`` and ``omp_*`` resolvable by JIT code; idempotent.

    Returns the path of the library in use.
    """
    global _loaded_path
    if _loaded_path is not None:
        return _loaded_path
    with _lock:
        if _loaded_path is None:
            ensure_llvm_initialized()
            path = openmp_library_path()
            try:
                llvm.load_library_permanently(path)
            except RuntimeError as exc:
                raise OpenMPError(f"cannot load OpenMP runtime {path}: {exc}") from None
            for sym in ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads"):
                if not llvm.address_of_symbol(sym):
                    raise OpenMPError(f"OpenMP runtime {path} does not export {sym}")
            _loaded_path = path
    return _loaded_path


def _declare(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    existing = module.globals.get(name)
    if existing is not None:
        if not isinstance(existing, ir.Function) or existing.function_type != fnty:
            raise TypeError(f"module already defines {name!r} with a different type")
        return existing
    return ir.Function(module, fnty, name=name)


def declare_openmp(module: ir.Module) -> tuple[ir.Function, ir.Function, ir.Function]:
    """Declare ``GOMP_parallel``, ``omp_get_thread_num``, ``omp_get_num_threads``."""
    outlined_ty = ir.FunctionType(VOID, [I8P]).as_pointer()
    gomp = _declare(module, "GOMP_parallel", ir.FunctionType(VOID, [outlined_ty, I8P, I32, I32]))
    tnum = _declare(module, "omp_get_thread_num", ir.FunctionType(I32, []))
    tcount = _declare(module, "omp_get_num_threads", ir.FunctionType(I32, []))
    return gomp, tnum, tcount


def entry_alloca(builder: ir.IRBuilder, ty: ir.Type, name: str = "") -> ir.Value:
    """``alloca`` in the function's entry block (so loops do not grow the
    stack), without disturbing ``builder``'s insertion point."""
    entry = builder.function.entry_basic_block
    if builder.block is entry or not entry.is_terminated:
        if builder.block is not entry:
            raise ValueError("entry_alloca: the entry block is open but the builder is elsewhere")
        return builder.alloca(ty, name=name)
    b = ir.IRBuilder(entry)
    b.position_before(entry.terminator)
    return b.alloca(ty, name=name)


def _module_i32(module: ir.Module, name: str, accessor: str) -> ir.GlobalVariable:
    """The module's ``i32`` global ``name`` (0 at load) and ``i32* accessor()`` returning its
    address; created on first use.  The address escapes through the accessor, so the
    optimizer cannot fold the global's loads to its initializer."""
    existing = module.globals.get(name)
    if isinstance(existing, ir.GlobalVariable):
        return existing
    gv = ir.GlobalVariable(module, I32, name=name)
    gv.linkage = "internal"
    gv.initializer = ir.Constant(I32, 0)  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's __init__ sets None
    gv.align = 4  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's __init__ sets None
    fn = ir.Function(module, ir.FunctionType(I32.as_pointer(), []), name=accessor)
    ir.IRBuilder(fn.append_basic_block("entry")).ret(gv)
    return gv


def thread_limit_global(module: ir.Module) -> ir.GlobalVariable:
    """The run-time thread limit every parallel region of ``module`` reads (see the module doc)."""
    return _module_i32(module, _THREADS_GLOBAL, THREADS_PTR_FN)


def _unique_name(module: ir.Module, base: str) -> str:
    """``base``, or ``base.<i>``, whose outlined functions (``<name>.body``, ``<name>.omp``) are
    not in ``module`` yet: a kernel with two parallel nests (a cat's parts) names both from
    itself, and llvmlite refuses a second ``.body`` of the same name."""
    name, i = base, 0
    while f"{name}.body" in module.globals or f"{name}.omp" in module.globals:
        i += 1
        name = f"{base}.{i}"
    return name


def emit_parallel_for(
    module: ir.Module,
    builder: ir.IRBuilder,
    n_tasks: int | ir.Value,
    body: BodyBuilder,
    num_threads: int,
    captures: Sequence[ir.Value] = (),
    name: str = "zig.parallel",
    serial_when: ir.Value | None = None,
) -> ir.Function:
    """Run tasks ``0 .. n_tasks-1`` on up to ``num_threads`` threads.

    The body is outlined into ``<name>.body(ctx*, i64 begin, i64 end, i64 tid)``
    which ``body`` fills in.  With ``num_threads == 1`` (or a single static
    task) it is called directly and no OpenMP symbol is referenced; otherwise
    the team is ``min(num_threads, limit)`` for the module's run-time thread
    limit (:func:`thread_limit_global`; 0 = no limit): a team of one calls the
    body directly, a larger one runs ``<name>.omp(i8* ctx)`` through
    ``GOMP_parallel`` on every team member, which takes a balanced contiguous
    share of the tasks (``serial_when``, an ``i1``: a team of one when it is
    true, for work too small to share).  The body must not assume more than ``tid <
    num_threads``.  Values used inside the body must come through
    ``captures`` (packed into a stack context struct).  Returns the outlined
    body function.
    """
    if num_threads < 1:
        raise ValueError(f"num_threads must be >= 1, got {num_threads}")
    if isinstance(n_tasks, int):
        if n_tasks < 0:
            raise ValueError(f"n_tasks must be >= 0, got {n_tasks}")
        num_threads = max(1, min(num_threads, n_tasks))
        n_val: ir.Value = ir.Constant(I64, n_tasks)
    else:
        if value_type(n_tasks) != I64:
            raise TypeError(f"n_tasks must be an i64 value, got {value_type(n_tasks)}")
        n_val = n_tasks
    name = _unique_name(module, name)

    cap_types = [value_type(v) for v in captures]
    ctx_ty = ir.LiteralStructType(cap_types + [I64])
    ctx_ptr_ty = ctx_ty.as_pointer()

    body_fn = ir.Function(module, ir.FunctionType(VOID, [ctx_ptr_ty, I64, I64, I64]), name=f"{name}.body")
    body_fn.linkage = "internal"
    ctx_arg, begin, end, tid = body_fn.args
    bb = ir.IRBuilder(body_fn.append_basic_block("entry"))
    loaded: list[ir.Value] = [bb.load(bb.gep(ctx_arg, [I32(0), I32(i)]), name=f"cap{i}") for i in range(len(captures))]
    body(bb, begin, end, tid, loaded)
    assert bb.block is not None  # the body leaves the builder in a block
    if not bb.block.is_terminated:
        bb.ret_void()

    ctx = entry_alloca(builder, ctx_ty, f"{name}.ctx")
    for i, v in enumerate(captures):
        builder.store(v, builder.gep(ctx, [I32(0), I32(i)]))
    builder.store(n_val, builder.gep(ctx, [I32(0), I32(len(captures))]))

    if num_threads == 1:
        builder.call(body_fn, [ctx, I64(0), n_val, I64(0)])
        return body_fn

    team_gv = _module_i32(module, _TEAM_GLOBAL, TEAM_PTR_FN)
    limit = builder.load(thread_limit_global(module), name=f"{name}.limit")
    planned = I32(num_threads)
    limited = builder.and_(builder.icmp_signed(">", limit, I32(0)), builder.icmp_signed("<", limit, planned))
    team = builder.select(limited, limit, planned, name=f"{name}.team")
    if serial_when is not None:
        team = builder.select(serial_when, I32(1), team, name=f"{name}.team_or_one")
    gomp, tnum, tcount = declare_openmp(module)
    omp_fn = ir.Function(module, ir.FunctionType(VOID, [I8P]), name=f"{name}.omp")
    omp_fn.linkage = "internal"
    ob = ir.IRBuilder(omp_fn.append_basic_block("entry"))
    octx = ob.bitcast(omp_fn.args[0], ctx_ptr_ty)
    n = ob.load(ob.gep(octx, [I32(0), I32(len(captures))]), name="n")
    t32 = ob.call(tnum, [])
    nt32 = ob.call(tcount, [])
    with ob.if_then(ob.icmp_signed("==", t32, I32(0))):
        ob.store(nt32, team_gv)  # the team this region really got
    t = ob.sext(t32, I64, name="tid")
    nt = ob.sext(nt32, I64, name="nthreads")
    # Balanced split: thread t gets [t*n/nt, (t+1)*n/nt).
    lo = ob.udiv(ob.mul(t, n), nt, name="begin")
    hi = ob.udiv(ob.mul(ob.add(t, I64(1)), n), nt, name="end")
    nonempty = ob.icmp_unsigned("<", lo, hi)
    with ob.if_then(nonempty):
        ob.call(body_fn, [octx, lo, hi, t])
    ob.ret_void()

    load_openmp()
    with builder.if_else(builder.icmp_signed("==", team, I32(1))) as (serial, parallel):
        with serial:
            builder.store(I32(1), team_gv)
            builder.call(body_fn, [ctx, I64(0), n_val, I64(0)])
        with parallel:
            builder.call(gomp, [omp_fn, builder.bitcast(ctx, I8P), team, I32(0)])
    return body_fn
