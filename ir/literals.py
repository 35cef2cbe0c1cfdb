"""Tensor constants as attributes: small ones inline (``dense<...>``), weights as blobs."""

from __future__ import annotations

import numpy as np
import torch
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    TensorType,
)
from xdsl.ir import Attribute

from ziggurat.ir.resources import resource_attr, resource_tensor
from ziggurat.ir.types import QUANTIZED_DTYPES, UnsupportedTypeError, dtype_of, shape_of, tensor_type_of

#: Constants with at most this many elements print inline, so IR tests can read them.
INLINE_LIMIT = 16

_BYTES_DTYPES = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.bool: torch.uint8}
#: dtypes whose small constants print inline (``dense<...>``); the others (half floats, complex,
#: float8) are always blobs, which hold their bytes exactly.
_INLINE_DTYPES = frozenset({torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8,
                            torch.uint8, torch.bool})


def literal_attr(value: torch.Tensor, name_hint: str,
                 borrow: bool = False, given: bool = False) -> DenseIntOrFPElementsAttr | DenseResourceAttr:
    """The attribute of a tensor constant: inline when small, a ``dense_resource`` blob else.
    A quantized tensor has none (its scale and zero point are not bytes of the tensor): the
    importers build it from its integers (``ziggurat.ir.importer.literal_pool``).  ``borrow``:
    the model's own tensor, which a compile may hold uncopied for a while (``add_tensor``);
    ``given``: a tensor made for this literal alone, stored without a copy."""
    value = value.detach().to("cpu")
    if value.dtype in QUANTIZED_DTYPES:
        raise UnsupportedTypeError(f"a {str(value.dtype).removeprefix('torch.')} tensor has no literal form")
    if value.numel() <= INLINE_LIMIT and value.dtype in _INLINE_DTYPES:
        ty = tensor_type_of(value)
        flat = value.reshape(-1)
        if value.dtype.is_floating_point:
            return DenseIntOrFPElementsAttr.from_list(ty, [float(v) for v in flat.tolist()])  # pyright: ignore
        return DenseIntOrFPElementsAttr.from_list(ty, [int(v) for v in flat.tolist()])  # pyright: ignore
    return resource_attr(value, name_hint, borrow, given)


def literal_tensor(attr: Attribute) -> torch.Tensor:
    """The tensor a literal attribute holds."""
    if isinstance(attr, DenseResourceAttr):
        return resource_tensor(attr)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        ty = attr.get_type()
        assert isinstance(ty, TensorType)
        dtype = dtype_of(ty)
        shape = shape_of(ty)
        values = attr.get_values()  # pyright: ignore[reportUnknownMemberType]
        if dtype.is_complex:  # (real, imaginary) pairs
            pairs: list[tuple[float, float]] = list(values)  # pyright: ignore
            result = torch.tensor([complex(re, im) for re, im in pairs], dtype=torch.complex128)
        else:
            result = torch.tensor(list(values), dtype=torch.float64 if dtype.is_floating_point else torch.int64)  # pyright: ignore
        n = int(np.prod(shape)) if shape else 1
        if result.numel() == 1 and n != 1:  # splat
            result = result.expand(n)
        return result.to(dtype).reshape(shape)
    raise TypeError(f"not a tensor literal attribute: {attr}")
