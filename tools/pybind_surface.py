"""The Python API a pybind11 extension module defines, read from its machine code as data.

    surface = read_surface(Path(".../tensorrt_bindings/tensorrt.so"), BINDERS)
    surface.classes["INetworkDefinition"].methods["add_convolution_nd"][0].params
        -> ('nvinfer1::ITensor', 'int', 'nvinfer1::Dims64', 'nvinfer1::Weights', 'nvinfer1::Weights')

The module is never imported (it needs libraries that are not here).  Its binding functions
call pybind11's registration functions in source order; :func:`call_sites.events` gives each
call with the constant addresses in its argument registers, so a registration reads as:

* a class: ``class_<T>::class_`` / ``generic_type::initialize`` (name, C++ type, bases);
  an enum: ``enum_<E>::enum_``, then ``enum_<E>::value(name, ...)`` per member;
* a method: ``add_class_method(cls, name, cpp_function)`` or an outlined ``class_<T>::def``;
  its ``cpp_function::initialize_generic(record, signature, types, n)`` gives pybind11's own
  signature text (``({%}, {int}, {%}) -> %``) and the ``std::type_info`` of each ``%``; the
  ``arg_v`` objects built for it are its defaulted parameters; its docstring's ``:arg x:``
  lines are its keyword names;
* a property: ``def_property*`` with the getter's and, when writable, the setter's records.

Everything a registration needs lies between the previous registration and itself (in the
binding function or in the outlined pybind11 functions it calls).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ziggurat.tools.call_sites import Address, Call, Event, Load, StackSlot, events, function_events
from ziggurat.tools.cxx_names import demangle, split_top_level, template_arguments
from ziggurat.tools.elf_image import ElfImage

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ARG_LINE = re.compile(r"^\s*:arg\s+(\w+)\s*:", re.MULTILINE)
_INTERNAL = {"_pybind11_conduit_v1_"}
#: how deep outlined pybind11 helpers are searched for the records of one registration
_DEPTH = 3


@dataclass(frozen=True)
class Overload:
    """One pybind11 function record: Python-visible parameters (self excluded)."""

    params: tuple[str, ...]
    returns: str
    #: parameters without a default value (pybind11 defaults are trailing)
    required: int
    #: the docstring's ``:arg`` names (the first ones, for a shorter overload); None when it names too few
    keywords: tuple[str, ...] | None
    signature: str

    def describe(self) -> str:
        names = self.keywords or tuple(f"arg{i}" for i in range(len(self.params)))
        parts = [f"{n}: {t}" + ("" if i < self.required else " = ...") for i, (n, t) in enumerate(zip(names, self.params, strict=True))]
        return f"({', '.join(parts)}) -> {self.returns}"


@dataclass
class Property:
    type: str | None
    writable: bool


@dataclass
class PyClass:
    name: str
    cxx: str
    bases: list[str] = field(default_factory=list[str])
    methods: dict[str, list[Overload]] = field(default_factory=dict[str, list[Overload]])
    properties: dict[str, Property] = field(default_factory=dict[str, Property])
    members: list[str] = field(default_factory=list[str])
    is_enum: bool = False
    #: ``export_values()``: the members are attributes of the enclosing class too
    exported: bool = False


@dataclass
class ApiSurface:
    classes: dict[str, PyClass] = field(default_factory=dict[str, PyClass])
    #: registrations whose name could not be read (address, what)
    unresolved: list[str] = field(default_factory=list[str])
    #: ``py::implicitly_convertible<From, To>``: C++ type To -> the types From
    conversions: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    #: names the package defines in Python besides the extension's classes (``__version__``, ...)
    package_names: set[str] = field(default_factory=set[str])

    def by_cxx(self, cxx: str) -> PyClass | None:
        for c in self.classes.values():
            if c.cxx == cxx:
                return c
        return None

    def lineage(self, name: str) -> list[PyClass]:
        """The class and its bases, nearest first."""
        out: list[PyClass] = []
        todo = [self.classes[name]] if name in self.classes else []
        while todo:
            c = todo.pop(0)
            if c in out:
                continue
            out.append(c)
            todo.extend(b for b in (self.by_cxx(x) for x in c.bases) if b is not None)
        return out

    def methods(self, cls: str, name: str) -> list[Overload]:
        for c in self.lineage(cls):
            if name in c.methods:
                return c.methods[name]
        return []

    def property(self, cls: str, name: str) -> Property | None:
        for c in self.lineage(cls):
            if name in c.properties:
                return c.properties[name]
        return None

    def attribute(self, cls: str, name: str) -> str | None:
        """What ``cls.name`` is besides methods and properties: ``"class:X"`` for a nested class
        or enum, ``"member:E"`` for a member that enum E exports into it; else None."""
        for c in self.lineage(cls):
            for inner in self.classes.values():
                if inner.cxx.rsplit("::", 1)[0] != c.cxx:
                    continue
                if inner.name == name:
                    return f"class:{inner.name}"
                if inner.is_enum and inner.exported and name in inner.members:
                    return f"member:{inner.name}"
        return None

    def python_name(self, cxx: str) -> str:
        """The Python spelling of a C++ type (``nvinfer1::ITensor`` -> ``ITensor``)."""
        c = self.by_cxx(cxx)
        return c.name if c is not None else cxx


@dataclass(frozen=True)
class _Record:
    params: tuple[str, ...]
    returns: str
    signature: str


def _strip_type(cxx: str) -> str:
    cxx = cxx.removeprefix("typeinfo for ").strip()
    cxx = re.sub(r"\bconst\b", "", cxx)
    return cxx.rstrip("&* ").strip()


class _Reader:
    def __init__(self, image: ElfImage) -> None:
        self.image = image
        self._callee_cache: dict[int, list[Event]] = {}
        self._inside_cache: dict[int, list[Event]] = {}
        self._matches: dict[tuple[int, tuple[str, ...]], bool] = {}

    # -- names of things at addresses -------------------------------------------------
    def names(self, address: int) -> list[str]:
        return self.image.names_at.get(address, [])

    def is_call_to(self, call: Call, *patterns: str) -> bool:
        key = (call.target, patterns)
        found = self._matches.get(key)
        if found is None:
            found = self._matches[key] = any(p in n for n in self.names(call.target) for p in patterns)
        return found

    def string(self, value: object) -> str | None:
        """The C string at a constant address, or the one a constant pointer there points to."""
        if not isinstance(value, Address):
            return None
        text = self.image.c_string(value.value)
        if text is None:
            target = self.image.pointers.get(value.value)
            text = self.image.c_string(target) if isinstance(target, int) else None
        return text

    def identifier(self, value: object) -> str | None:
        text = self.string(value)
        return text if text is not None and _IDENTIFIER.match(text) else None

    def callee(self, address: int) -> list[Event]:
        if address not in self._callee_cache:
            sized = [self.image.symbols[n] for n in self.names(address) if self.image.symbols[n][1] > 0]
            self._callee_cache[address] = list(events(self.image, address, sized[0][1])) if sized else []
        return self._callee_cache[address]

    def inside(self, call: Call) -> list[Event]:
        """Events of the called function and the functions it calls, ``_DEPTH`` levels deep."""
        if call.target not in self._inside_cache:
            self._inside_cache[call.target] = self._inside(call)
        return self._inside_cache[call.target]

    def _inside(self, call: Call) -> list[Event]:
        out: list[Event] = []
        frontier = [call.target]
        seen: set[int] = set()
        for _ in range(_DEPTH):
            nxt: list[int] = []
            for target in frontier:
                if target in seen:
                    continue
                seen.add(target)
                for e in self.callee(target):
                    out.append(e)
                    if isinstance(e, Call):
                        nxt.append(e.target)
            frontier = nxt
        return out

    # -- pybind11 function records ----------------------------------------------------
    def record(self, call: Call) -> _Record | None:
        """The record of an ``initialize_generic(rec, text, types, n)`` call."""
        text = self.string(call.arg("rdx"))
        types = call.arg("rcx")
        if text is None or not text.startswith("(") or not isinstance(types, Address):
            return None
        return self._parse_signature(text, types.value)

    def _parse_signature(self, text: str, types_at: int) -> _Record:
        cxx_types: list[str] = []
        for i in range(text.count("%")):
            pointer = self.image.pointers.get(types_at + 8 * i)
            name = self.names(pointer)[0] if isinstance(pointer, int) and self.names(pointer) else str(pointer)
            cxx_types.append(_strip_type(demangle(name)))
        it = iter(cxx_types)

        def resolve(piece: str) -> str:
            piece = piece.strip()
            if piece.startswith("{") and piece.endswith("}"):
                piece = piece[1:-1]
            return re.sub(r"%", lambda _m: next(it, "?"), piece)

        inner, _, ret = text.partition(") -> ")
        params = tuple(resolve(p) for p in split_top_level(inner[1:]))
        return _Record(params, resolve(ret), text)


def _docstring_keywords(doc: str | None) -> list[str]:
    return _ARG_LINE.findall(doc) if doc else []


@dataclass
class _Segment:
    """What the binding code did since the previous registration."""

    events: list[Event] = field(default_factory=list[Event])


class _SurfaceBuilder:
    def __init__(self, image: ElfImage) -> None:
        self.r = _Reader(image)
        self.surface = ApiSurface()
        self.current: PyClass | None = None
        self._defaults: dict[int, int] = {}

    def run(self, binder: str) -> None:
        segment = _Segment()
        for e in function_events(self.r.image, binder):
            segment.events.append(e)
            if isinstance(e, Call) and self._registration(e, segment):
                segment = _Segment()

    # -- dispatch -----------------------------------------------------------------------
    def _registration(self, call: Call, seg: _Segment) -> bool:
        r = self.r
        if r.is_call_to(call, "generic_type10initialize"):
            self._class_from_record(call, seg)
        elif r.is_call_to(call, "5enum_I") and r.is_call_to(call, "EEC2", "EEC1"):
            self._new_class(call, is_enum=True)
        elif r.is_call_to(call, "6class_I") and r.is_call_to(call, "EEC2", "EEC1"):
            self._new_class(call, is_enum=False)
        elif (r.is_call_to(call, "5enum_I") and r.is_call_to(call, "E5valueEPKc")) or r.is_call_to(call, "enum_base5valueEPKc"):
            name = r.identifier(call.arg("rsi"))
            if self.current is not None and name is not None:
                self.current.members.append(name)
            else:
                self.surface.unresolved.append(f"{call.at:#x}: enum member")
        elif r.is_call_to(call, "enum_base13export_values"):
            if self.current is not None and self.current.is_enum:
                self.current.exported = True
        elif r.is_call_to(call, "16add_class_method"):
            self._method(call, seg, r.identifier(call.arg("rsi")))
        elif r.is_call_to(call, "E3defI", "E10def_staticI"):
            self._method(call, seg, self._name(call))
        elif r.is_call_to(call, "def_property", "def_readwrite", "def_readonly"):
            self._property(call, seg)
        elif r.is_call_to(call, "22implicitly_convertibleI"):
            args = template_arguments(demangle(r.names(call.target)[0]), "pybind11::implicitly_convertible")
            if len(args) == 2:
                self.surface.conversions.setdefault(_strip_type(args[1]), []).append(_strip_type(args[0]))
        else:
            return False
        return True

    def _name(self, call: Call) -> str | None:
        """The registered name: in ``rsi``, or a constant of the (constprop) function called."""
        name = self.r.identifier(call.arg("rsi"))
        if name is not None:
            return name
        found = [s for e in self.r.callee(call.target) if isinstance(e, Load)
                 for s in [self.r.identifier(Address(e.address))] if s is not None and s not in _INTERNAL]
        return found[0] if len(set(found)) == 1 else None

    # -- classes --------------------------------------------------------------------------
    def _add_class(self, name: str, cxx: str, bases: list[str], is_enum: bool) -> None:
        cls = self.surface.classes.get(name) or PyClass(name, cxx, bases, is_enum=is_enum)
        self.surface.classes[name] = cls
        self.current = cls

    def _new_class(self, call: Call, *, is_enum: bool) -> None:
        names = [demangle(n) for n in self.r.names(call.target)]
        template = "pybind11::enum_" if is_enum else "pybind11::class_"
        args = next((template_arguments(n, template) for n in names if template_arguments(n, template)), [])
        name = self.r.identifier(call.arg("rdx"))
        if name is None:
            found = [s for e in self.r.callee(call.target) if isinstance(e, Load)
                     for s in [self.r.identifier(Address(e.address))] if s is not None and s not in _INTERNAL]
            name = found[0] if found else None
        if not args or name is None:
            self.surface.unresolved.append(f"{call.at:#x}: {'enum' if is_enum else 'class'}")
            self.current = None
            return
        bases = [a for a in args[1:] if a.startswith("nvinfer1::") or a.startswith("nvonnxparser::")]
        self._add_class(name, _strip_type(args[0]), bases, is_enum)

    def _class_from_record(self, call: Call, seg: _Segment) -> None:
        record = call.arg("rsi")
        name = self.r.identifier(call.slot(record, 8))
        type_info = call.slot(record, 16)
        cxx = self.r.names(type_info.value) if isinstance(type_info, Address) else []
        if name is None or not cxx:
            self.surface.unresolved.append(f"{call.at:#x}: class")
            self.current = None
            return
        bases = [
            _strip_type(demangle(n))
            for e in seg.events if isinstance(e, Call) and self.r.is_call_to(e, "type_record8add_base")
            for v in [e.arg("rsi")] if isinstance(v, Address) for n in self.r.names(v.value)[:1]
        ]
        self._add_class(name, _strip_type(demangle(cxx[0])), bases, is_enum=False)

    # -- functions ------------------------------------------------------------------------
    def _records_and_doc(self, call: Call, seg: _Segment) -> tuple[list[_Record], str | None, int]:
        """Function records, docstring and number of defaulted parameters of one registration."""
        found: list[Event] = []
        for e in seg.events:
            found.append(e)
            if isinstance(e, Call) and e is not call:
                found.extend(self.r.inside(e))
        found.extend(self.r.inside(call))
        records = [rec for e in found if isinstance(e, Call) and self.r.is_call_to(e, "18initialize_generic")
                   for rec in [self.r.record(e)] if rec is not None]
        docs = [s for e in seg.events + self.r.callee(call.target) if isinstance(e, Load)
                for s in [self.r.string(Address(e.address))] if s is not None and ":arg " in s]
        built = sum(1 for e in seg.events if isinstance(e, Call) and self.r.is_call_to(e, "5arg_vC"))
        processed = sum(self._processed_defaults(e) for e in found if isinstance(e, Call))
        return records, (docs[-1] if docs else None), max(built, processed)

    def _processed_defaults(self, call: Call) -> int:
        """How many ``arg_v`` (defaulted parameters) a ``process_attribute(s)`` call registers."""
        if call.target not in self._defaults:
            self._defaults[call.target] = self._count_defaults(call)
        return self._defaults[call.target]

    def _count_defaults(self, call: Call) -> int:
        if self.r.is_call_to(call, "17process_attributeINS_5arg_vE"):
            return 1
        if self.r.is_call_to(call, "18process_attributesI"):
            args = template_arguments(demangle(self.r.names(call.target)[0]), "pybind11::detail::process_attributes")
            return args.count("pybind11::arg_v")
        return 0

    def _owner(self, record: _Record | None) -> PyClass | None:
        """The class a method belongs to: the one being defined, unless its self type says otherwise."""
        current = self.current
        if record is None or not record.params:
            return current
        own = self.surface.by_cxx(record.params[0])
        if own is None or current is None or own is current:
            return current if current is not None else own
        if current.is_enum or own not in self.surface.lineage(current.name):
            return own
        return current

    def _method(self, call: Call, seg: _Segment, name: str | None) -> None:
        if name in _INTERNAL:
            return
        records, doc, defaults = self._records_and_doc(call, seg)
        if name is None or not records:
            self.surface.unresolved.append(f"{call.at:#x}: method {name or '?'}")
            return
        record = records[-1]
        owner = self._owner(record)
        if owner is None:
            self.surface.unresolved.append(f"{call.at:#x}: method {name} outside a class")
            return
        params = record.params[1:]  # self (or the value_and_holder of __init__)
        keywords = _docstring_keywords(doc)
        overload = Overload(
            params=params,
            returns=record.returns,
            required=max(0, len(params) - defaults),
            # overloads share one docstring, which lists the longest one's parameters
            keywords=tuple(keywords[:len(params)]) if len(keywords) >= len(params) else None,
            signature=record.signature,
        )
        owner.methods.setdefault(name, []).append(overload)

    def _property(self, call: Call, seg: _Segment) -> None:
        name = self._name(call)
        records, _, _ = self._records_and_doc(call, seg)
        readonly = self.r.is_call_to(call, "def_property_readonly", "def_readonly")
        getter = next((rec for rec in records if len(rec.params) == 1), None)
        setter = next((rec for rec in records if len(rec.params) == 2), None)  # C++ setters may return bool
        owner = self._owner(getter)
        if name is None or owner is None:
            self.surface.unresolved.append(f"{call.at:#x}: property {name or '?'}")
            return
        value_type = setter.params[1] if setter is not None else getter.returns if getter is not None else None
        owner.properties[name] = Property(value_type, writable=setter is not None and not readonly)


def read_surface(path: Path, binders: list[str]) -> ApiSurface:
    """The classes, methods, properties and enums that ``binders`` (mangled names of the
    module's binding functions) register, in the extension module at ``path``."""
    builder = _SurfaceBuilder(ElfImage.read(path))
    for binder in binders:
        builder.current = None
        builder.run(binder)
    return builder.surface


__all__ = ["ApiSurface", "Overload", "Property", "PyClass", "StackSlot", "read_surface"]
