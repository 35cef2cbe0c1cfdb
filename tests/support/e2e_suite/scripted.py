"""Programs for TorchScript builtins (numbers, lists, strings, tensor-to-scalar conversions) and
for the ops only scripting records (``aten::conv2d``: tracing records ``aten::_convolution``).

They are scripted with ``torch.jit.script``, so each is a module-level function with type hints.
"""

from __future__ import annotations

from typing import List, Optional  # noqa: UP035 - TorchScript reads these annotations

import torch
import torch.nn.functional as F

from tests.support.e2e_suite.program import Program
from tests.support.e2e_suite.registry import builds, randint, randn


def _script(op: str, fn: object, *inputs: object, **kwargs: object) -> Program:
    return Program(op, fn, tuple(inputs), script=True, **kwargs)  # pyright: ignore[reportArgumentType]


# -- tensor to Python scalar ------------------------------------------------------------------
def bool_of_tensor(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x * bool(t)


def float_of_tensor(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x * float(t)


def int_of_tensor(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x * int(t)


def item_of_tensor(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x + t.item()


def float_implicit(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x * torch.ops.aten.FloatImplicit(t)


def int_implicit(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return x.select(0, torch.ops.aten.IntImplicit(t))


def scalar_implicit(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.leaky_relu(x, torch.ops.aten.ScalarImplicit(t))


@builds("aten::Bool")
def _bool() -> Program:
    return _script("aten::Bool", bool_of_tensor, randn(3, 4), torch.tensor(1))


@builds("aten::Float")
def _float() -> Program:
    return _script("aten::Float", float_of_tensor, randn(3, 4), torch.tensor(0.5))


@builds("aten::Int")
def _int() -> Program:
    return _script("aten::Int", int_of_tensor, randn(3, 4), torch.tensor(3))


@builds("aten::item")
def _item() -> Program:
    return _script("aten::item", item_of_tensor, randn(3, 4), torch.tensor(2.5))


@builds("aten::FloatImplicit")
def _float_implicit() -> Program:
    return _script("aten::FloatImplicit", float_implicit, randn(3, 4), torch.tensor(-0.5))


@builds("aten::IntImplicit")
def _int_implicit() -> Program:
    return _script("aten::IntImplicit", int_implicit, randn(3, 4), torch.tensor(1))


@builds("aten::ScalarImplicit")
def _scalar_implicit() -> Program:
    return _script("aten::ScalarImplicit", scalar_implicit, randn(3, 4), torch.tensor(0.25))


# -- bool/int operators ------------------------------------------------------------------------
def and_or_tensors(x: torch.Tensor, y: torch.Tensor) -> List[torch.Tensor]:
    return [x & y, x | y]


def shift_right(x: torch.Tensor) -> torch.Tensor:
    return x >> 2


def not_of_shape(x: torch.Tensor) -> torch.Tensor:
    if not x.dim() == 3:
        return x + 1
    return x - 1


@builds("aten::__and__")
def _and() -> Program:
    return _script("aten::__and__", and_or_tensors, randint(0, 16, 3, 4), randint(0, 16, 3, 4, seed=1))


@builds("aten::__or__")
def _or() -> Program:
    return _script("aten::__or__", and_or_tensors, randint(0, 16, 3, 4), randint(0, 16, 3, 4, seed=1))


@builds("aten::__rshift__")
def _rshift() -> Program:
    return _script("aten::__rshift__", shift_right, randint(-64, 64, 3, 4))


@builds("aten::__not__")
def _not() -> Program:
    return _script("aten::__not__", not_of_shape, randn(3, 4))


# -- None tests, lists, strings, shapes ---------------------------------------------------------
def is_none(x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    if bias is None:
        return x * 2
    return x + bias


def is_not_none(x: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    if bias is not None:
        return x + bias
    return x * 2


def list_builtins(x: torch.Tensor) -> torch.Tensor:
    dims: List[int] = []
    dims.append(x.size(0))
    dims.append(x.size(1) * 2)
    shape = list(x.size())
    if 8 in dims:
        return x.reshape(shape[1], shape[0]) * len(dims)
    return x


def getitem_of_lists(x: torch.Tensor) -> torch.Tensor:
    shape = x.size()
    parts = x.split(2, 1)
    return parts[shape[0] - 2] * shape[1]


def format_string(x: torch.Tensor) -> torch.Tensor:
    name = "x{}_{}".format(x.dim(), x.size(1))
    if name == "x2_4":
        return x + 1
    return x


def shape_queries(x: torch.Tensor) -> torch.Tensor:
    return x * x.dim() + x.numel() + x.size(-1) + len(x.shape)


def is_floating_point(x: torch.Tensor) -> bool:
    return x.is_floating_point()


@builds("aten::__is__")
def _is() -> Program:
    return _script("aten::__is__", is_none, randn(3, 4))


@builds("aten::__isnot__")
def _isnot() -> Program:
    return _script("aten::__isnot__", is_not_none, randn(3, 4))


@builds("aten::append")
def _append() -> Program:
    return _script("aten::append", list_builtins, randn(3, 4))


@builds("aten::list")
def _list() -> Program:
    return _script("aten::list", list_builtins, randn(3, 4))


@builds("aten::__contains__")
def _contains() -> Program:
    return _script("aten::__contains__", list_builtins, randn(3, 4))


@builds("aten::len")
def _len() -> Program:
    return _script("aten::len", list_builtins, randn(3, 4))


@builds("aten::__getitem__")
def _getitem() -> Program:
    return _script("aten::__getitem__", getitem_of_lists, randn(3, 4))


@builds("aten::format")
def _format() -> Program:
    return _script("aten::format", format_string, randn(3, 4))


@builds("aten::dim")
def _dim() -> Program:
    return _script("aten::dim", shape_queries, randn(3, 4))


@builds("aten::numel")
def _numel() -> Program:
    return _script("aten::numel", shape_queries, randn(3, 4))


@builds("aten::size")
def _size() -> Program:
    return _script("aten::size", shape_queries, randn(3, 4))


@builds("aten::is_floating_point")
def _is_floating_point() -> Program:
    return _script("aten::is_floating_point", is_floating_point, randn(3, 4))


# -- tensors from Python values ------------------------------------------------------------------
def tensor_from_list(x: torch.Tensor) -> torch.Tensor:
    return x + torch.tensor([1.0, 2.0, 3.0, 4.0])


def rsub_scalar(x: torch.Tensor) -> torch.Tensor:
    return torch.rsub(x, 2.0)


@builds("aten::tensor")
def _tensor() -> Program:
    return _script("aten::tensor", tensor_from_list, randn(3, 4))


@builds("aten::rsub")
def _rsub() -> Program:
    return _script("aten::rsub", rsub_scalar, randn(3, 4))


# -- convolutions as scripted code records them -------------------------------------------------
def conv1d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv1d(x, w, b, stride=2, padding=1)


def conv2d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x, w, b, padding=1, groups=2)


def conv3d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv3d(x, w, b, padding=1)


def conv_transpose1d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose1d(x, w, b, stride=2)


def conv_transpose2d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose2d(x, w, b, stride=2, padding=1)


def conv_transpose3d(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.conv_transpose3d(x, w, b, stride=1)


@builds("aten::conv1d")
def _conv1d() -> Program:
    return _script("aten::conv1d", conv1d, randn(1, 4, 9), randn(6, 4, 3, seed=1), randn(6, seed=2))


@builds("aten::conv2d")
def _conv2d() -> Program:
    return _script("aten::conv2d", conv2d, randn(1, 4, 5, 5), randn(6, 2, 3, 3, seed=1), randn(6, seed=2))


@builds("aten::conv3d")
def _conv3d() -> Program:
    return _script("aten::conv3d", conv3d, randn(1, 2, 4, 4, 4), randn(3, 2, 3, 3, 3, seed=1), randn(3, seed=2))


@builds("aten::conv_transpose1d")
def _conv_transpose1d() -> Program:
    return _script("aten::conv_transpose1d", conv_transpose1d, randn(1, 4, 5), randn(4, 3, 3, seed=1),
                   randn(3, seed=2))


@builds("aten::conv_transpose2d")
def _conv_transpose2d() -> Program:
    return _script("aten::conv_transpose2d", conv_transpose2d, randn(1, 4, 4, 4), randn(4, 3, 3, 3, seed=1),
                   randn(3, seed=2))


@builds("aten::conv_transpose3d")
def _conv_transpose3d() -> Program:
    return _script("aten::conv_transpose3d", conv_transpose3d, randn(1, 2, 3, 3, 3), randn(2, 3, 2, 2, 2, seed=1),
                   randn(3, seed=2))


# -- convolution and backward ops whose arguments the tracer cannot record (SymInt lists) ------------
def convolution(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.convolution(x, w, b, [1, 2], [1, 0], [1, 1], False, [0, 0], 1)


def convolution_backward(g: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> List[torch.Tensor]:
    gx, gw, gb = torch.ops.aten.convolution_backward(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                     [True, True, True])
    return [gx, gw, gb]


def group_norm_backward(g: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> List[torch.Tensor]:
    _, mean, rstd = torch.ops.aten.native_group_norm(x, w, None, 2, 4, 6, 2, 1e-5)
    gx, gw, gb = torch.ops.aten.native_group_norm_backward(g, x, mean, rstd, w, 2, 4, 6, 2, [True, True, True])
    return [gx, gw, gb]


@builds("aten::convolution")
def _convolution() -> Program:
    return _script("aten::convolution", convolution, randn(1, 3, 5, 6), randn(4, 3, 3, 3, seed=1), randn(4, seed=2))


@builds("aten::convolution_backward")
def _convolution_backward() -> Program:
    return _script("aten::convolution_backward", convolution_backward, randn(1, 4, 5, 5), randn(1, 3, 5, 5, seed=1),
                   randn(4, 3, 3, 3, seed=2))


@builds("aten::native_group_norm_backward")
def _native_group_norm_backward() -> Program:
    return _script("aten::native_group_norm_backward", group_norm_backward, randn(2, 4, 2, 3, seed=3),
                   randn(2, 4, 2, 3), randn(4, seed=1))
