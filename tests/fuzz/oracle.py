"""The differential oracle: one program, every backend/frontend/ISA, against eager.

Each configuration compiles the program's module with the example inputs (aliased ones
passed as one tensor), then calls it on the example inputs and on fresh call-time inputs
(other values, same shapes and layouts, never aliased).  Outcomes:

``ok``        every output within tolerance (``tolerance.py``) on both input sets;
``wrong``     a wrong value, shape or dtype, and no error;
``crash``     an exception that is not a ``ZigguratError``, or one that reports an internal
              error (``LoweringBug``, "internal error"), or an op the report says fell back
              because of an internal error of its lowering (``fallback=True`` hides those);
``refused``   a clean ``ZigguratError`` (at compile, or at call: ``call: ...``), by reason;
``hang`` / ``segfault``  decided by the runner, which runs programs in subprocesses.

Fallbacks (ops run through torch) are not an outcome: they are counted by op and reason
from ``compiled.report``.  A non-contiguous call-time input refused by the CPU runtime
(documented: it checks contiguity) is counted as a refusal reason, and the call is
repeated with contiguous copies so the numerics are still checked.
"""

from __future__ import annotations

import logging
import math
import re
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from tests.fuzz.eager_layouts import run_eager_contiguous_operands
from tests.fuzz.execute import (build_module, clone_inputs, example_inputs, fresh_inputs, run_eager, run_eager64,
                                run_eager_gemm_zero_signs_flipped, run_eager_nan_signs_flipped, run_eager_scalar_loops,
                                run_statements)
from tests.fuzz.low_precision import AutocastRefused, LowReference, compare_low, low_reference
from tests.fuzz.near_equal import run_eager_near_equal
from tests.fuzz.program import Program, TensorSpec
from tests.fuzz.tolerance import (BIG_DELTA, SMALL_DELTA, Reference, Verdict, compare, jitter, perturbed,
                                  rounding_step)
from tests.fuzz.wide_ops import run_eager_wide_ops
from tests.support.host import host_isas


@dataclass(frozen=True)
class Config:
    backend: str
    frontend: str
    isa: str | None = None
    #: compiled with ``dynamic_shapes`` (dim 0 of the inputs, see ``dynamic_dims``) and called
    #: at other sizes too (names end in ``-dyn``; not in the default set: ``--configs``)
    dynamic: bool = False
    #: compiled with ``precision=`` (``"bf16"``, ``"fp16"``), compared at that precision's
    #: tolerance (``low_precision.py``; names end in ``-bf16``/``-fp16``; not in the default
    #: set: ``--configs``)
    precision: str | None = None
    #: float16 GEMMs split into bf16 ones (``split-float16-gemms``) at every shape, not only
    #: those its host choice takes (names end in ``-split``; not in the default set)
    split: bool = False

    @property
    def name(self) -> str:
        short = {"tensorrt-reference": "trtref", "reference": "ref"}.get(self.backend, self.backend)
        fe = "dyn" if self.dynamic else self.precision or {"torchscript": "ts", "export": "ex"}[self.frontend]
        return "-".join(p for p in (short, self.isa, fe, "split" if self.split else None) if p)

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"backend": self.backend, "frontend": self.frontend}
        if self.isa:
            opts["isa"] = self.isa
        if self.precision:
            opts["precision"] = self.precision
        if self.split:
            opts["float16_gemms_on_amx"] = True
        return opts

    @staticmethod
    def parse(name: str) -> Config:
        return {c.name: c for c in every_config(("avx512", "avx2", "scalar"))}[name]


def all_configs(isas: tuple[str, ...] | None = None, dynamic: bool = False) -> list[Config]:
    """Every configuration for ``isas`` (default: the host's); ``dynamic``: the ``-dyn`` ones too."""
    isas = isas if isas is not None else host_isas()
    out: list[Config] = []
    for fe in ("torchscript", "export"):
        out += [Config("cpu", fe, isa) for isa in isas]
        out += [Config("tensorrt-reference", fe), Config("reference", fe)]
    if dynamic:
        out += [Config("cpu", "export", isa, dynamic=True) for isa in isas]
        out += [Config("tensorrt-reference", "export", dynamic=True), Config("reference", "export", dynamic=True)]
    return out


def every_config(isas: tuple[str, ...] | None = None) -> list[Config]:
    """Every configuration a run can name with ``--configs`` for ``isas`` (default: the host's):
    the default set, the ``-dyn`` ones, the ``-bf16``/``-fp16`` ones and ``cpu-avx512-fp16-split``."""
    isas = isas if isas is not None else host_isas()
    split = [Config("cpu", "export", "avx512", precision="fp16", split=True)] if "avx512" in isas else []
    return all_configs(isas, dynamic=True) + low_precision_configs(isas, every_isa=True) + split


def low_precision_configs(isas: tuple[str, ...] | None = None, every_isa: bool = False) -> list[Config]:
    """The ``-bf16`` and ``-fp16`` configurations: the CPU backend on the widest ISA of ``isas``
    (on AVX-512 with AMX-BF16 or AVX512-BF16 the bf16 GEMMs and convolutions run on their
    kernels, elsewhere widened to the float32 ones), and the reference backend; with
    ``every_isa`` on every ISA of ``isas`` (16-bit casts take F16C or integer code on avx2 and
    integer code on scalar)."""
    isas = isas if isas is not None else host_isas()
    return [config for precision in ("bf16", "fp16")
            for config in (*(Config("cpu", "export", isa, precision=precision) for isa in (isas if every_isa else isas[:1])),
                           Config("reference", "export", precision=precision))]


def dynamic_dims(program: Program, resize: Callable[[int], int] = lambda size: size + 1
                 ) -> tuple[tuple[dict[int, Any] | None, ...], Program] | None:
    """A ``dynamic_shapes`` spec for ``program`` (dim 0 of each input of size at least 2 that
    is not a literal; one ``Dim`` per distinct size, in [2, size + 3]: inputs of one size stay
    related) and the program at other sizes (each such dim ``resize(size)``: one larger by
    default), or None if no input has such a dim."""
    from dataclasses import replace

    from torch.export import Dim

    dims: dict[int, Any] = {}
    spec: list[dict[int, Any] | None] = []
    resized: list[TensorSpec] = []
    for t in program.inputs:
        if t.literal is None and t.shape and t.shape[0] >= 2:
            size = t.shape[0]
            dims.setdefault(size, Dim(f"n{size}", min=2, max=size + 3))
            spec.append({0: dims[size]})
            resized.append(replace(t, shape=[resize(size), *t.shape[1:]]))
        else:
            spec.append(None)
            resized.append(t)
    if not dims:
        return None
    return tuple(spec), replace(program, inputs=resized)


#: the sizes a -dyn configuration is called at besides the examples: one larger, the bottom
#: of each range and its top (a CPU range build is sampled at odd sizes near the top and at
#: the bottom: these include sizes it never lowered)
DYNAMIC_CALLS: dict[str, Callable[[int], int]] = {
    "resized": lambda size: size + 1, "bottom": lambda size: 2, "top": lambda size: size + 3}


@dataclass
class Outcome:
    config: str
    kind: str
    reason: str = ""
    detail: str = ""
    #: op -> reasons it fell back to torch
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    native: list[str] = field(default_factory=list)
    fusions: dict[str, int] = field(default_factory=dict)
    compared: int = 0
    masked: int = 0
    ratio: float = 0.0
    call_refusals: list[str] = field(default_factory=list)
    #: a ``-dyn`` compile: whether one build served the range (``report.stats["range build"]``)
    range_build: str = ""
    #: the native threads a cpu configuration's module was compiled for (``compile(threads=)``)
    threads: int = 1


@dataclass
class GraphResult:
    program: str
    outcomes: list[Outcome] = field(default_factory=list)
    #: the program is not valid on its inputs (a generator bug): where eager refused it
    invalid: str = ""
    fresh_checked: bool = True

    def worst(self) -> str:
        order = ["segfault", "hang", "crash", "wrong", "refused", "ok"]
        kinds = [o.kind for o in self.outcomes] or ["ok"]
        if self.invalid:
            return "invalid"
        return min(kinds, key=order.index)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_NUM = re.compile(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e-?\d+)?")
_TYPES = re.compile(r"tensor<[^>]*>|memref<[^>]*>|\[[\d, ]*\]|\([\d, ]*\)|%[\w.]+|'[^']*'")


def normalize(message: str) -> str:
    """A message with its numbers, shapes, types and names elided: the reason it groups by."""
    first = message.strip().splitlines()[0] if message.strip() else message
    first = re.sub(r"<fuzz [^>]*>(:\d+)?( \[[^\]]*\])?:? ?", "", first)  # the program's source locations
    first = re.sub(r"^\S+\.py:\d+(:\d+)?: ", "", first)
    first = re.sub(r"^\[[^\]]*\]: ", "", first)
    return _NUM.sub("N", _TYPES.sub("_", first))[:200]


#: words by which a ZigguratError admits an internal inconsistency rather than refusing input
INTERNAL_MARKERS = ("internal error", "LoweringBug", "Traceback", "but the IR declares")


def is_internal(e: BaseException) -> bool:
    from ziggurat.ir.errors import ZigguratError

    if not isinstance(e, ZigguratError):
        return True
    return any(marker in str(e) for marker in INTERNAL_MARKERS)


#: aten ops that sum terms of either sign: a float32 overflow inside one gives +inf, -inf or NaN
#: by the order of its sums (an element-wise op, or a sum of squares such as a norm, overflows
#: the same way in any order)
ACCUMULATING = frozenset({"convolution", "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot",
                          "sum", "mean", "nansum", "cumsum", "prod", "cumprod"})

#: norms whose statistics sum a row of the input: where the float32 sum of a row's magnitudes
#: can overflow, eager's mean is infinite or finite by its chunking: NaN outputs for row lengths
#: that are multiples of 8, the bias (its squares overflow, rstd is 0) for others.  Such a NaN
#: is the order of eager's sums; the bias is the norm's value, which every backend must give
#: (fuzz seeds 96 and 111)
NORMS = frozenset({"native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
                   "_batch_norm_with_update"})
FLOAT32_MAX = float(torch.finfo(torch.float32).max)


def _norm_rows(name: str, args: Any) -> torch.Tensor | None:
    """The rows a norm's statistics sum, as [rows, length] (None: no statistics computed)."""
    x = args[0]
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
        return None
    if name == "native_layer_norm":
        return x.reshape(-1, math.prod(args[1]))
    if name == "native_group_norm":
        return x.reshape(int(args[3]) * int(args[6]), -1)
    # batch norm (instance norm's too) computes statistics in training mode: its first bool argument
    training = name == "_batch_norm_with_update" or next((a for a in args[3:] if isinstance(a, bool)), False)
    return x.transpose(0, 1).reshape(x.shape[1], -1) if training and x.dim() >= 2 else None


def norm_overflows(name: str, args: Any) -> bool:
    rows = _norm_rows(name, args)
    if rows is None:
        return False
    finite = torch.where(torch.isfinite(rows), rows, torch.zeros_like(rows)).double()
    return bool((finite.abs().sum(dim=1) > FLOAT32_MAX).any())


def overflows(program: Program, inputs: tuple[torch.Tensor, ...]) -> bool:
    """Whether an accumulating aten op of the program (``ACCUMULATING``; inside a node too: a
    conv whose overflow a hardsigmoid then clamps) overflows float32 on these inputs, in eager,
    with operands of both signs: its inf or NaN is then the order of its sums.

    An overflow is a non-finite element of the result that stays non-finite when the operands'
    infinities and NaNs are read as zeros.  With infinite operands too, the order still decides:
    seed 105, program 207: a linear's terms were -inf, -inf, a product past float32 (finite in
    float64) and +inf; eager's FMA order reached -inf, the scalar ISA's separate products NaN."""
    found = False

    def finite_only(a: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return torch.where(torch.isfinite(a), a, torch.zeros_like(a))
        return a

    def floats(tree: Any) -> list[torch.Tensor]:
        return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor) and t.is_floating_point()]

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            nonlocal found
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func._schema.name.partition("::")[2]
            if not found and name in NORMS and isinstance(out, tuple) and isinstance(out[0], torch.Tensor):
                found = not bool(torch.isfinite(out[0]).all()) and norm_overflows(name, args)
            if found or name not in ACCUMULATING:
                return out
            operands, results = floats((args, kwargs)), floats(out)
            if not any(bool((o < 0).any()) and bool((o > 0).any()) for o in operands):
                return out
            if all(bool(torch.isfinite(o).all()) for o in operands):
                found = any(not bool(torch.isfinite(t).all()) for t in results)
            elif any(not bool(torch.isfinite(t).all()) for t in results):
                again = floats(func(*tree_map(finite_only, args), **tree_map(finite_only, kwargs)))
                found = any(bool((~torch.isfinite(r) & ~torch.isfinite(t)).any())
                            for r, t in zip(again, results, strict=True) if r.shape == t.shape)
            return out

    with Watch():
        run_eager(build_module(program), inputs)
    return found


def reference(program: Program, inputs: tuple[torch.Tensor, ...]) -> Reference:
    module = build_module(program)
    e32 = run_eager(module, inputs)
    try:
        e64: list[Any] | None = run_eager64(program, inputs)
    except Exception:
        e64 = None
    small = [run_eager(module, perturbed(inputs, SMALL_DELTA, s)) for s in (1, 2)]
    for seed in (4, 5):
        g = torch.Generator().manual_seed(seed)
        small.append(run_statements(program, inputs, lambda t, operands: rounding_step(t, operands, g),
                                    inner=True))
    big: list[list[Any]] = []
    mirrors: list[tuple[list[Any], list[Any]]] = []
    pushes: list[Callable[[float], list[Any]]] = [
        lambda delta: run_eager(module, perturbed(inputs, delta, 3)),
        lambda delta: _pushed_values(program, inputs, delta, torch.Generator().manual_seed(6)),
        # every value pushed the same way: random signs can cancel along a chain of nodes
        lambda delta: _pushed_values(program, inputs, delta, None),
    ]
    for push in pushes:  # each sign pattern and its mirror
        runs = []
        for delta in (BIG_DELTA, -BIG_DELTA):
            try:
                runs.append(push(delta))
            except Exception:
                pass
        big.extend(runs)
        if len(runs) == 2:
            mirrors.append((runs[0], runs[1]))
    try:  # eager itself may differ with the inputs' layout (softmax over rows holding inf)
        big.append(run_eager(module, _contiguous(inputs)))
    except Exception:
        pass
    try:  # a float == or != within rounding distance of equality (near_equal.py)
        big.append(run_eager_near_equal(module, inputs))
    except Exception:
        pass
    alternates: list[list[Any]] = []
    try:  # ... and between its vector and scalar loops (gelu of +inf, the sign of a zero)
        alternates.append(run_eager_scalar_loops(module, inputs))
    except Exception:
        pass
    try:  # ... and with the layout of its intermediates (batch_norm's formula; eager_layouts.py)
        alternates.append(run_eager_contiguous_operands(module, inputs))
    except Exception:
        pass
    try:  # ... and the sign of a NaN is nobody's answer (signbit, copysign)
        alternates.append(run_eager_nan_signs_flipped(module, inputs))
    except Exception:
        pass
    try:  # ... nor the sign of a zero sum of products (mm with K = 1 gives -0, mv +0)
        alternates.append(run_eager_gemm_zero_signs_flipped(module, inputs))
    except Exception:
        pass
    try:  # ... and a kernel whose float32 formula loses accuracy (group_norm): correctly rounded
        alternates.append(run_eager_wide_ops(module, inputs))
    except Exception:
        pass
    return Reference(e32, e64, small, big, alternates, mirrors)


def _pushed_values(program: Program, inputs: tuple[torch.Tensor, ...], delta: float,
                   g: torch.Generator | None) -> list[Any]:
    """Eager with every computed float value times (1 +- delta) as it is made (signs from
    ``g``, or all one sign)."""
    return run_statements(program, inputs, lambda t, _operands: jitter(t, delta, g, keep_grid=True))


def _contiguous(inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(t.contiguous() for t in clone_inputs(inputs))


def _call(compiled: Any, inputs: tuple[torch.Tensor, ...], outcome: Outcome) -> Any:
    from ziggurat.ir.errors import InputError

    try:
        return compiled(*clone_inputs(inputs))
    except InputError as e:
        if "not contiguous" not in str(e):
            raise
        outcome.call_refusals.append(normalize(str(e)))
        return compiled(*_contiguous(inputs))


def exported(program: Program, example: tuple[torch.Tensor, ...]) -> Any:
    """The program exported once for every ``export`` configuration (``torch.export`` and its
    functionalization are most of a compile's time), as ``compile`` would export it: from
    copies of the example inputs.  ``None`` when torch refuses: each configuration then
    compiles the module itself, so the refusal reads as a user's would."""
    from ziggurat.ir.importer import fresh_examples
    from ziggurat.ir.importer.export import export, functional

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return functional(export(build_module(program), fresh_examples(example)))
    except Exception:
        return None


#: configurations whose compiled module is also saved, loaded and checked again (the IR
#: text, the resources and, on cpu, the object code go through the file)
SAVE_LOAD_CONFIGS = ("ref-ts", "trtref-ex", "cpu-avx512-ex", "cpu-avx2-ts", "cpu-scalar-ex")


def _saved_and_loaded(compiled: Any) -> Any:
    import tempfile

    import ziggurat

    with tempfile.TemporaryDirectory(prefix="ziggurat-fuzz-") as d:
        compiled.save(f"{d}/m.zg")
        return ziggurat.load(f"{d}/m.zg")


def run_config(program: Program, config: Config, refs: dict[str, tuple[tuple[torch.Tensor, ...], Reference]],
               threads: int = 1, cache_dir: str | None = None, source: Any = None,
               dynamic_shapes: Any = None) -> Outcome:
    """Compile and run ``program`` under ``config`` (from ``source`` when given: the program
    already exported; with ``dynamic_shapes`` for a ``-dyn`` config); compare with each
    reference input set."""
    import ziggurat

    outcome = Outcome(config.name, "ok")
    options = config.options()
    if dynamic_shapes is not None:
        options["dynamic_shapes"] = dynamic_shapes
    if config.backend == "cpu":
        options["threads"] = threads
        outcome.threads = threads
        if cache_dir:
            options["cache_dir"] = cache_dir
    example = refs["example"][0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = ziggurat.compile(source if source is not None else build_module(program), example, **options)
    except Exception as e:
        return _failure(outcome, e, "compile")
    report = compiled.report
    outcome.fallbacks = {k: list(v) for k, v in report.fallback_ops.items()}
    outcome.native = sorted(report.native_ops)
    outcome.fusions = dict(report.pass_stats.get("fuse-post-ops", {}))
    outcome.fusions.update({f"fold-batchnorm:{k}": v for k, v in report.pass_stats.get("fold-batchnorm", {}).items()})
    if dynamic_shapes is not None:
        outcome.range_build = str(report.stats.get("range build", ""))
    modules = [("", compiled)]
    if config.name in SAVE_LOAD_CONFIGS:
        try:
            modules.append((" after save/load", _saved_and_loaded(compiled)))
        except Exception as e:  # a module's own file must load: never a refusal
            _failure(outcome, e, "save/load")
            outcome.kind = "crash"
            return outcome
    for suffix, module in modules:
        for label, (inputs, ref) in refs.items():
            try:
                with torch.no_grad():
                    out = _call(module, inputs, outcome)
            except Exception as e:
                return _failure(outcome, e, "call" + suffix)
            if config.precision:
                try:
                    low = _low_reference(program, inputs, ref, config.precision)
                except AutocastRefused as e:  # the program is not one eager runs under autocast
                    cause = e.__cause__ or e
                    outcome.kind = "refused"
                    outcome.reason = f"eager refuses it under autocast: {normalize(str(cause))}"
                    outcome.detail = f"{type(cause).__name__}: {cause}"[:2000]
                    return outcome
                float32_runs = [r for r in [ref.e64, *ref.small, *ref.alternates] if r is not None]
                verdict: Verdict = compare_low(out, ref.e32, low, float32_runs)
            else:
                verdict = compare(out, ref)
            outcome.compared += verdict.compared
            outcome.masked += verdict.masked
            outcome.ratio = max(outcome.ratio, verdict.ratio)
            if not verdict.ok:
                outcome.kind = "wrong"
                outcome.reason = f"{verdict.reason} ({label} inputs{suffix})"
                outcome.detail = verdict.detail
                return outcome
    internal = [(op, why) for op, reasons in outcome.fallbacks.items() for why in reasons
                if any(marker in why for marker in INTERNAL_MARKERS)]
    if internal:  # an internal error turned into a fallback (fallback=True) is still a crash
        op, why = internal[0]
        outcome.kind = "crash"
        outcome.reason = f"fallback: {op}: {normalize(why)}"
        outcome.detail = f"{op} ran in torch after an internal error of its lowering: {why}"
    return outcome


def _low_reference(program: Program, inputs: tuple[torch.Tensor, ...], ref: Reference,
                   precision: str) -> LowReference:
    """The low-precision measurements of an input set, made once per program and precision
    (kept on its Reference)."""
    if precision not in ref.low:
        ref.low[precision] = low_reference(program, inputs, precision)
    low = ref.low[precision]
    assert isinstance(low, LowReference)
    return low


def _failure(outcome: Outcome, e: BaseException, stage: str) -> Outcome:
    text = f"{type(e).__name__}: {e}"
    if is_internal(e):
        outcome.kind = "crash"
        outcome.reason = f"{stage}: {type(e).__name__}: {normalize(str(e))}"
        outcome.detail = text[:2000] + "\n" + "".join(traceback.format_exception(e)[-6:])[-3000:]
    else:
        outcome.kind = "refused"
        outcome.reason = f"{stage}: {normalize(str(e))}" if stage == "call" else normalize(str(e))
        outcome.detail = text[:2000]
    return outcome


def check_program(program: Program, configs: list[Config] | None = None, threads: int = 1,
                  cache_dir: str | None = None, fresh: bool = True,
                  progress: Callable[[Config], None] | None = None) -> GraphResult:
    """Run ``program`` under every config (default: all for this host) against eager;
    ``progress`` is told each config before it runs (the runner's hang/segfault witness).
    Ziggurat's warnings are silenced while it runs, and only then (the level was left at
    CRITICAL for the rest of the process, so a later test's ``caplog`` saw nothing)."""
    logger = logging.getLogger("ziggurat")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        return _check_program(program, configs, threads, cache_dir, fresh, progress)
    finally:
        logger.setLevel(level)


def _check_program(program: Program, configs: list[Config] | None, threads: int, cache_dir: str | None,
                   fresh: bool, progress: Callable[[Config], None] | None) -> GraphResult:
    result = GraphResult(program.name)
    example = example_inputs(program)
    refs: dict[str, tuple[tuple[torch.Tensor, ...], Reference]] = {}
    try:
        refs["example"] = (example, reference(program, example))
    except Exception as e:
        result.invalid = f"example inputs: {type(e).__name__}: {e}"
        return result
    # An accumulation that overflows float32 gives +inf, -inf or NaN by the order of its sums
    # (fuzz seed 72, program 63: a conv's products past float32's range, +inf in eager's
    # order, NaN in the scalar ISA's and the TensorRT reference's, which a hardsigmoid, a var
    # and a logsumexp carried to a finite value against NaN): such inputs check nothing.  The
    # builder rejects a node's NaN or infinity from finite operands; this sees inside nodes.
    if overflows(program, example):
        result.invalid = "example inputs: an accumulation overflows float32 (its inf or NaN is the order of its sums)"
        return result
    if fresh:
        call = fresh_inputs(program)
        try:
            if overflows(program, call):
                raise ValueError("the call-time values overflow float32 in an accumulation")
            refs["fresh"] = (call, reference(program, call))
        except Exception:
            result.fresh_checked = False  # eager refuses the call-time values: only examples
    configs = configs if configs is not None else all_configs()
    _run_eager_autocast(program, configs, refs, progress)
    sources: dict[str, Any] = {}
    dynamic: tuple[Any, dict[str, tuple[tuple[torch.Tensor, ...], Reference]]] | None = None
    for config in configs:
        if config.dynamic:
            if dynamic is None:
                dynamic = _dynamic_refs(program, refs)
            if dynamic[0] is None:
                continue  # no input dim to make dynamic
            if progress is not None:
                progress(config)
            result.outcomes.append(run_config(program, config, dynamic[1], threads, cache_dir,
                                              dynamic_shapes=dynamic[0]))
            continue
        if progress is not None:
            progress(config)
        if config.frontend == "export" and "export" not in sources:
            sources["export"] = exported(program, example)
        # precision= exports the module itself, under autocast
        source = None if config.precision else sources.get(config.frontend)
        result.outcomes.append(run_config(program, config, refs, threads, cache_dir, source))
    return result


#: The name under which eager autocast's own runs are announced (``eager-autocast-bf16``): a
#: worker that dies there died in eager (torch 2.13's oneDNN AMX convolutions segfault on some
#: bf16 shapes), and the runner makes the program invalid instead of charging a configuration.
EAGER_AUTOCAST = "eager-autocast"

#: The phase a worker announces while it generates a program: the generator's probes run eager
#: on the example values, and a death there is torch's (seed 106, program 15: torch 2.13's float32
#: conv2d of a channels-last [2, 11, 7, 1] image at stride 2, dilation (1, 2) segfaults on every
#: oneDNN ISA).  The runner makes such a program invalid and never regenerates it in its own process.
GENERATING = "generate"


def _run_eager_autocast(program: Program, configs: list[Config],
                        refs: dict[str, tuple[tuple[torch.Tensor, ...], Reference]],
                        progress: Callable[[Config], None] | None) -> None:
    """Eager under autocast for each precision the configs compare at, before any of them runs,
    announced as ``eager-autocast-<precision>``; kept on the references (a refusal is left for
    the configuration to report)."""
    for precision in sorted({c.precision for c in configs if c.precision and not c.dynamic}):
        if progress is not None:
            progress(Config(EAGER_AUTOCAST, "export", precision=precision))
        for inputs, ref in refs.values():
            try:
                _low_reference(program, inputs, ref, precision)
            except AutocastRefused:
                pass


def _dynamic_refs(program: Program, refs: dict[str, tuple[tuple[torch.Tensor, ...], Reference]]
                  ) -> tuple[Any, dict[str, tuple[tuple[torch.Tensor, ...], Reference]]]:
    """The ``dynamic_shapes`` spec of ``program`` and its reference input sets: the examples,
    and inputs at each size of ``DYNAMIC_CALLS`` (those eager takes)."""
    found = dynamic_dims(program)
    if found is None:
        return None, {}
    out = {"example": refs["example"]}
    for label, resize in DYNAMIC_CALLS.items():
        resized = dynamic_dims(program, resize)[1]  # pyright: ignore[reportOptionalSubscript]
        if all(t.shape == r.shape for t, r in zip(program.inputs, resized.inputs, strict=True)):
            continue  # the examples' sizes
        inputs = fresh_inputs(resized, 2)
        try:
            out[label] = (inputs, reference(resized, inputs))
        except Exception:  # noqa: BLE001 - eager refuses that size: the others
            pass
    return found[0], out
