"""Standalone repro files: ``python repro.py`` prints eager vs Ziggurat and exits 1 while
the failure is present (0 once it is fixed).

A repro needs only torch and ziggurat: the value helpers of ``materialize.py`` and the
layout-keeping ``clone_inputs`` are copied into it, so its inputs are bit-identical to the
fuzzer's.  Its own check is a plain ``allclose`` (rtol 1e-4, atol 1e-4 of the output's
scale, NaNs equal; integers and booleans exact); the fuzzer's verdict, made with the
tolerance of ``tolerance.py``, is in the header.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from tests.fuzz import execute, materialize
from tests.fuzz.program import Program, input_expr, module_source

_TEMPLATE = '''"""Ziggurat fuzz repro {name}.

configuration: {options}
outcome: {kind}: {reason}
{detail}
ops: {ops}

Run: python {filename}    (exit status 1 while the failure is present)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (torch.ops.quantized_decomposed, for PT2E patterns)
import torch.nn.functional as F
from torch.export import Dim  # noqa: F401  (a -dyn configuration's dynamic_shapes)

import ziggurat

{helpers}

{module}

def close(actual, expected) -> bool:
    if not isinstance(expected, torch.Tensor):
        return actual == expected
    if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    if not expected.is_floating_point():
        return bool(torch.equal(actual, expected))
    scale = float(expected[torch.isfinite(expected)].abs().max()) if torch.isfinite(expected).any() else 0.0
    return bool(torch.allclose(actual, expected, rtol=1e-4, atol=1e-4 * scale + 1e-6, equal_nan=True))


def main() -> int:
{inputs}
    model = Model().eval()
    compiled = ziggurat.compile(model, example, {compile_args})
    status = 0
    for label, inputs in (("example", example), ("call-time", call)):
        with torch.no_grad():
            expected = model(*clone_inputs(inputs))
            actual = compiled(*clone_inputs(inputs))
        for i, (e, a) in enumerate(zip(expected, actual)):
            same = close(a, e)
            status |= not same
            print(f"{{label}} inputs, output {{i}}: {{'same' if same else 'DIFFERENT'}}")
            if not same:
                print("  eager:   ", e)
                print("  ziggurat:", a)
                if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor) and a.shape == e.shape:
                    print("  max |difference|:", (a.double() - e.double()).abs().nan_to_num(float("inf")).max().item())
    return status


if __name__ == "__main__":
    sys.exit(main())
'''


def helpers_source() -> str:
    parts = [inspect.getsource(f) for f in (materialize.make_values, materialize.with_layout,
                                             materialize.make_input, materialize.from_literal,
                                             materialize.make_const, execute.clone_inputs)]
    return "\n\n".join(parts)


class SourceText(str):
    """An option whose value is written into the repro as this source text."""

    def __repr__(self) -> str:
        return str(self)


def dynamic_shapes_source(spec: tuple[dict[int, Any] | None, ...]) -> SourceText:
    """``({0: Dim("n5", min=2, max=8)}, None)``: a ``dynamic_shapes`` spec as source."""
    def one(dims: dict[int, Any] | None) -> str:
        if dims is None:
            return "None"
        return "{" + ", ".join(f'{k}: Dim("{d.__name__}", min={d.min}, max={d.max})' for k, d in dims.items()) + "}"

    return SourceText("(" + ", ".join(one(d) for d in spec) + ("," if len(spec) == 1 else "") + ")")


def inputs_source(program: Program, call_program: Program | None = None) -> str:
    """The example inputs and the call-time ones (``call_program``'s inputs, other sizes for a
    -dyn configuration)."""
    lines = []
    for spec in program.inputs:
        lines.append(f"    {spec.name} = {input_expr(spec)}")
    example = [s.alias if s.alias else s.name for s in program.inputs]
    lines.append(f"    example = ({', '.join(example)}{',' if example else ''})  # aliased inputs pass one tensor")
    fresh = [input_expr(s, execute.FRESH_SEED) for s in (call_program or program).inputs]
    lines.append("    call = (" + "".join(f"\n        {f}," for f in fresh) + "\n    )")
    return "\n".join(lines)


def repro_source(program: Program, options: dict[str, object], kind: str, reason: str, detail: str,
                 filename: str, call_program: Program | None = None) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in options.items())
    detail_text = "\n".join("    " + line for line in detail.strip().splitlines()[:12])
    return _TEMPLATE.format(name=program.name, options=args, kind=kind, reason=reason, detail=detail_text,
                            ops=", ".join(program.ops()), filename=filename, helpers=helpers_source(),
                            module=module_source(program), inputs=inputs_source(program, call_program),
                            compile_args=args)


def write_repro(directory: Path, stem: str, program: Program, options: dict[str, object], kind: str,
                reason: str, detail: str, call_program: Program | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.py"
    path.write_text(repro_source(program, options, kind, reason, detail, path.name, call_program))
    (directory / f"{stem}.json").write_text(program.to_json())
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.fuzz.repro tests/fuzz/repros/NAME.json [--out DIR]``: the standalone
    repro of a saved regression program (``{"config", "kind", "note", "program"}``)."""
    import argparse
    import json

    from tests.fuzz.oracle import Config
    from tests.fuzz.triage import call_program, compile_options

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("saved")
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)
    saved = json.loads(Path(args.saved).read_text())
    program = Program.from_json(json.dumps(saved["program"]))
    config = Config.parse(saved["config"])
    path = write_repro(Path(args.out), Path(args.saved).stem, program,
                       compile_options(config, saved.get("threads", 1), program=program),
                       saved["kind"], saved["note"], "", call_program(config, program))
    print(path)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
