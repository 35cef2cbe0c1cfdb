"""Outputs of any pytree shape: the compiled module returns what the model returns (same types,
keys, fields and constants), on both frontends, after save/load too; what cannot be rebuilt is a
clear error naming where it is in the output."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import torch

import ziggurat
from tests.support.pytrees import assert_same_tree
from ziggurat.ir.errors import ModelImportError, ZigguratError
from ziggurat.ir.structure import (Const, Container, Leaf, build, describe, format_tree, parse_tree,
                                   tensor_leaves)

FRONTENDS = ("export", "torchscript")


class Pair(NamedTuple):
    first: torch.Tensor
    second: Any


@dataclasses.dataclass
class Result:
    logits: torch.Tensor
    extra: list[Any]
    label: str = "x"


@dataclasses.dataclass(frozen=True)
class Doubled:
    """__post_init__ changes a field: rebuilding must not run it a second time."""

    value: torch.Tensor

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", self.value * 2)


class Layer:
    def __init__(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.keys, self.values, self.device, self.ready = keys, values, keys.device, True


class Cache:
    """A plain object holding tensors, as a Hugging Face DynamicCache does."""

    def __init__(self, layers: list[Layer]) -> None:
        self.layers, self.offloading = layers, False


class Outputs(torch.nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> Any:
        y = self.lin(x)
        z = y.relu()
        return {
            "dict": lambda: {"y": y, "z": z, "none": None, "n": 3},
            "nested": lambda: [(y, None), [z, (y + 1,)], 2.5, "s"],
            "namedtuple": lambda: Pair(y, (z, None)),
            "ordered": lambda: collections.OrderedDict([("b", z), ("a", y)]),
            "dataclass": lambda: Result(y, [z, None]),
            "post_init": lambda: Doubled(y),
            "object": lambda: Cache([Layer(y, z)]),
            "constants": lambda: (y, x.shape, x.dtype, x.device, float("inf"), -0.5, True),
            "int_keys": lambda: {0: y, 1: {"deep": [z]}},
        }[self.kind]()


@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize("kind", ["dict", "nested", "namedtuple", "ordered", "dataclass", "post_init",
                                  "object", "constants", "int_keys"])
def test_output_structure_matches_eager(kind: str, frontend: str) -> None:
    torch.manual_seed(0)
    model, x = Outputs(kind).eval(), torch.randn(2, 4)
    compiled = ziggurat.compile(model, (x,), backend="reference", frontend=frontend)
    with torch.no_grad():
        assert_same_tree(compiled(x), model(x))


def test_output_structure_survives_save_and_load(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, x = Outputs("object").eval(), torch.randn(2, 4)
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    compiled.save(tmp_path / "m.zig")
    loaded = ziggurat.load(tmp_path / "m.zig")
    with torch.no_grad():
        assert_same_tree(loaded(x), model(x))
    assert "test_output_structures.Cache(layers=[" in compiled.ir["torch"]


def test_a_class_defined_in_a_function_rebuilds_in_this_process() -> None:
    class Local(NamedTuple):
        a: torch.Tensor
        b: torch.Tensor

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> Local:
            return Local(x + 1, x * 2)

    x = torch.randn(3)
    out = ziggurat.compile(Model(), (x,), backend="reference")(x)
    assert type(out) is Local
    assert_same_tree(out, Model()(x))


class _Slots:
    __slots__ = ("t",)

    def __init__(self, t: torch.Tensor) -> None:
        self.t = t


class _Reduced:
    def __init__(self, t: torch.Tensor) -> None:
        self.t = t

    def __reduce__(self) -> Any:
        return (_Reduced, (self.t,))


@pytest.mark.parametrize("frontend", FRONTENDS)
@pytest.mark.parametrize("make, where", [
    (lambda y: {"a": [y, _Slots(y)]}, r"output\['a'\]\[1\]"),
    (lambda y: (y, _Reduced(y)), r"output\[1\]"),
    (lambda y: {(1, 2): y}, "keys must be"),
])
def test_an_output_that_cannot_be_rebuilt_is_a_clear_error(make: Any, where: str, frontend: str) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> Any:
            return make(x + 1)

    with pytest.raises(ZigguratError, match=where):
        ziggurat.compile(Model(), (torch.randn(3),), backend="reference", frontend=frontend)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_a_number_computed_from_values_is_refused(frontend: str) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> Any:
            return x + 1, x.sum().item()

    with pytest.raises(ModelImportError, match="Python number"):
        ziggurat.compile(Model(), (torch.randn(3),), backend="reference", frontend=frontend)


# -- the structure text -----------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    {"a": 1, "b": [None, (2.5, "%1 in a string", b"\x00")], 7: -3},
    (float("nan"), float("-inf"), complex(1.5, float("inf")), torch.float16, torch.device("cpu")),
    Pair(1, Result(2, [3])),
    collections.OrderedDict([("x y", 1), ("z", 2)]),
    torch.Size([2, 3]),
    [],
    (),
])
def test_structure_text_round_trips(value: Any) -> None:
    node = describe(value, lambda t: 0)
    text = format_tree(node)
    assert parse_tree(text) == node, text
    assert_same_tree(build(parse_tree(text), []), value)


def test_structure_text_of_leaves_and_containers() -> None:
    t = [torch.zeros(1), torch.ones(1)]
    node = describe({"a": Pair(t[0], [t[1], None])}, lambda x: next(i for i, y in enumerate(t) if y is x))
    assert format_tree(node) == "{'a': test_output_structures.Pair(first=%0, second=[%1, None])}"
    assert node == Container("dict", (Container("namedtuple", (Leaf(0), Container("list", (Leaf(1), Const(None)))),
                                                ("first", "second"), Pair),), ("a",))
    assert tensor_leaves({"a": (t[1], 2, [t[0]])}) == [t[1], t[0]]


@pytest.mark.parametrize("text, why", [
    ("os.system(command=%0)", "os.system cannot be found .that is not a class"),
    ("collections.abc.Callable(a=%0)", "not a container class"),
    ("no.such.module.Thing(a=%0)", "cannot be imported"),
    ("(%0, __import__('os'))", "__import__ cannot be found"),
    ("{**x}", "not a structure"),
    ("[%0 + 1]", "not a structure"),
    ("test_output_structures.Pair(second=%1, first=%0)", "fields"),
    ("torch.Size(%0)", "takes one list"),
    ("(%0,", "not a structure"),
])
def test_malformed_structure_text_is_refused(text: str, why: str) -> None:
    with pytest.raises(ZigguratError, match=why):
        parse_tree(text)


class ScriptedDict(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"a": x + 1, "b": x.relu()}


def test_a_scripted_module_returning_a_dict() -> None:
    """prim::DictConstruct (it had no import: 'has no operator schema')."""
    x = torch.randn(5)
    compiled = ziggurat.compile(torch.jit.script(ScriptedDict()), (x,), backend="cpu")
    assert_same_tree(compiled(x), ScriptedDict()(x))
