"""Loading saved object code (``CompiledModule.save`` / ``ziggurat.load`` of a cpu module).

The payload is an 8-byte header length, a JSON header (the ISA, host CPU name and LLVM
feature string the code was compiled for) and the ELF object.  Code compiled for another
CPU or feature set is refused rather than run (it could use instructions this host lacks).
"""

from __future__ import annotations

import json
import struct

from ziggurat.backends.cpu.isa import feature_string, host_cpu_name, parse_isa
from ziggurat.backends.cpu.jit import JitLibrary
from ziggurat.ir.errors import ZigguratError


def load_object_code(payload: bytes) -> JitLibrary:
    if len(payload) < 8:
        raise ZigguratError("the saved cpu executable is truncated", op="load")
    (n,) = struct.unpack_from("<Q", payload)
    try:
        header = json.loads(payload[8:8 + n])
        isa = parse_isa(str(header["isa"]))
    except (ValueError, KeyError) as e:  # an IsaError (unknown ISA) is a ValueError
        raise ZigguratError(f"the saved cpu executable cannot run here: {e}", op="load") from None
    if header.get("cpu") != host_cpu_name() or header.get("features") != feature_string(isa):
        raise ZigguratError(
            f"the saved code was compiled for CPU '{header.get('cpu')}' with other features than this host "
            f"('{host_cpu_name()}'); compile the model again here", op="load")
    # jit.py loads object code only inside compile_ir; its loader is reused as is.
    from ziggurat.backends.cpu.jit import load_object

    engine = load_object(payload[8 + n:], isa)
    return JitLibrary(engine, isa, key="", from_cache=True)
