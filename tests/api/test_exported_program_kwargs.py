"""Keyword inputs at call time for a module compiled from an ``ExportedProgram`` and for a model
compiled through either frontend with ``example_kwargs=``: bound as ``program.module()`` (or the
model's ``forward``) binds them, checked, in any order, after save/load too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import ModelImportError, InputError

BACKENDS = ("reference", "cpu")


class Gated(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(5, 5)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None, *, mask: torch.Tensor | None = None,
                pair: tuple[torch.Tensor, torch.Tensor] | None = None, scale: float = 1.0) -> torch.Tensor:
        out = self.lin(x) * scale
        if y is not None:
            out = out + 2 * y
        if mask is not None:
            out = out * mask
        if pair is not None:
            out = out * pair[0] - pair[1]
        return out


def _inputs() -> tuple[torch.Tensor, dict[str, Any]]:
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 5, generator=g)
    # y and mask have one shape: binding one in the other's place would go unnoticed by shape checks
    kwargs = {"y": torch.randn(3, 5, generator=g), "mask": torch.rand(3, 5, generator=g),
              "pair": (torch.randn(3, 5, generator=g), torch.randn(5, generator=g)), "scale": 1.5}
    return x, kwargs


def _model() -> Gated:
    torch.manual_seed(0)
    return Gated().eval()


def _program() -> Any:
    x, kwargs = _inputs()
    return torch.export.export(_model(), (x,), kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_exported_program_takes_keywords_in_any_order(backend: str) -> None:
    x, kwargs = _inputs()
    want = _model()(x, **kwargs)
    program = _program()
    reordered = dict(reversed(list(kwargs.items())))  # the example keywords in another order than exported
    compiled = ziggurat.compile(program, (x,), backend=backend, example_kwargs=reordered)
    y, mask, pair, scale = kwargs["y"], kwargs["mask"], kwargs["pair"], kwargs["scale"]
    calls = [((x,), kwargs), ((x,), reordered), ((x,), {"scale": scale, "pair": pair, "mask": mask, "y": y}),
             ((), {"x": x, **kwargs})]
    for args, kw in calls:
        torch.testing.assert_close(compiled(*args, **kw), want)
        if args:  # torch's module takes them the same way (and its positional inputs by position only)
            torch.testing.assert_close(program.module()(*args, **kw), want)
    # a keyword input by position: where it sat among forward's parameters is not in the program
    # (y, mask and pair[0] have one shape), so it is refused, as program.module() refuses it
    with pytest.raises(InputError, match="too many positional arguments"):
        compiled(x, y, mask=mask, pair=pair, scale=scale)
    with pytest.raises(ValueError, match="kwarg keyword mismatch"):
        program.module()(x, y, mask=mask, pair=pair, scale=scale)


def test_exported_program_checks_each_keyword() -> None:
    x, kwargs = _inputs()
    compiled = ziggurat.compile(_program(), (x,), backend="reference", example_kwargs=kwargs)
    with pytest.raises(InputError, match="'scale' was 1.5 at compile time"):
        compiled(x, **{**kwargs, "scale": 2.0})
    with pytest.raises(InputError, match="missing a required argument: 'mask'"):
        compiled(x, **{k: v for k, v in kwargs.items() if k != "mask"})
    with pytest.raises(InputError, match="unexpected keyword argument 'bias'"):
        compiled(x, **kwargs, bias=x)
    with pytest.raises(InputError, match=r"'pair' was a tuple at compile time, got a list"):
        compiled(x, **{**kwargs, "pair": list(kwargs["pair"])})


def test_exported_program_needs_the_keywords_it_was_exported_with() -> None:
    x, kwargs = _inputs()
    program = _program()
    with pytest.raises(ModelImportError, match="keyword input.s. y, mask, pair, scale, got 1 positional and no "
                                           "keyword input; pass the keywords as example_kwargs"):
        ziggurat.compile(program, (x,), backend="reference")
    with pytest.raises(ModelImportError, match="got 1 positional and y, mask"):
        ziggurat.compile(program, (x,), backend="reference", example_kwargs={"y": kwargs["y"], "mask": kwargs["mask"]})
    swapped = {**kwargs, "pair": {"a": kwargs["pair"][0], "b": kwargs["pair"][1]}}
    with pytest.raises(ModelImportError, match="the example inputs have the structure"):
        ziggurat.compile(program, (x,), backend="reference", example_kwargs=swapped)


def test_exported_program_keywords_survive_save_and_load(tmp_path: Path) -> None:
    x, kwargs = _inputs()
    compiled = ziggurat.compile(_program(), (x,), backend="cpu", example_kwargs=kwargs)
    compiled.save(tmp_path / "m.zig")
    loaded = ziggurat.load(tmp_path / "m.zig")
    torch.testing.assert_close(loaded(x, mask=kwargs["mask"], pair=kwargs["pair"], y=kwargs["y"], scale=1.5),
                               _model()(x, **kwargs))
    with pytest.raises(InputError, match="missing a required argument: 'y'"):
        loaded(x, mask=kwargs["mask"], pair=kwargs["pair"], scale=1.5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frontend", ("export", "torchscript"))
def test_model_compiled_with_example_kwargs_takes_keywords(frontend: str, backend: str) -> None:
    """The same model through each frontend: keywords in any order, ``y`` by position as
    ``forward`` allows, and the keyword-only ``mask`` never by position."""
    x, kwargs = _inputs()
    want = _model()(x, **kwargs)
    compiled = ziggurat.compile(_model(), (x,), backend=backend, frontend=frontend,
                                example_kwargs=dict(reversed(list(kwargs.items()))))
    for args, kw in [((x,), kwargs), ((x, kwargs["y"]), {k: v for k, v in kwargs.items() if k != "y"}),
                     ((), {"x": x, **kwargs})]:
        torch.testing.assert_close(compiled(*args, **kw), want)
    with pytest.raises(InputError, match="too many positional arguments"):
        compiled(x, kwargs["y"], kwargs["mask"], pair=kwargs["pair"], scale=1.5)
