"""The core on xDSL: context, types, locations, importers, reference interpreter.

Importing any of it makes every xDSL parser of the process read a hexadecimal element of a
float ``dense<...>`` literal as a bit pattern, as MLIR does (``hex_float_literals.py``).
"""

from ziggurat.ir.hex_float_literals import install as _read_hex_floats_as_bits

_read_hex_floats_as_bits()
