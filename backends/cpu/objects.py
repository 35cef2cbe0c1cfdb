"""Loading saved object code (``CompiledModule.save`` / ``ziggurat.load`` of a cpu module).

The payload is an 8-byte header length, a JSON header (the ISA, host CPU name and LLVM
feature string the code was compiled for) and the ELF object.  Code compiled for another
CPU or feature set is refused rather than run (it could use instructions this host lacks);
the object itself is checked (``elf_object.parse_object``) before LLVM loads it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ziggurat.backends.cpu.isa import Isa, feature_string, host_cpu_name, parse_isa
from ziggurat.backends.cpu.jit import JitError, JitLibrary, load_object
from ziggurat.backends.serialization import LoadError


@dataclass(frozen=True)
class SavedObjectCode:
    """The object code of a saved cpu module and the ISA it was compiled for."""

    isa: Isa
    obj: bytes

    def load(self, entry_symbols: Sequence[str] = ()) -> JitLibrary:
        """Into this process; ``entry_symbols``: the functions the executable will call."""
        try:
            engine = load_object(self.obj, self.isa, entry_symbols)
        except JitError as e:
            raise LoadError(f"the saved cpu executable cannot be loaded: {e}", op="load") from None
        return JitLibrary(engine, self.isa, key="", from_cache=True)


def read_object_code(payload: bytes) -> SavedObjectCode:
    if len(payload) < 8:
        raise LoadError("the saved cpu executable is truncated", op="load")
    (n,) = struct.unpack_from("<Q", payload)
    try:
        header = json.loads(payload[8:8 + n])
    except ValueError:  # JSON and UTF-8 errors
        raise LoadError("the saved cpu executable has an unreadable header", op="load") from None
    if not isinstance(header, dict) or not all(
            isinstance(header.get(k), str) for k in ("isa", "cpu", "features")):  # pyright: ignore
        raise LoadError("the saved cpu executable's header lacks isa/cpu/features", op="load")
    try:
        isa = parse_isa(header["isa"])  # pyright: ignore[reportUnknownArgumentType]
    except ValueError as e:  # an IsaError (unknown ISA) is a ValueError
        raise LoadError(f"the saved cpu executable cannot run here: {e}", op="load") from None
    if header["cpu"] != host_cpu_name() or header["features"] != feature_string(isa):
        raise LoadError(
            f"the saved code was compiled for CPU '{header['cpu']}' with other features than this host "
            f"('{host_cpu_name()}'); compile the model again here", op="load")
    return SavedObjectCode(isa, payload[8 + n:])

