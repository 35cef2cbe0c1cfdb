"""``torch.tensor(...)`` of values known at compile time (a list of numbers, a size such as
``x.shape[0]``) inside a model compiles natively on the cpu backend, whether the model is
exported (a lifted constant), traced (a constant) or scripted (the importer folds it into a
constant; an ``aten::tensor`` op left in the graph is a literal of the cpu lowering); results
equal eager bit for bit."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from tests.cpu_backend.conftest import compile_cpu
from ziggurat.ir.errors import ZigguratError


class ListScale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tensor([1.0, -2.0, 3.5, 0.25, 7.0]) * x


class Sizes(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = torch.tensor(x.shape[0])
        return x / n - n * torch.tensor(x.size(1))


class SizeTyped(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.tensor(x.size(1), dtype=torch.float32)


class SizeList(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        both = torch.tensor([x.shape[0], x.shape[1]])
        return x - both[1] * both[0]


class Ints(torch.nn.Module):
    def forward(self, i: torch.Tensor) -> torch.Tensor:
        return (i * torch.tensor([[3, -1, 2], [0, 5, -7]]) + torch.tensor(4)) * torch.tensor(True)


class Typed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - torch.tensor([1, 2, 3, 4, 5], dtype=torch.float32) + torch.tensor(2.5)


class Large(torch.nn.Module):
    """25 elements: over the per-element limit, a weight."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.tensor([[0.5, 1.0, -1.5, 2.0, 3.0], [4.0, -5.0, 6.0, 7.5, 8.0], [9.0, 10.0, -11.0, 12.0, 13.0],
                          [14.0, 15.0, 16.0, -17.0, 18.0], [19.0, 20.0, 21.0, 22.0, -23.5]])
        return x * w[1:4] + w[0]


X = torch.randn(3, 5, generator=torch.Generator().manual_seed(2))
I = torch.randint(-9, 9, (2, 3), generator=torch.Generator().manual_seed(3))
CASES: dict[str, tuple[type[torch.nn.Module], torch.Tensor]] = {
    "list_scale": (ListScale, X), "sizes": (Sizes, X), "size_typed": (SizeTyped, X), "size_list": (SizeList, X),
    "ints": (Ints, I), "typed": (Typed, X), "large": (Large, X)}
#: (scripted ``torch.tensor(x.size(1), dtype=torch.float32)`` passes TorchScript's ScalarType
#: code, an int, for the dtype: the importer decodes it)


def _model(cls: type[torch.nn.Module], how: str) -> Any:
    return torch.jit.script(cls()) if how == "script" else cls()


@pytest.mark.parametrize("case, how", [(c, h) for c in sorted(CASES) for h in ("export", "torchscript", "script")])
def test_tensor_of_constants_is_native(case: str, how: str) -> None:
    cls, x = CASES[case]
    model = _model(cls, how)
    options: dict[str, Any] = {} if how == "script" else {"frontend": how}
    compiled = compile_cpu(model, (x,), fallback=False, **options)  # a fallback would raise here
    assert compiled.report.fallback_ops == {}
    want = cls()(x)
    got = compiled(x)
    assert got.dtype == want.dtype and torch.equal(got, want), (got, want)


class FromData(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.tensor([x.sum().item(), 1.0])


@pytest.mark.parametrize("how", ["export", "torchscript", "script"])
def test_tensor_of_runtime_data_is_never_a_literal(how: str) -> None:
    """A list holding a number computed from tensor data is no constant: the compile is refused,
    or the compiled module follows the data (never the example's value baked in)."""
    x = torch.randn(4, 2, generator=torch.Generator().manual_seed(5))
    options: dict[str, Any] = {} if how == "script" else {"frontend": how}
    try:
        compiled = compile_cpu(_model(FromData, how), (x,), **options)
    except ZigguratError:
        return
    for t in (x, 3 * x + 1):
        torch.testing.assert_close(compiled(t), FromData()(t))
