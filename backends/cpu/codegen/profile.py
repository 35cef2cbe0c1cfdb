"""Profiling instrumentation of the native entries (``ZIGGURAT_PROFILE=1`` or ``profile=True``).

Each ``loop.kernel`` / ``loop.gemm`` call in an entry is bracketed by two reads of the
time-stamp counter (``llvm.readcyclecounter``, i.e. ``rdtsc``); the difference and a call
count are added to the op's two ``i64`` slots of the module global ``zig_profile_counters``.
One more pair of slots per native segment times the whole entry.  ``zig_profile_cycles()``
returns the counter (the runtime calibrates it against the wall clock) and
``zig_profile_counters_ptr()`` the address of the slots.  The cost is a few tens of cycles
per call; without profiling nothing is emitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ziggurat.backends.cpu.llvm_ir import I32, I64, I64P, declare

COUNTERS = "zig_profile_counters"
CYCLES_FN = "zig_profile_cycles"
COUNTERS_FN = "zig_profile_counters_ptr"


@dataclass(frozen=True)
class ProfileEntry:
    """One timed call site: ``kind`` is ``kernel``, ``gemm`` or ``entry`` (a whole segment)."""

    kind: str
    name: str
    origins: str = ""
    flops: int = 0
    shape: str = ""


class ProfileEmitter:
    """Collects :class:`ProfileEntry` sites while entries are generated, then emits the counter
    global sized for all of them (``finish``)."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.entries: list[ProfileEntry] = []
        self._rcc = declare(module, "llvm.readcyclecounter", I64, [])
        # Pointer to the slots, filled in once their number is known (an i64* global
        # initialized with the address of the array).
        self._base = ir.GlobalVariable(module, I64P, name=f"{COUNTERS}.base")
        self._base.linkage = "internal"

    def now(self, b: ir.IRBuilder) -> ir.Value:
        return b.call(self._rcc, [])

    def record(self, b: ir.IRBuilder, entry: ProfileEntry, start: ir.Value) -> None:
        """Add ``now - start`` and one call to ``entry``'s slots."""
        index = len(self.entries)
        self.entries.append(entry)
        end = self.now(b)
        base = b.load(self._base)
        for slot, delta in ((2 * index, b.sub(end, start)), (2 * index + 1, I64(1))):
            ptr = b.gep(base, [I64(slot)])
            b.store(b.add(b.load(ptr), delta), ptr)

    def finish(self) -> None:
        n = max(1, 2 * len(self.entries))
        arr_ty = ir.ArrayType(I64, n)
        counters = ir.GlobalVariable(self.module, arr_ty, name=COUNTERS)
        counters.initializer = ir.Constant(arr_ty, [0] * n)  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's GlobalVariable.__init__ sets it to None
        counters.align = 64  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's GlobalVariable.__init__ sets it to None
        self._base.initializer = counters.gep([I32(0), I32(0)])  # pyright: ignore[reportAttributeAccessIssue]  # llvmlite's GlobalVariable.__init__ sets it to None
        self._base.global_constant = True
        fn = ir.Function(self.module, ir.FunctionType(I64, []), name=CYCLES_FN)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(b.call(self._rcc, []))
        fn = ir.Function(self.module, ir.FunctionType(I64P, []), name=COUNTERS_FN)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(counters.gep([I32(0), I32(0)]))
