"""Inputs as the model takes them: keywords (``example_kwargs=``), defaults, ``*args``/``**kwargs``,
nested containers and constants, bound as Python binds them at every call; each argument must
fit what it was compiled for, or the call is refused naming it."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.ir.call_signature import CallSignature
from ziggurat.ir.errors import InputError, ZigguratError

FRONTENDS = ("export", "torchscript")


class Biased(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None = None, *, scale: float = 1.0,
                pair: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        y = self.lin(x) * scale
        if bias is not None:
            y = y + bias
        if pair is not None:
            y = y * pair[0] - pair[1]
        return {"y": y}


X, B = torch.randn(2, 4), torch.randn(4)


def _eager(*args: Any, **kwargs: Any) -> torch.Tensor:
    torch.manual_seed(0)
    with torch.no_grad():
        return Biased().eval()(*args, **kwargs)["y"]


def _compiled(*args: Any, frontend: str = "export", backend: str = "reference", **kwargs: Any) -> Any:
    torch.manual_seed(0)
    return ziggurat.compile(Biased().eval(), args, backend=backend, frontend=frontend, example_kwargs=kwargs)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_keyword_inputs_are_bound_as_python_binds_them(frontend: str) -> None:
    compiled = _compiled(X, frontend=frontend, bias=B, scale=2.0)
    want = _eager(X, B, scale=2.0)
    for args, kwargs in [((X,), {"bias": B, "scale": 2.0}), ((X, B), {"scale": 2.0}),
                         ((), {"x": X, "bias": B, "scale": 2.0})]:
        torch.testing.assert_close(compiled(*args, **kwargs)["y"], want)
    with pytest.raises(InputError, match="'scale' was 2.0 at compile time and is specialized"):
        compiled(X, bias=B, scale=3.0)
    with pytest.raises(InputError, match="'bias' was given at compile time"):
        compiled(X, scale=2.0)
    with pytest.raises(InputError, match=r"'pair' was not given at compile time.*example_kwargs=\{'pair'"):
        compiled(X, bias=B, scale=2.0, pair=(X, X))
    with pytest.raises(InputError, match="expected 3 input.*unexpected keyword argument 'bais'"):
        compiled(X, bais=B, scale=2.0)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_defaults_left_out_at_compile_time_may_be_passed_as_themselves(frontend: str) -> None:
    compiled = _compiled(X, frontend=frontend)
    torch.testing.assert_close(compiled(X)["y"], _eager(X))
    torch.testing.assert_close(compiled(X, None, scale=1.0, pair=None)["y"], _eager(X))
    with pytest.raises(InputError, match="'bias' was not given at compile time"):
        compiled(X, B)


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_nested_inputs_are_flattened_and_checked(frontend: str) -> None:
    pair = (torch.randn(2, 4), torch.randn(4))
    compiled = _compiled(X, frontend=frontend, pair=pair)
    other = (torch.randn(2, 4), torch.randn(4))
    torch.testing.assert_close(compiled(X, pair=other)["y"], _eager(X, pair=other))
    with pytest.raises(InputError, match=r"argument 'pair' was a tuple at compile time, got a list"):
        compiled(X, pair=list(other))
    with pytest.raises(InputError, match=r"argument 'pair' had 2 items"):
        compiled(X, pair=other + (X,))


class VarArgs(torch.nn.Module):
    def forward(self, x: torch.Tensor, *rest: torch.Tensor, **named: torch.Tensor) -> torch.Tensor:
        for t in rest:
            x = x + t
        for key in sorted(named):
            x = x * named[key]
        return x


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_var_positional_and_var_keyword_inputs(frontend: str) -> None:
    a, b, c, d = (torch.randn(3) for _ in range(4))
    compiled = ziggurat.compile(VarArgs(), (a, b, c), backend="reference", frontend=frontend,
                                example_kwargs={"u": d, "v": a})
    torch.testing.assert_close(compiled(d, c, b, u=a, v=b), VarArgs()(d, c, b, u=a, v=b))
    with pytest.raises(InputError, match=r"argument 'named' had the keys \['u', 'v'\] at compile time"):
        compiled(a, b, c, v=d, u=a)
    with pytest.raises(InputError, match="argument 'rest' had 2 items"):
        compiled(a, b, u=d, v=a)


class Hooked(torch.nn.Module):
    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * scale


def test_the_models_own_hooks_see_its_real_arguments() -> None:
    model = Hooked()
    model.register_forward_pre_hook(lambda m, args: (args[0] + 1, args[1]))
    model.register_forward_hook(lambda m, args, out: out - args[1])
    x, s = torch.randn(3), torch.randn(3)
    for frontend in FRONTENDS:
        compiled = ziggurat.compile(model, (x, s), backend="reference", frontend=frontend)
        torch.testing.assert_close(compiled(x, s), model(x, s))
    assert len(model._forward_pre_hooks) == 1 and len(model._forward_hooks) == 1  # pyright: ignore
    assert "forward" not in model.__dict__


def test_a_forward_set_on_the_instance_is_the_one_that_runs() -> None:
    """As accelerate's hooks do: ``model.forward = wrapper`` (it was refused)."""
    model = Hooked()
    original = model.forward
    model.forward = lambda x, scale: original(x, scale) + 1  # type: ignore[method-assign]
    x, s = torch.randn(3), torch.randn(3)
    for frontend in FRONTENDS:
        compiled = ziggurat.compile(model, (x, s), backend="reference", frontend=frontend)
        torch.testing.assert_close(compiled(x, scale=s), x * s + 1)
    assert model.__dict__["forward"] is not original and model(x, s).equal(x * s + 1)


def test_keywords_survive_save_and_load(tmp_path: Path) -> None:
    compiled = _compiled(X, backend="cpu", bias=B)
    compiled.save(tmp_path / "m.zig")
    loaded = ziggurat.load(tmp_path / "m.zig")
    torch.testing.assert_close(loaded(X, bias=B)["y"], _eager(X, bias=B))
    with pytest.raises(InputError, match="'bias' was given at compile time"):
        loaded(X)


def test_an_exported_program_takes_keywords() -> None:
    torch.manual_seed(0)
    program = torch.export.export(Biased().eval(), (X,), {"bias": B})
    compiled = ziggurat.compile(program, (X,), backend="reference", example_kwargs={"bias": B})
    torch.testing.assert_close(compiled(X, bias=B)["y"], _eager(X, bias=B))
    # as program.module(): the program does not record where a keyword sat among forward's parameters
    with pytest.raises(InputError, match=r"too many positional arguments.*takes \(x: Tensor, \*, bias: Tensor\)"):
        compiled(X, B)


def test_example_inputs_that_do_not_fit_forward_are_a_clear_error() -> None:
    with pytest.raises(ZigguratError, match="do not fit forward.*unexpected keyword argument 'bais'"):
        _compiled(X, bais=B)
    with pytest.raises(ZigguratError, match="keyword example inputs .scale. need a Python nn.Module"):
        traced: Any = torch.jit.trace(Hooked(), (X, B))
        ziggurat.compile(traced.graph, (X,), backend="reference", example_kwargs={"scale": B})
    with pytest.raises(ZigguratError, match="do not fit forward.*(unexpected keyword argument 'scael'|missing a required argument: 'scale')"):
        ziggurat.compile(torch.jit.script(Hooked()), (X,), backend="reference", example_kwargs={"scael": B})


def test_scripted_model_takes_keyword_example_inputs() -> None:
    scripted = torch.jit.script(Hooked())
    compiled = ziggurat.compile(scripted, (X,), backend="reference", example_kwargs={"scale": B})
    torch.testing.assert_close(compiled(X, scale=B), scripted(X, B))
    torch.testing.assert_close(compiled(X, B), scripted(X, B))


def _signature(text: str) -> CallSignature:
    signature = CallSignature.parse(text)
    assert signature.text() == text
    return signature


def test_signature_text_round_trips() -> None:
    def f(a: Any, b: Any = None, /, c: Any = 3, *args: Any, d: Any, e: Any = (1, "x"),
          f: Any = torch.zeros(1), **kw: Any) -> None:
        pass

    t = torch.zeros(1)
    signature = CallSignature.bind(inspect.signature(f), (t, 2, t, t), {"d": {"k": [t]}}, lambda _: 0)
    text = signature.text()
    assert text == "(a: %0, b: 2 = None, /, c: %0 = 3, *args: (%0,), d: {'k': [%0]}, e=(1, 'x'), f=..., **kw)"
    assert _signature(text).text() == text
    assert _signature("(x: %0, *, y: 1.5 = 1.5)").flat_inputs([t], {}) == [t]


@pytest.mark.parametrize("text", ["(x: %0", "(x: os.system(a=1))", "(x=%0)", "(x: %0, x: %1)",
                                  "(x: %0) -> None", "(x: lambda: 1)"])
def test_malformed_signature_text_is_refused(text: str) -> None:
    with pytest.raises(ZigguratError, match="not a call signature|not a structure|cannot be found|flat input"):
        CallSignature.parse(text)
