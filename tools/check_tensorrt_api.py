"""Check every TensorRT API use of the emitter against the real ``tensorrt`` bindings, read as data.

    python -m ziggurat.tools.check_tensorrt_api                       # the installed tensorrt-cu12-bindings
    python -m ziggurat.tools.check_tensorrt_api --bindings x.whl --ir tests/filecheck/trt/roundtrip.mlir

The bindings wheel (``tensorrt-cu12-bindings``, in the ``test`` extra) holds
``tensorrt_bindings/tensorrt.so``, the pybind11 module, which cannot be imported without
``libnvinfer``.  :mod:`ziggurat.tools.pybind_surface` reads its classes, method overloads
(parameter types, defaults, docstring keyword names), properties and enum members from its
machine code; :mod:`ziggurat.tools.tensorrt_api_uses` lists what the emitter uses, from the
network plans of real ``trt`` functions (the zoo models converted by the converters, plus
``--ir`` files), the emitter's own tables and its modules' source.  Each use must exist on the
right class, fit an overload's arity and parameter kinds, use its keyword names, set only
writable properties and name existing enum members.

Exit status: 0 all uses check, 1 the first mismatch (printed with the ``trt`` op and the
emitter function or file:line that made it), 2 the bindings cannot be found or read.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.metadata
import re
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ziggurat.backends.tensorrt.availability import CHECKED_TENSORRT_MAJOR, CHECKED_TENSORRT_VERSION
from ziggurat.ir.errors import ZigguratError
from ziggurat.tools.pybind_surface import ApiSurface, Overload, read_surface
from ziggurat.tools.tensorrt_api_uses import (
    ApiUse,
    Returned,
    data_type_uses,
    default_data_type_tables,
    layer_calls_source,
    module_sources,
    plan_uses,
    source_uses,
    table_uses,
)

DISTRIBUTION = "tensorrt-cu12-bindings"
MODULE_PATH = "tensorrt_bindings/tensorrt.so"
_BINDER = re.compile(r"^_ZN8tensorrt\d+bind\w+ERN8pybind117module_E$")


class BindingsError(ZigguratError):
    """The TensorRT bindings to check against cannot be found or read."""


class ApiMismatch(ZigguratError):
    """A use of the TensorRT API that the real bindings do not have."""


# -- the bindings -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bindings:
    path: Path
    version: str

    @property
    def package_init(self) -> Path:
        """The package's ``__init__.py`` (it re-exports the extension and sets ``__version__``)."""
        return self.path.with_name("__init__.py")


PACKAGE_INIT = MODULE_PATH.rsplit("/", 1)[0] + "/__init__.py"


def package_names(source: str) -> tuple[set[str], str | None]:
    """The names a package's ``__init__.py`` defines (read, never run), and its ``__version__``."""
    names = {"__file__", "__path__", "__name__", "__spec__", "__doc__", "__loader__", "__package__"}  # any module's
    version = None
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "__version__" and isinstance(node.value, ast.Constant):
                        version = str(node.value.value)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    return names, version


def find_bindings(given: Path | None = None, cache: Path = Path("build/tensorrt-bindings")) -> Bindings:
    """The bindings module: ``given`` (a .so, a wheel or a directory of wheels), else the
    installed ``tensorrt-cu12-bindings`` distribution (never imported)."""
    if given is None:
        try:
            dist = importlib.metadata.distribution(DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            raise BindingsError(
                f"{DISTRIBUTION} is not installed (`pip install -e '.[test]'` installs it) and no --bindings was given",
                op="check-tensorrt-api",
            ) from None
        path = Path(str(dist.locate_file(MODULE_PATH)))
        if not path.is_file():
            raise BindingsError(f"{DISTRIBUTION} {dist.version} has no {MODULE_PATH}", op="check-tensorrt-api")
        return Bindings(path, dist.version)
    if given.is_dir():
        wheels = sorted(given.glob("tensorrt_cu*_bindings-*.whl"))
        if not wheels:
            raise BindingsError(f"no tensorrt bindings wheel in {given}", op="check-tensorrt-api")
        given = wheels[-1]
    if given.suffix == ".whl":
        version = given.name.split("-")[1]
        target = cache / version / MODULE_PATH
        if not target.is_file():
            try:
                with zipfile.ZipFile(given) as wheel:
                    wheel.extract(PACKAGE_INIT, cache / version)
                    wheel.extract(MODULE_PATH, cache / version)
            except (zipfile.BadZipFile, KeyError) as e:
                raise BindingsError(f"{given} is not a TensorRT bindings wheel ({e})", op="check-tensorrt-api") from e
        return Bindings(target, version)
    if not given.is_file():
        raise BindingsError(f"{given} does not exist", op="check-tensorrt-api")
    return Bindings(given, "?")


def load_surface(bindings: Bindings) -> ApiSurface:
    from ziggurat.tools.elf_image import ElfImage

    binders = sorted(n for n in ElfImage.read(bindings.path).symbols if _BINDER.match(n))
    if not binders:
        raise BindingsError(f"{bindings.path} has no tensorrt::bind* functions", op="check-tensorrt-api")
    surface = read_surface(bindings.path, binders)
    if bindings.package_init.is_file():
        surface.package_names, _ = package_names(bindings.package_init.read_text())
    return surface


# -- checking -----------------------------------------------------------------------------------

_INT = ("int", "SupportsInt")
_FLOAT = ("float", "SupportsFloat")


def accepts(surface: ApiSurface, param: str, kind: str) -> bool:
    """Whether pybind11 converts a Python value of ``kind`` to a parameter of (C++) type ``param``."""
    if kind == "any" or param in ("object", "?"):
        return True
    py = surface.python_name(param)
    sequence = param.startswith("@collections.abc.Sequence@") or param in ("list", "tuple")
    if kind == "ITensor":
        return py == "ITensor"
    if kind == "ITensor[]":
        return sequence and "ITensor" in param
    if kind.startswith("enum:"):
        return py == kind[5:]
    if kind.startswith("obj:"):
        return any(c.name == py for c in surface.lineage(kind[4:]))
    if kind == "Weights":
        return py == "Weights"
    if kind == "ndarray":
        return py == "Weights" or param == "numpy.ndarray"
    if kind == "Dims":
        converted = surface.conversions.get(param, [])
        return sequence or any(c.startswith("std::vector<") for c in converted)
    if kind == "float[]":
        return sequence and any(f in param for f in _FLOAT)
    if kind == "bool":  # bool is an int subclass: pybind11's int caster takes it
        return param == "bool" or any(i in param for i in _INT)
    if kind == "int":
        return any(i in param for i in _INT + _FLOAT) and not sequence
    if kind == "float":
        return any(f in param for f in _FLOAT) and not sequence
    if kind == "str":
        return param == "str"
    if kind == "buffer":
        return "Buffer" in param or param == "bytes"
    return False


@dataclass
class Report:
    checked: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    #: uses whose keywords the module's docstrings do not name (so only arity was checked)
    unverifiable: set[str] = field(default_factory=set[str])

    def add(self, cls: str, what: str) -> None:
        self.checked.setdefault(cls, set()).add(what)


def _receiver(surface: ApiSurface, receiver: str | Returned, use: ApiUse) -> str:
    if isinstance(receiver, str):
        return receiver
    overloads = surface.methods(receiver.cls, receiver.method)
    returned = {surface.python_name(o.returns) for o in overloads}
    if len(returned) != 1:
        raise ApiMismatch(f"{receiver.cls}.{receiver.method} does not exist, so {use.describe()} cannot be checked",
                          op=use.where)
    return returned.pop()


def _suggest(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, names, n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _fits(surface: ApiSurface, o: Overload, use: ApiUse) -> str | None:
    """None if ``o`` takes ``use``'s arguments, else why not."""
    given = len(use.args) + len(use.keywords)
    if given > len(o.params):
        return f"{given} arguments for {len(o.params)} parameters"
    for i, (kind, param) in enumerate(zip(use.args, o.params, strict=False)):
        if not accepts(surface, param, kind):
            return f"argument {i + 1} is {kind}, the parameter is {surface.python_name(param)}"
    if use.keywords:
        if o.keywords is None:
            return None
        rest = o.keywords[len(use.args):]
        for k in use.keywords:
            if k not in rest:
                return f"no keyword {k!r} (keywords: {', '.join(rest) or 'none'})"
            if not accepts(surface, o.params[o.keywords.index(k)], "any"):
                return f"keyword {k!r} has the wrong kind"
        covered = set(range(len(use.args))) | {o.keywords.index(k) for k in use.keywords}
        if any(i not in covered for i in range(o.required)):
            return f"required parameters left out (needs {o.required})"
    elif len(use.args) < o.required:
        return f"{len(use.args)} arguments for {o.required} required parameters"
    return None


def check_use(surface: ApiSurface, use: ApiUse, report: Report) -> None:
    """Raise :class:`ApiMismatch` if the bindings do not have ``use``."""
    if use.kind == "class":
        if use.name not in surface.classes and use.name not in surface.package_names:
            raise ApiMismatch(f"tensorrt has no {use.name}{_suggest(use.name, list(surface.classes))}", op=use.where)
        report.add("tensorrt", use.name)
        return
    cls = _receiver(surface, use.receiver, use)
    if cls not in surface.classes:
        raise ApiMismatch(f"tensorrt has no class {cls} (for {use.describe()})", op=use.where)
    if use.kind == "member":
        c = surface.classes[cls]
        if not (c.is_enum and use.name in c.members) and surface.attribute(cls, use.name) is None:
            raise ApiMismatch(f"tensorrt.{cls} has no member {use.name}{_suggest(use.name, c.members)}", op=use.where)
        report.add(cls, use.name)
        return
    if use.kind == "set":
        prop = surface.property(cls, use.name)
        names = [p for c in surface.lineage(cls) for p in c.properties]
        if prop is None:
            raise ApiMismatch(f"tensorrt.{cls} has no attribute {use.name} to set{_suggest(use.name, names)}",
                              op=use.where)
        if not prop.writable:
            raise ApiMismatch(f"tensorrt.{cls}.{use.name} is read-only", op=use.where)
        if prop.type is not None and use.args and not accepts(surface, prop.type, use.args[0]):
            raise ApiMismatch(f"tensorrt.{cls}.{use.name} takes {surface.python_name(prop.type)}, "
                              f"the emitter sets {use.args[0]}", op=use.where)
        report.add(cls, f"{use.name} =")
        return
    overloads = surface.methods(cls, use.name)
    if use.kind == "get":
        if not overloads and surface.property(cls, use.name) is None and surface.attribute(cls, use.name) is None:
            names = [n for c in surface.lineage(cls) for n in (*c.methods, *c.properties)]
            raise ApiMismatch(f"tensorrt.{cls} has no {use.name}{_suggest(use.name, names)}", op=use.where)
        report.add(cls, use.name)
        return
    if not overloads:
        names = [n for c in surface.lineage(cls) for n in c.methods]
        what = "constructor" if use.name == "__init__" else f"method {use.name}"
        raise ApiMismatch(f"tensorrt.{cls} has no {what}{_suggest(use.name, names)}", op=use.where)
    reasons = [(o, _fits(surface, o, use)) for o in overloads]
    if all(r is not None for _, r in reasons):
        detail = "; ".join(f"{use.name}{o.describe()}: {r}" for o, r in reasons)
        raise ApiMismatch(f"{use.describe()} fits no overload of tensorrt.{cls}.{use.name}: {detail}", op=use.where)
    if use.keywords and all(o.keywords is None for o, r in reasons if r is None):
        report.unverifiable.add(f"{cls}.{use.name}({', '.join(use.keywords)}=): the module's docstring names no keywords")
    report.add(cls, f"{use.name}()")


def check_uses(surface: ApiSurface, uses: Sequence[ApiUse]) -> Report:
    report = Report()
    for use in uses:
        check_use(surface, use, report)
    return report


# -- what to check -----------------------------------------------------------------------------


def _returns(surface: ApiSurface) -> Callable[[str, str], str | None]:
    def returns(cls: str, method: str) -> str | None:
        found = {surface.python_name(o.returns) for o in surface.methods(cls, method)}
        return found.pop() if len(found) == 1 else None

    return returns


def severity_defaults(sources: dict[str, str]) -> list[str]:
    """The ``log_severity`` defaults of the emitter's modules (``getattr(trt.Logger, log_severity)``)."""
    found: set[str] = set()
    for source in sources.values():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "log_severity":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    found.add(node.value.value)
            if isinstance(node, ast.arguments):
                args = node.kwonlyargs
                for arg, default in zip(args, node.kw_defaults, strict=True):
                    if arg.arg == "log_severity" and isinstance(default, ast.Constant):
                        found.add(str(default.value))
    return sorted(found)


def plans_of_models(names: Sequence[str]) -> dict[str, list[object]]:
    """The network plans of every TensorRT segment of the named zoo models, converted by the converters."""
    from xdsl.dialects.func import FuncOp

    from ziggurat.backends.tensorrt.emitter import plan_network
    from ziggurat.backends.tensorrt.segments import BACKEND_ATTR
    from ziggurat.tools.check_tensorrt import convert_model, example_models

    models = example_models()
    plans: dict[str, list[object]] = {}
    for name in names:
        module = convert_model(*models[name][0]())
        plans[name] = [plan_network(f) for f in module.ops if isinstance(f, FuncOp) and BACKEND_ATTR in f.attributes]
    return plans


def plans_of_ir(paths: Sequence[Path]) -> dict[str, list[object]]:
    from xdsl.dialects.func import FuncOp
    from xdsl.parser import Parser

    from ziggurat.backends.tensorrt.emitter import plan_network
    from ziggurat.ir.context import make_context

    plans: dict[str, list[object]] = {}
    for path in paths:
        module = Parser(make_context(), path.read_text(), str(path)).parse_module()
        plans[str(path)] = [plan_network(f) for f in module.walk() if isinstance(f, FuncOp)]
    return plans


def collect_uses(surface: ApiSurface, plans: dict[str, list[object]], *, layer_calls: str | None = None,
                 sources: dict[str, str] | None = None) -> list[ApiUse]:
    """Every use: the plans' calls, the emitter's tables and its modules' static calls.
    ``layer_calls``/``sources`` replace the emitter's source text (tests plant mistakes in copies)."""
    from ziggurat.backends.tensorrt.network_plan import NetworkPlan

    sources = module_sources() if sources is None else sources
    uses = table_uses(layer_calls_source() if layer_calls is None else layer_calls)
    uses += data_type_uses(default_data_type_tables())
    severities = severity_defaults(sources)
    for path, text in sources.items():
        uses += source_uses(text, path, _returns(surface), severities)
    for origin, found in plans.items():
        for i, plan in enumerate(found):
            if isinstance(plan, NetworkPlan):
                uses += plan_uses(plan, f"{origin} segment {i}")
    return uses


def summary(report: Report) -> str:
    lines = [f"  {cls}: {len(names)}: {', '.join(sorted(names))}" for cls, names in sorted(report.checked.items())]
    lines += [f"  not checkable from the module: {u}" for u in sorted(report.unverifiable)]
    return "\n".join(lines)


DEFAULT_MODELS = ("small-cnn",)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bindings", type=Path, help="tensorrt.so, a bindings wheel, or a directory of wheels")
    parser.add_argument("--ir", type=Path, nargs="*", default=[], help="more .mlir files of trt functions to plan")
    parser.add_argument("--models", nargs="*", default=list(DEFAULT_MODELS), help="zoo models to convert and plan")
    parser.add_argument("--quiet", action="store_true", help="print only the result line")
    args = parser.parse_args(argv)
    try:
        bindings = find_bindings(args.bindings)
        surface = load_surface(bindings)
    except ZigguratError as e:
        print(f"check_tensorrt_api: {e}", file=sys.stderr)
        return 2
    major = bindings.version.split(".")[0]
    if major.isdigit() and int(major) != CHECKED_TENSORRT_MAJOR:
        print(f"check_tensorrt_api: the bindings are TensorRT {bindings.version}, the emitter claims "
              f"{CHECKED_TENSORRT_VERSION} (availability.CHECKED_TENSORRT_VERSION)", file=sys.stderr)
        return 1
    plans = {**plans_of_models(args.models), **plans_of_ir(args.ir)}
    uses = collect_uses(surface, plans)
    try:
        report = check_uses(surface, uses)
    except ApiMismatch as e:
        print(f"check_tensorrt_api: MISMATCH against TensorRT {bindings.version}: {e}")
        return 1
    if not args.quiet:
        print(f"TensorRT {bindings.version} ({bindings.path}):")
        print(summary(report))
    total = sum(len(v) for v in report.checked.values())
    print(f"{len(uses)} uses ({total} distinct) of the TensorRT API checked against TensorRT {bindings.version}: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

