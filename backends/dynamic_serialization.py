"""``DynamicCompiledModule.save(path)`` / ``ziggurat.load(path)``: a dynamic-shape module in one file.

Layout: ``MAGIC``, an 8-byte little-endian header length, a JSON header, then the sections:
the exported program as torch.export serializes it (``program``: its graph as JSON;
``program-weights`` and ``program-constants``: its tensors, read back with
``torch.load(weights_only=True)``, so a forged file cannot make loading unpickle objects, as
``torch.export.load`` would), one ``spec-<i>`` per size specialization built so far (a
static module file, ``serialization.dumps``) and ``range``, the build for the whole ranges.  The header holds the format, the versions, the
backend and options, the shape symbols (ranges and the input dims bound to them), the call
signature, the output structure, the input names, the model's name, each specialization's
sizes and, per section, its length and sha256.  Loading checks the magic, the versions, the
header against ``HEADER_SHAPE``, the lengths and the hashes before anything is used, checks
the symbols against those the program declares (dims, relations, ranges), loads each
specialization (and the one ``range`` build, where the backend makes one for the whole ranges,
with the smallest size of each symbol it serves, ``range_lows``; range builds for calls below
those are made again at the first such call) without recompiling and re-imports the symbolic ``torch`` level; a call at
sizes not saved builds from the program, as after ``compile``.  Whatever is wrong with a file,
loading it raises :class:`LoadError`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import struct
from pathlib import Path
from typing import Any

import torch
import torch._export.serde.serialize as serde
from xdsl.dialects.builtin import StringAttr

from ziggurat.backends import serialization
from ziggurat.backends.compiled_module import CompiledModule, forward_function
from ziggurat.backends.dynamic_module import DynamicCompiledModule
from ziggurat.backends.json_shape import OptionalKey, shape_problem
from ziggurat.backends.serialization import (DYNAMIC_MAGIC, LoadError, _check_versions, _first_line, _options_json,
                                             _read_header, _sections)
from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.importer.dynamic_shapes import shape_symbols_of
from ziggurat.ir.importer.export import ExportImporter
from ziggurat.ir.shape_symbols import ShapeSymbols, evaluate
from ziggurat.ir.signature import OUTPUTS_ATTR, call_signature, input_names, output_structure, set_call_signature
from ziggurat.ir.structure import parse_tree

MAGIC = DYNAMIC_MAGIC
FORMAT = 1
#: the sections of the exported program, first in the file (then ``spec-<i>``)
PROGRAM_SECTIONS = ("program", "program-weights", "program-constants")
#: What ``dumps`` writes into the header (see ``json_shape``).
HEADER_SHAPE = {
    "format": int,
    "versions": serialization.HEADER_SHAPE["versions"],
    "backend": str,
    "options": serialization.HEADER_SHAPE["options"],
    "passes": OptionalKey((str, list, type(None))),
    "max_specializations": int,
    "symbols": {"symbols": [list], "dims": [list]},
    "signature": str,
    "outputs": str,
    "input_names": [str],
    "model_name": str,
    "specializations": [dict],
    "range_build": OptionalKey((bool,)),
    "range_lows": OptionalKey((list, type(None))),
    "sections": [{"name": str, "length": int, "sha256": str}],
}


#: the section holding ``DynamicCompiledModule.range_build`` (when the backend made one)
RANGE_SECTION = "range"


def _program_sections(program: Any) -> dict[str, bytes]:
    """``program`` as torch.export serializes it: its graph (JSON), then its weights and its
    constants as ``torch.save`` writes them (read back by ``torch.load(weights_only=True)``)."""
    try:
        artifact = serde.serialize(program, serialize_example_inputs=False)
    except Exception as e:  # noqa: BLE001 - torch.export's serializer, on whatever the program holds
        raise ZigguratError(f"cannot save the exported program ({_why(e)})", op="save") from None
    return dict(zip(PROGRAM_SECTIONS, (artifact.exported_program, artifact.state_dict, artifact.constants),
                    strict=True))


def dumps(compiled: DynamicCompiledModule) -> bytes:
    """The whole file ``DynamicCompiledModule.save`` writes."""
    program, model_name = compiled._program, compiled._model_name
    specializations = list(compiled._specializations.items())
    if program is None:  # TracedDynamicModule
        raise ZigguratError("a dynamic-shape module compiled on the TorchScript frontend cannot be saved: it "
                            "traces the Python model at each new size (compile with the export frontend)",
                            op="save")
    fn = forward_function(compiled.module_ir)
    signature = call_signature(fn)
    assert signature is not None  # the module's constructor requires it
    names = [s.name for s in compiled.symbols.symbols]
    sections = _program_sections(program)
    for i, (_, built) in enumerate(specializations):
        sections[f"spec-{i}"] = serialization.dumps(built)
    if compiled.range_build is not None:
        sections[RANGE_SECTION] = serialization.dumps(compiled.range_build)
    passes = compiled.options.passes
    header = {
        "format": FORMAT,
        "versions": serialization.versions(),
        "backend": compiled.report.backend,
        "options": _options_json(compiled.options),
        "passes": passes if isinstance(passes, str | list) else None,
        "max_specializations": compiled.max_specializations,
        "symbols": json.loads(compiled.symbols.to_json()),
        "signature": signature.text(),
        "outputs": output_structure(fn),
        "input_names": input_names(fn),
        "model_name": model_name,
        "specializations": [dict(zip(names, key, strict=True)) for key, _ in specializations],
        "range_build": compiled.range_build is not None,
        "range_lows": compiled.range_lows,
        "sections": [{"name": name, "length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                     for name, data in sections.items()],
    }
    head = json.dumps(header, sort_keys=True).encode()
    return b"".join([MAGIC, struct.pack("<Q", len(head)), head, *sections.values()])


def save(compiled: DynamicCompiledModule, path: Path) -> None:
    """Write ``dumps(compiled)`` to ``path``."""
    data = dumps(compiled)
    with open(path, "wb") as f:
        f.write(data)


def _why(e: BaseException) -> str:
    """``e``'s kind and first line, cut short (torch's messages run long)."""
    line = _first_line(e)
    return f"{type(e).__name__}: {line[:200]}{'...' if len(line) > 200 else ''}"


def _corrupt(path: Path, problem: str) -> LoadError:
    return LoadError(f"{path} is corrupt ({problem})", op="load")


def _check_header(header: dict[str, Any], path: Path) -> None:
    problem = shape_problem(header, HEADER_SHAPE, "header")
    if problem is None:
        want = [*PROGRAM_SECTIONS] + [f"spec-{i}" for i in range(len(header["specializations"]))] + (
            [RANGE_SECTION] if header.get("range_build") is True else [])
        passes, extra = header.get("passes"), header.get("options", {}).get("extra", {})
        if not all(isinstance(v, bool | int | float | str) for v in extra.values()):
            problem = "header.options.extra holds a value that is not a scalar"
        elif isinstance(passes, list) and not all(isinstance(p, str) for p in passes):
            problem = "header.passes holds a value that is not a string"
        elif header["max_specializations"] < 1:
            problem = "header.max_specializations is not positive"
        elif [s["name"] for s in header["sections"]] != want:
            problem = f"header.sections names {[s['name'] for s in header['sections']]}, not {want}"
        elif any(s["length"] < 0 for s in header["sections"]):
            problem = "header.sections has a negative length"
    if problem is not None:
        raise _corrupt(path, problem)


#: the JSON types of ``ShapeSymbols.to_json``'s entries: [name, low, high], [input, name, dim, expr]
_ENTRY_TYPES = {"symbols": ((str,), (int,), (int, type(None))), "dims": ((int,), (str,), (int,), (str,))}


def _symbols(header: dict[str, Any], path: Path) -> ShapeSymbols:
    for key, kinds in _ENTRY_TYPES.items():
        for i, entry in enumerate(header["symbols"][key]):
            if len(entry) != len(kinds) or not all(
                    type(v) in k and (type(v) is not int or v >= 0) for v, k in zip(entry, kinds, strict=False)):
                raise _corrupt(path, f"header.symbols.{key}[{i}] is {json.dumps(entry)[:200]}, not "
                                     f"[{', '.join('/'.join(t.__name__ for t in k) for k in kinds)}]")
    try:
        symbols = ShapeSymbols.from_json(header["symbols"])
    except Exception as e:  # noqa: BLE001 - ValueError, OverflowError (1e999), RecursionError ...
        raise _corrupt(path, f"header.symbols: {_why(e)}") from None
    return symbols


def _program(sections: dict[str, bytes], path: Path) -> Any:
    """The exported program of ``_program_sections``; its tensors are read without unpickling
    anything else (``torch.export.load`` would unpickle what a forged file holds)."""
    tensors: list[dict[str, torch.Tensor]] = []
    for name in PROGRAM_SECTIONS[1:]:
        try:
            value = torch.load(io.BytesIO(sections[name]), weights_only=True) if sections[name] else {}
        except Exception as e:  # noqa: BLE001 - torch.load on bytes it did not write
            raise _corrupt(path, f"its {name} section is not tensors that torch.load(weights_only=True) reads "
                                 f"({type(e).__name__})") from None
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                  for k, v in value.items()):
            raise _corrupt(path, f"its {name} section is not a table of tensors")
        tensors.append(value)
    try:
        # deserialize takes the tensor tables themselves in place of their torch.save bytes
        weights, constants = tensors
        artifact = serde.SerializedArtifact(sections["program"], weights, constants, b"")  # pyright: ignore
        return serde.deserialize(artifact)
    except Exception as e:  # noqa: BLE001 - torch.export's deserializer on a graph it did not write
        raise _corrupt(path, f"its program section does not load: {_why(e)}") from None


@dataclasses.dataclass(frozen=True)
class _Name:
    """A ``Dim`` as ``shape_symbols_of`` reads it: its name."""

    __name__: str


class _Inputs:
    """The exported program's user inputs, checked against the header's symbols (they must be
    the ones the program declares: the same dims, relations and ranges): their shapes at given
    sizes, and the sympy symbol of each symbol name."""

    def __init__(self, program: Any, symbols: ShapeSymbols, names: list[str], path: Path) -> None:
        flat: dict[int, dict[int, Any]] = {}
        for d in symbols.dims:
            if any(s.name == d.expr for s in symbols.symbols):
                flat.setdefault(d.input, {})[d.dim] = _Name(d.expr)
        sig = program.graph_signature
        constants = {*sig.inputs_to_parameters, *sig.inputs_to_buffers, *sig.inputs_to_lifted_tensor_constants}
        vals = [n.meta.get("val") for n in program.graph_module.graph.nodes
                if n.op == "placeholder" and n.name not in constants]
        if len(names) != len(vals):
            raise _corrupt(path, f"header.input_names names {len(names)} inputs, the program takes {len(vals)}")
        try:
            declared, self.sympy = shape_symbols_of(program, names, flat)
        except ZigguratError as e:
            raise _corrupt(path, f"header.symbols do not fit the program: {e.message}") from None
        except Exception as e:  # noqa: BLE001 - a program whose inputs are not what the header says
            raise _corrupt(path, f"header.symbols do not fit the program: {_why(e)}") from None
        if declared != symbols:
            raise _corrupt(path, f"header.symbols are {'; '.join(symbols.describe())}, the program declares "
                                 f"{'; '.join(declared.describe())}")
        if not all(isinstance(v, torch.Tensor) for v in vals):
            raise _corrupt(path, "the program has an input that is not a tensor")
        self.dtypes: list[torch.dtype] = [v.dtype for v in vals]
        self.exprs = {(d.input, d.dim): d.expr for d in symbols.dims}
        self.dims = [[None if isinstance(n, torch.SymInt) else int(n) for n in v.shape] for v in vals]

    def shapes(self, values: dict[str, int]) -> list[list[int]]:
        """Each input's shape when the symbols are ``values``."""
        return [[n if n is not None else evaluate(self.exprs[(i, k)], values) for k, n in enumerate(dims)]
                for i, dims in enumerate(self.dims)]


def _specialization(data: bytes, sizes: dict[str, Any], shapes: list[list[int]], backend: str,
                    path: Path, index: int) -> CompiledModule:
    """Section ``spec-<index>``: the static module for ``sizes`` (inputs of ``shapes``)."""
    built = serialization.loads(data, Path(f"{path} (section spec-{index})"))
    if built.report.backend != backend:
        raise _corrupt(path, f"section spec-{index} is a {built.report.backend} module, not {backend}")
    types = built._input_types
    got = [list(t.get_shape()) if hasattr(t, "get_shape") else None for t in types]
    if got != shapes:
        raise _corrupt(path, f"section spec-{index} takes inputs of shapes {got}, not {shapes} ({sizes})")
    return built


def _range_build(data: bytes, symbolic: Any, backend: str, path: Path) -> CompiledModule:
    """Section ``range``: the one build for the whole ranges, taking the symbolic level's input types."""
    built = serialization.loads(data, Path(f"{path} (section {RANGE_SECTION})"))
    if built.report.backend != backend:
        raise _corrupt(path, f"section {RANGE_SECTION} is a {built.report.backend} module, not {backend}")
    want = list(forward_function(symbolic).function_type.inputs.data)
    if list(built._input_types) != want:
        raise _corrupt(path, f"section {RANGE_SECTION} takes inputs {[str(t) for t in built._input_types]}, "
                             f"not the symbolic level's {[str(t) for t in want]}")
    return built


def _symbolic_module(program: Any, symbols: ShapeSymbols, inputs: _Inputs, header: dict[str, Any],
                     values: dict[str, int], path: Path) -> Any:
    """The symbolic ``torch`` level, as ``compile_dynamic`` makes it."""
    try:
        signature = CallSignature.parse(header["signature"])
        parse_tree(header["outputs"])
        examples = [torch.zeros(shape, dtype=dtype)
                    for shape, dtype in zip(inputs.shapes(values), inputs.dtypes, strict=True)]
        module = ExportImporter(program, symbols=symbols).import_program(examples, input_names=header["input_names"])
    except ZigguratError as e:
        raise _corrupt(path, e.message) from None
    except Exception as e:  # noqa: BLE001 - the program is the file's: whatever breaks, it is bad
        raise _corrupt(path, f"its program does not import: {_why(e)}") from None
    fn = forward_function(module)
    fn.attributes[OUTPUTS_ATTR] = StringAttr(header["outputs"])
    set_call_signature(fn, signature)
    return module


def loads(data: bytes, path: Path) -> DynamicCompiledModule:
    """The module ``dumps`` wrote as ``data`` (read from ``path``, which errors name)."""
    header, offset = _read_header(data, path, MAGIC, (FORMAT,))
    _check_versions(header, path)
    _check_header(header, path)
    sections = _sections(data, offset, header, path)
    symbols = _symbols(header, path)
    program = _program(sections, path)
    inputs = _Inputs(program, symbols, header["input_names"], path)
    names = [s.name for s in symbols.symbols]
    built: dict[tuple[int, ...], CompiledModule] = {}
    for i, sizes in enumerate(header["specializations"]):
        if sorted(sizes) != sorted(names) or not all(type(v) is int for v in sizes.values()):
            raise _corrupt(path, f"header.specializations[{i}] is {sizes}, not a size for each of {names}")
        key = tuple(sizes[n] for n in names)
        try:
            shapes = inputs.shapes(sizes)
        except (ValueError, ArithmeticError) as e:
            raise _corrupt(path, f"header.specializations[{i}]: {e}") from None
        if key in built:
            raise _corrupt(path, f"header.specializations[{i}] repeats {sizes}")
        built[key] = _specialization(sections[f"spec-{i}"], sizes, shapes, header["backend"], path, i)
    first = header["specializations"][0] if built else {s.name: s.low for s in symbols.symbols}
    module = _symbolic_module(program, symbols, inputs, header, first, path)
    options = dataclasses.replace(serialization.options_of(header), passes=header.get("passes"))
    try:
        compiled = DynamicCompiledModule(program, symbols, inputs.sympy, options, module, header["model_name"],
                                         header["max_specializations"])
    except ZigguratError as e:
        raise _corrupt(path, e.message) from None
    compiled._specializations.update(built)
    if header.get("range_build") is True:
        compiled.range_build = _range_build(sections[RANGE_SECTION], module, header["backend"], path)
        lows = header.get("range_lows")
        if lows is not None:
            if len(lows) != len(names) or not all(type(v) is int and v >= s.low
                                                  for v, s in zip(lows, symbols.symbols, strict=False)):
                raise _corrupt(path, f"header.range_lows is {lows}, not a size of each of {names} in its range")
            compiled.range_lows = list(lows)
    compiled.report.stats["loaded from"] = str(path)
    return compiled


__all__ = ["MAGIC", "dumps", "loads", "save"]
