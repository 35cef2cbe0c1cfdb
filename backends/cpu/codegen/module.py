"""A loop-level ``@forward`` as one LLVM module with one native entry per segment.

The entry ``zig_forward_<k>(i8** args)`` of native segment ``k`` runs its kernels and
GEMMs in order.  ``args`` (built by ``runtime.py``) holds, in this order: the graph
inputs, the graph outputs, the weights (one per ``loop.constant``), the arena, the GEMM
workspace, the status word (an ``i64`` that kernels set to a check's site number) and the
run-time sizes (an ``i64`` array: the input dims the ``loop.dim`` ops read, in
``ForwardAbi.dims`` order).
Without torch fallbacks there is exactly one segment: one native call per inference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from llvmlite import ir
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue

from ziggurat.backends.cpu.codegen.emitter import FunctionEmitter, load_handlers
from ziggurat.backends.cpu.codegen.profile import ProfileEmitter, ProfileEntry
from ziggurat.backends.cpu.codegen.types import CodegenError, llvm_type
from ziggurat.backends.cpu.isa import Isa, isa_has
from ziggurat.backends.cpu.kernels.gemm import emit_gemm, gemm_workspace_bytes
from ziggurat.backends.cpu.kernels.gemm_bf16 import emit_bf16_gemm
from ziggurat.backends.cpu.kernels.gemm_bf16_spec import Bf16GemmSpec
from ziggurat.backends.cpu.kernels.gemm_int8 import Int8GemmSpec, emit_int8_gemm
from ziggurat.backends.cpu.kernels.gemm_spec import GemmSpec
from ziggurat.backends.cpu import llvm_ir
from ziggurat.backends.cpu.llvm_ir import F32P, I8, I8P, I64, I64P, VOID, instr
from ziggurat.backends.cpu.memory_plan import MemoryPlan
from ziggurat.dialects import loop
from ziggurat.dialects.loop.sizes import SizeError, fold_size

_GRAPH_OPS = (loop.AllocOp, loop.ConstantOp, arith.ConstantOp, loop.DimOp, loop.OffsetOp, arith.MuliOp)


@dataclass
class Segment:
    """``native``: call ``function``; ``torch``: run ``ops`` through torch."""

    kind: str
    function: str = ""
    ops: list[Operation] = field(default_factory=list[Operation])


@dataclass
class ForwardAbi:
    inputs: list[SSAValue]
    outputs: list[SSAValue]
    constants: list[loop.ConstantOp]
    plan: MemoryPlan
    workspace_bytes: int
    segments: list[Segment]
    error_sites: list[str]
    #: the timed call sites when the module was built with profiling (else empty)
    profile: list[ProfileEntry] = field(default_factory=list[ProfileEntry])
    #: the run-time sizes the native code reads: (input position, dim), by slot
    dims: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])

    @property
    def arena_index(self) -> int:
        return len(self.inputs) + len(self.outputs) + len(self.constants)

    @property
    def workspace_index(self) -> int:
        return self.arena_index + 1

    @property
    def status_index(self) -> int:
        return self.arena_index + 2

    @property
    def dims_index(self) -> int:
        return self.arena_index + 3

    @property
    def num_args(self) -> int:
        return self.arena_index + 4


def _spec_value(attr: Attribute) -> Any:
    if isinstance(attr, IntegerAttr):
        if attr.type.width.data == 1:  # pyright: ignore
            return bool(attr.value.data)
        return int(attr.value.data)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DictionaryAttr):
        return {k: _spec_value(v) for k, v in attr.data.items()}
    if isinstance(attr, ArrayAttr):
        return tuple(_spec_value(v) for v in attr.data)  # pyright: ignore[reportUnknownVariableType]
    raise CodegenError(f"unsupported loop.gemm spec attribute {attr}")


_OFFSETS = ("a_offset", "b_offset", "c_offset", "bias_offset", "other_offset", "origins")


def call_spec(op: loop.GemmOp, isa: Isa, threads: int) -> tuple[Any, dict[str, int]]:
    """A ``GemmSpec``, or a ``ConvSpec`` for a native convolution call (spec field ``kernel``)."""
    if "kernel" in op.spec.data:
        from ziggurat.backends.cpu.kernels.conv_library import conv_call_spec

        raw = {k: _spec_value(v) for k, v in op.spec.data.items()}
        return conv_call_spec(raw, isa, threads, f"zg_{op.gemm_name}")
    if "bf16_kernel" in op.spec.data:
        return bf16_gemm_spec(op, threads)
    if "int8_kernel" in op.spec.data:
        return int8_gemm_spec(op, threads)
    return gemm_spec(op, isa, threads)


def _raw_spec(op: loop.GemmOp) -> tuple[dict[str, Any], dict[str, int]]:
    """A ``loop.gemm``'s spec as keyword arguments, and its operands' element offsets."""
    raw = {k: _spec_value(v) for k, v in op.spec.data.items()}
    offsets = {k: int(raw.pop(k)) for k in _OFFSETS if k in raw and k != "origins"}
    raw.pop("origins", None)
    if "unary_params" in raw:
        raw["unary_params"] = tuple(sorted(raw["unary_params"].items()))
    raw["bias"] = op.bias is not None
    return raw, offsets


def bf16_gemm_spec(op: loop.GemmOp, threads: int) -> tuple[Bf16GemmSpec, dict[str, int]]:
    raw, offsets = _raw_spec(op)
    kernel = raw.pop("bf16_kernel")
    return Bf16GemmSpec(kernel=kernel, threads=threads, name=f"zg_{op.gemm_name}", **raw), offsets


#: ``int8_kernel`` as IR from before the AMX kernel recorded it (a saved module's): VNNI's
_INT8_KERNEL_ALIASES = {"avx512vnni": "vnni"}


def int8_gemm_spec(op: loop.GemmOp, threads: int) -> tuple[Int8GemmSpec, dict[str, int]]:
    raw, offsets = _raw_spec(op)
    kernel = str(raw.pop("int8_kernel"))
    kernel = _INT8_KERNEL_ALIASES.get(kernel, kernel)
    return Int8GemmSpec(kernel=kernel, threads=threads, name=f"zg_{op.gemm_name}", **raw), offsets


def gemm_spec(op: loop.GemmOp, isa: Isa, threads: int) -> tuple[GemmSpec, dict[str, int]]:
    raw, offsets = _raw_spec(op)
    return GemmSpec(isa=isa, threads=threads, name=f"zg_{op.gemm_name}", **raw), offsets


def kernel_structure(op: loop.KernelOp) -> tuple[Any, ...]:
    """What the code of ``op`` depends on: its body's ops in order (names, properties,
    attributes, result types, operands by definition order) and its buffers' types, not its
    name or origins.  Two kernels with the same structure compile to the same function (the
    per-step kernels of an unrolled LSTM, the layers of a transformer)."""
    numbers: dict[SSAValue, int] = {}

    def number(value: SSAValue) -> int:
        return numbers.setdefault(value, len(numbers))

    items: list[Any] = [op.isa, op.vector_width, op.vectorized]
    for arg in op.body.block.args:
        items.append((number(arg), arg.type))
    for inner in op.body.walk():
        items.append((inner.name, tuple(number(v) for v in inner.operands),
                      tuple(r.type for r in inner.results), tuple(sorted(inner.properties.items())),
                      tuple(sorted(inner.attributes.items()))))
        for result in inner.results:
            number(result)
        for region in inner.regions:
            for block in region.blocks:
                items.append(tuple((number(arg), arg.type) for arg in block.args))
    return tuple(items)


def profiling_enabled(fn: func.FuncOp) -> bool:
    """``@forward`` was marked for profiling (``loop.profile``, set by the backend)."""
    attr = fn.attributes.get("loop.profile")
    return isinstance(attr, IntegerAttr) and bool(attr.value.data)


def _kernel_entry(op: loop.KernelOp) -> ProfileEntry:
    origins = op.origins.data if op.origins is not None else ""
    return ProfileEntry("kernel", op.kernel_name, origins)


def _gemm_entry(op: loop.GemmOp, spec: Any) -> ProfileEntry:
    """The profile's row of a GEMM call: its shape and flops.  A call that takes sizes at run time
    (a range build's ``m``, batch, ...) shows the largest shape it is planned for, marked so, and
    no flops (its GFLOP/s would count the largest size's)."""
    origins = op.spec.data.get("origins")
    origin = origins.data if isinstance(origins, StringAttr) else ""
    if isinstance(spec, Bf16GemmSpec):
        shape = f"{spec.m}x{spec.n}x{spec.k} bf16 {spec.kernel}" + "".join(f" {f}" for f in (spec.unary, spec.binary) if f)
    elif isinstance(spec, Int8GemmSpec):
        kernel = "amx" if spec.kernel == "amx" else "avx512vnni"
        shape = f"{spec.m}x{spec.n}x{spec.k} int8 {kernel}" + "".join(f" {f}" for f in (spec.unary, spec.binary) if f)
    elif not isinstance(spec, GemmSpec):
        from ziggurat.backends.cpu.kernels.conv_library import conv_profile_shape

        shape = conv_profile_shape(spec)
    else:
        shape = (f"{spec.batch}x" if spec.batch > 1 else "") + f"{spec.m}x{spec.n}x{spec.k}"
        flags = [f for f, on in (("packedB", spec.b_packed), ("Bt", spec.b_transposed)) if on]
        flags += [f for f in (spec.unary, spec.binary) if f]
        shape += " " + ",".join(flags) if flags else ""
    if op.sizes:
        return ProfileEntry("gemm", op.gemm_name, origin, 0, f"at most {shape} (sizes at run time)")
    return ProfileEntry("gemm", op.gemm_name, origin, spec.flops, shape)


class ModuleCodegen:
    def __init__(self, fn: func.FuncOp, plan: MemoryPlan, isa: Isa, threads: int, describe_only: bool = False) -> None:
        load_handlers()
        self.describe_only = describe_only
        self.profile = profiling_enabled(fn)
        self.profile_entries: list[ProfileEntry] = []
        self.specs: list[GemmSpec] = []
        self.workspaces: list[int] = []  # bytes of scratch the other kernels need (int8: requantized A)
        self.fn = fn
        self.plan = plan
        self.isa = isa
        self.threads = threads
        self.module = ir.Module(name=f"ziggurat.{fn.sym_name.data}")
        self.kernels: dict[str, ir.Function] = {}
        self.gemms: dict[str, tuple[ir.Function, dict[str, int], Any]] = {}
        #: kernels and GEMMs already emitted, by what their code depends on (not their names)
        self.kernel_fns: dict[tuple[Any, ...], ir.Function] = {}
        self.gemm_fns: dict[GemmSpec | Bf16GemmSpec | Int8GemmSpec, ir.Function] = {}
        self.profiler = ProfileEmitter(self.module) if self.profile and not describe_only else None

    def run(self) -> tuple[ir.Module, ForwardAbi]:
        ops = list(self.fn.body.block.ops)
        ret = ops[-1]
        assert isinstance(ret, func.ReturnOp)
        outputs = [v for v in ret.arguments]
        constants = [op for op in ops if isinstance(op, loop.ConstantOp)]
        sites_attr = self.fn.attributes.get("loop.error_sites")
        sites = [s.data for s in sites_attr.data] if isinstance(sites_attr, ArrayAttr) else []  # pyright: ignore
        abi = ForwardAbi(list(self.fn.args), outputs, constants, self.plan, 0, [], sites)
        for op in ops:
            if isinstance(op, loop.DimOp):
                where = (abi.inputs.index(op.source), op.dim)
                if where not in abi.dims:
                    abi.dims.append(where)
        self.slots: dict[SSAValue, tuple[str, int]] = {}
        for i, v in enumerate(abi.inputs):
            self.slots[v] = ("arg", i)
        for j, v in enumerate(outputs):
            if v.type.__class__.__name__ == "MemRefType" and v not in self.slots:
                self.slots[v] = ("arg", len(abi.inputs) + j)
        for c, op in enumerate(constants):
            self.slots[op.result] = ("arg", len(abi.inputs) + len(outputs) + c)
        for v, off in self.plan.offsets.items():
            self.slots.setdefault(v, ("arena", off))
        self.abi = abi
        segment: list[Operation] = []
        for op in ops[:-1]:
            if isinstance(op, _GRAPH_OPS):
                continue
            if isinstance(op, loop.KernelOp | loop.GemmOp):
                segment.append(op)
                continue
            if segment:
                self._native_segment(segment)
                segment = []
            if abi.segments and abi.segments[-1].kind == "torch":
                abi.segments[-1].ops.append(op)
            else:
                abi.segments.append(Segment("torch", ops=[op]))
        if segment or not abi.segments:
            self._native_segment(segment)
        abi.workspace_bytes = max([gemm_workspace_bytes(s) for s in self.specs] + self.workspaces, default=0)
        if self.profiler is not None:
            self.profiler.finish()
            abi.profile = list(self.profiler.entries)
        elif self.profile:
            abi.profile = self.profile_entries
        return self.module, abi

    # -- entries ---------------------------------------------------------------------------
    def _native_segment(self, ops: list[Operation]) -> None:
        name = f"zig_forward_{sum(1 for s in self.abi.segments if s.kind == 'native')}"
        if self.describe_only:
            # The same sites in the same order as the generated entry's (see below).
            for op in ops:
                if isinstance(op, loop.GemmOp):
                    spec = call_spec(op, self.isa, self.threads)[0]
                    if isinstance(spec, GemmSpec):
                        self.specs.append(spec)
                    elif isinstance(spec, Int8GemmSpec):
                        self.workspaces.append(spec.workspace_bytes)
                    self.profile_entries.append(_gemm_entry(op, spec))
                elif isinstance(op, loop.KernelOp):
                    self.profile_entries.append(_kernel_entry(op))
            self.profile_entries.append(ProfileEntry("entry", name))
            self.abi.segments.append(Segment("native", function=name))
            return
        fn = ir.Function(self.module, ir.FunctionType(VOID, [I8P.as_pointer()]), name=name)
        fn.args[0].name = "args"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        cache: dict[SSAValue, ir.Value] = {}

        def raw(index: int) -> ir.Value:
            return b.load(b.gep(fn.args[0], [I64(index)]))

        arena = raw(self.abi.arena_index)
        workspace = raw(self.abi.workspace_index)
        status = b.bitcast(raw(self.abi.status_index), I64P)
        prof = self.profiler
        entry_start = prof.now(b) if prof is not None else None

        dims = b.bitcast(raw(self.abi.dims_index), I64P)
        sizes: dict[SSAValue, ir.Value] = {}

        def size(v: SSAValue) -> ir.Value:
            """A run-time size of the function level: a ``loop.dim``, an affine ``loop.offset``
            of sizes, a product of two, or an index constant."""
            hit = sizes.get(v)
            if hit is None:
                try:
                    hit = sizes[v] = fold_size(v, dim, I64, lambda acc, term, c: llvm_ir.add(
                        b, acc, llvm_ir.mul(b, term, I64(c))), lambda x, y: llvm_ir.mul(b, x, y))
                except SizeError as e:
                    raise CodegenError(str(e)) from None
            return hit

        def dim(op: loop.DimOp) -> ir.Value:
            hit = sizes.get(op.result)
            if hit is None:
                slot = self.abi.dims.index((self.abi.inputs.index(op.source), op.dim))
                hit = sizes[op.result] = instr(b.load(b.gep(dims, [I64(slot)])))
            return hit

        def pointer(v: SSAValue) -> ir.Value:
            hit = cache.get(v)
            if hit is not None:
                return hit
            slot = self.slots.get(v)
            if slot is None:
                raise CodegenError(f"buffer {v.name_hint or v} has no storage")
            kind, where = slot
            base = raw(where) if kind == "arg" else b.gep(arena, [I64(where)])
            ptr = cast(ir.Value, b.bitcast(base, llvm_type(v.type)))
            cache[v] = ptr
            return ptr

        for op in ops:
            start = prof.now(b) if prof is not None else None
            if isinstance(op, loop.KernelOp):
                kfn = self._kernel(op)
                b.call(kfn, [pointer(v) for v in (*op.ins, *op.outs)] + [size(v) for v in op.sizes] + [status])
                if prof is not None and start is not None:
                    prof.record(b, _kernel_entry(op), start)
            else:
                assert isinstance(op, loop.GemmOp)
                gfn, offsets, spec = self._gemm(op)

                def at(v: SSAValue | None, key: str) -> ir.Value:
                    if v is None:
                        return ir.Constant(F32P, None)
                    p = pointer(v)
                    off = offsets.get(key, 0)
                    if off:
                        p = b.gep(p, [I64(off)])
                    return cast(ir.Value, b.bitcast(p, F32P))

                ws = b.bitcast(workspace, F32P)
                b.call(gfn, [at(op.a, "a_offset"), at(op.b, "b_offset"), at(op.c, "c_offset"),
                             at(op.bias, "bias_offset"), at(op.other, "other_offset"), ws]
                       + [size(v) for v in op.sizes])
                if prof is not None and start is not None:
                    prof.record(b, _gemm_entry(op, spec), start)
        if prof is not None and entry_start is not None:
            prof.record(b, ProfileEntry("entry", name), entry_start)
        b.ret_void()
        self.abi.segments.append(Segment("native", function=name))

    def _kernel(self, op: loop.KernelOp) -> ir.Function:
        name = f"zk_{op.kernel_name}"
        hit = self.kernels.get(name)
        if hit is not None:
            return hit
        structure = kernel_structure(op)
        same = self.kernel_fns.get(structure)
        if same is not None:
            # called from several sites: inlined into each, the entry grows by the kernel's
            # body per site (an unrolled 256-step LSTM took minutes in LLVM's optimizer)
            if "noinline" not in same.attributes:
                same.attributes.add("noinline")
            self.kernels[name] = same
            return same
        params = [llvm_type(a.type) for a in op.body.block.args] + [I64P]
        fn = ir.Function(self.module, ir.FunctionType(VOID, params), name=name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        if any(isinstance(inner, loop.ScratchOp) for inner in op.body.walk()):
            # its scratch rows stay in its own frame: inlined, every kernel's would add to the entry's
            fn.attributes.add("noinline")
        for a, arg in zip(fn.args, op.body.block.args, strict=False):
            a.name = arg.name_hint or ""
            if isinstance(a.type, ir.PointerType):
                a.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        em = FunctionEmitter(self.module, b, fn.args[-1], self.threads, name)
        em.vector_bits = {Isa.AVX512: 512, Isa.AVX2: 256}.get(self.isa, 0)
        em.f16c = isa_has(self.isa, "f16c")
        for a, arg in zip(fn.args, op.body.block.args, strict=False):
            em.set(arg, a)
        em.emit_block(op.body.block)
        em.b.ret_void()
        self.kernels[name] = self.kernel_fns[structure] = fn
        return fn

    def _gemm(self, op: loop.GemmOp) -> tuple[ir.Function, dict[str, int], Any]:
        hit = self.gemms.get(op.gemm_name)
        if hit is not None:
            return hit
        spec, offsets = call_spec(op, self.isa, self.threads)
        if isinstance(spec, GemmSpec):
            self.specs.append(spec)
            same = self.gemm_fns.get(spec)  # specs that differ only by name are equal
            fn = same if same is not None else emit_gemm(self.module, spec)
            self.gemm_fns[spec] = fn
        elif isinstance(spec, Bf16GemmSpec):
            same = self.gemm_fns.get(spec)
            fn = same if same is not None else emit_bf16_gemm(self.module, spec)
            self.gemm_fns[spec] = fn
        elif isinstance(spec, Int8GemmSpec):
            self.workspaces.append(spec.workspace_bytes)
            same = self.gemm_fns.get(spec)
            fn = same if same is not None else emit_int8_gemm(self.module, spec)
            self.gemm_fns[spec] = fn
        else:
            from ziggurat.backends.cpu.kernels.conv_library import emit_conv_call

            fn = emit_conv_call(self.module, spec)
        self.gemms[op.gemm_name] = (fn, offsets, spec)
        return fn, offsets, spec


def generate(fn: func.FuncOp, plan: MemoryPlan, isa: Isa, threads: int) -> tuple[ir.Module, ForwardAbi]:
    return ModuleCodegen(fn, plan, isa, threads).run()


def describe(fn: func.FuncOp, plan: MemoryPlan, isa: Isa, threads: int) -> ForwardAbi:
    """The ABI of ``fn``'s native code without generating it (loading saved object code)."""
    return ModuleCodegen(fn, plan, isa, threads, describe_only=True).run()[1]


__all__ = ["ForwardAbi", "Segment", "generate", "I8"]
