"""Python classes named in the IR (the containers a model takes and returns).

A class is written by its qualified name, ``transformers.modeling_outputs.BaseModelOutput``,
as a dotted Python name (``<locals>`` of a class defined in a function becomes ``__locals__``).
Reading a name back finds the class this process saw under that name, else imports it: the
longest importable module prefix, then attributes. Only classes are returned, never other
objects, so a saved module cannot name a function to be called.
"""

from __future__ import annotations

import importlib
import weakref

from ziggurat.ir.errors import ZigguratError

_LOCALS = "<locals>"
_LOCALS_NAME = "__locals__"
#: classes seen in this process by name: those defined in a function cannot be imported
_SEEN: weakref.WeakValueDictionary[str, type] = weakref.WeakValueDictionary()


def class_name(cls: type) -> str:
    """The dotted name of ``cls``; remembered so that ``find_class`` returns ``cls`` itself."""
    name = f"{cls.__module__}.{cls.__qualname__}".replace(_LOCALS, _LOCALS_NAME)
    _SEEN[name] = cls
    return name


def _imported(name: str) -> object | None:
    parts = name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 - a module that fails while importing names no class here
            return None
        for attr in parts[split:]:
            found = getattr(found, attr, None)
            if found is None:
                return None
        return found
    return None


def find_class(name: str) -> type:
    """The class written as ``name``; a :class:`ZigguratError` when there is none."""
    seen = _SEEN.get(name)
    if seen is not None:
        return seen
    found = None if _LOCALS_NAME in name else _imported(name)
    if not isinstance(found, type):
        why = ("it was defined inside a function, and this process has not seen it"
               if _LOCALS_NAME in name else "it cannot be imported" if found is None else "that is not a class")
        raise ZigguratError(f"the class {name} cannot be found ({why})", op="structure")
    return found
