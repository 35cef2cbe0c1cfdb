"""Convert a torch model to TensorRT segments and check it against eager on the reference executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.tensorrt.segments import ConversionReport, PartitionOptions
from ziggurat.backends.compiled_module import forward_function
from ziggurat.ir.importer import import_model
from ziggurat.ir.signature import output_structure, rebuild
from ziggurat.ir.interpreter import run
from ziggurat.backends.tensorrt.convert_torch_to_trt import convert_module


class Wrap(torch.nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


@dataclass
class Converted:
    module: ModuleOp
    report: ConversionReport
    outputs: list[Any]
    expected: list[Any]

    @property
    def fallback_ops(self) -> list[str]:
        return [r.op for r in self.report.fallback]


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]  # pyright: ignore
    return [value]


def convert_and_run(
    model: torch.nn.Module | Callable[..., Any],
    inputs: Sequence[torch.Tensor],
    *,
    min_block_size: int = 1,
    torch_executed_ops: tuple[str, ...] = (),
    script: bool = False,
    pre_passes: str = "",
) -> Converted:
    module_obj = model if isinstance(model, torch.nn.Module) else Wrap(model)
    module_obj.eval()
    with torch.no_grad():
        expected = _flat(module_obj(*[t.clone() for t in inputs]))
    source = torch.jit.script(module_obj) if script else module_obj
    module = import_model(source, [t.clone() for t in inputs], frontend="torchscript")
    if pre_passes:
        from ziggurat.ir.pipeline import run_pipeline
        from ziggurat.backends.passes import parse_pipeline

        run_pipeline(module, parse_pipeline(pre_passes))
    (report,) = convert_module(module, PartitionOptions(min_block_size, torch_executed_ops))
    module.verify()
    results = run(module, [t.clone() for t in inputs])
    # the model's outputs (not the results that write mutated inputs back)
    outputs = _flat(rebuild(output_structure(forward_function(module)), results))
    return Converted(module, report, outputs, expected)


def check_converts(
    model: torch.nn.Module | Callable[..., Any],
    inputs: Sequence[torch.Tensor],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    allow_fallback: Sequence[str] = (),
    script: bool = False,
    pre_passes: str = "",
) -> Converted:
    """Everything converts (except ops named in ``allow_fallback``) and matches eager."""
    result = convert_and_run(model, inputs, script=script, pre_passes=pre_passes)
    unexpected = [r for r in result.report.fallback if not any(a in r.op for a in allow_fallback)]
    assert not unexpected, "ops left to torch:\n" + "\n".join(r.format() for r in unexpected)
    assert result.report.segments, "no TensorRT segment was built"
    assert len(result.outputs) == len(result.expected)
    for got, want in zip(result.outputs, result.expected, strict=True):
        if isinstance(want, torch.Tensor):
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            assert got == want
    return result
