"""``--dim-ranges`` specs (``ziggurat.ir.dim_ranges``) and the symbolic TorchScript import."""

from __future__ import annotations

import pytest
import torch

from ziggurat.ir.dim_ranges import bind_dims, parse_ranges
from ziggurat.ir.errors import ZigguratError
from ziggurat.ir.importer.torchscript_symbolic import import_torchscript_symbolic
from ziggurat.ir.interpreter import run
from ziggurat.ir.types import parse_type_list

TYPES = parse_type_list("tensor<?x?x4xf32>,tensor<?x?x4xf32>,tensor<3xf32>")
NAMES = ["x", "m", "s"]


def test_one_symbol_binds_every_question_mark() -> None:
    symbols = bind_dims(TYPES, NAMES, "batch=1:64")
    assert [(d.input, d.dim, d.expr) for d in symbols.dims] == [(0, 0, "batch"), (0, 1, "batch"),
                                                               (1, 0, "batch"), (1, 1, "batch")]
    assert symbols.symbols[0].high == 64


def test_bindings_by_name_and_position_with_a_derived_dim() -> None:
    symbols = bind_dims(TYPES, NAMES, "b=1:8, s=2:, x.0=b, 0.1=s, m.0=b, 1.1=2*s")
    assert [d.expr for d in symbols.dims] == ["b", "s", "b", "2*s"]
    assert symbols.symbol("s").high is None
    assert symbols.bind([[3, 5, 4], [3, 10, 4], [3]]) == {"b": 3, "s": 5}


@pytest.mark.parametrize(("spec", "message"), [
    ("batch=9:8", "'batch=9:8': the range is empty"),
    ("batch", "'batch' is neither NAME=MIN:MAX nor INPUT.DIM=NAME"),
    ("x.0=b", "declares no symbol"),
    ("b=1:2,b=1:3", "b is declared twice"),
    ("a=1:2,b=1:2,c=1:2", "3 symbols for 4 ? input dims: bind them with INPUT.DIM=NAME"),
    ("b=1:8,x.2=b", "input 0 ('x') dim 2 is not a ? size of tensor<?x?x4xf32>"),
    ("b=1:8,y.0=b", "there is no input 'y'"),
    ("b=1:8,x.0=b,x.1=b,m.0=b", "input 1 ('m') dim 1 is ? but bound to no symbol"),
    ("b=1:8,s=1:8,x.0=b,x.1=b,m.0=b,m.1=b", "symbol 's' is bound to no input dim"),
    ("b=1:8,s=1:8,x.0=b,x.1=2*s,m.0=b,m.1=b", "symbol 's' appears only in expressions"),
    ("b=1:8,x.0=b,x.1=b+,m.0=b,m.1=b", "x.1=b+"),
])
def test_mistakes_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(ZigguratError, match=message.replace("?", r"\?").replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("+", r"\+")):
        bind_dims(TYPES, NAMES, spec)


def test_parse_ranges_keeps_the_order() -> None:
    symbols, bindings = parse_ranges("seq=2:384,batch=1:8,x.1=seq")
    assert [s.name for s in symbols] == ["seq", "batch"] and bindings == [("x", 1, "seq")]


def test_a_scripted_function_imported_symbolically_runs_at_every_size() -> None:
    """The symbolic level of a ScriptFunction, run by the reference interpreter at sizes
    across the range, matches the function itself."""

    @torch.jit.script
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.cat([x, y * 2.0], 1)
        return z.reshape(z.shape[0], -1).softmax(-1)

    module = import_torchscript_symbolic(f, parse_type_list("tensor<?x3x4xf32>,tensor<?x?x4xf32>"),
                                         "b=1:16,s=2:9,x.0=b,y.0=b,y.1=s")
    for b, s in ((1, 2), (7, 5), (16, 9)):
        x, y = torch.randn(b, 3, 4), torch.randn(b, s, 4)
        torch.testing.assert_close(run(module, [x, y])[0], f(x, y))
