"""Decompositions type the ops they build without importing ``torch._dynamo``: on meta
tensors, some of torch's kernels are Python references whose first call imports it and
sympy (1.3 s in every ``ziggurat-opt`` process that decomposes an LSTM), so small operands
are typed by a CPU run instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LSTM_IR = Path(__file__).resolve().parents[1] / "filecheck" / "passes" / "decompose_rnn.mlir"

PROGRAM = f"""
import sys
from xdsl.parser import Parser
from ziggurat.ir.context import make_context
from ziggurat.ir.pipeline import print_module, run_pipeline
from ziggurat.passes import parse_pipeline
module = Parser(make_context(), open({str(LSTM_IR)!r}).read()).parse_module()
run_pipeline(module, parse_pipeline("decompose-rnn"))
text = print_module(module)
print("lstm left:", "aten.lstm" in text, "linear:", text.count("aten.linear"))
print("dynamo imported:", "torch._dynamo" in sys.modules)
"""


def test_small_decompositions_do_not_import_dynamo() -> None:
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "lstm left: False" in out.stdout and "linear: 0" not in out.stdout, out.stdout
    assert "dynamo imported: False" in out.stdout, out.stdout


def test_data_dependent_op_is_not_typed_from_zeros() -> None:
    """The CPU run is on zeros, so an op whose result shape follows the data (``nonzero``)
    would get a wrong static shape from it (``masked_select`` by an all-false mask: ``[0]``);
    such ops are typed on meta tensors, which refuse."""
    import pytest
    from xdsl.dialects.builtin import TensorType, f32, i1
    from xdsl.ir import Block

    from ziggurat.dialects.torch.aten_ops import AtenMaskedSelect_Op, AtenRelu_Op
    from ziggurat.ir.rewriting import build_aten_inferred

    x, mask = Block(arg_types=[TensorType(f32, [3]), TensorType(i1, [3])]).args
    assert build_aten_inferred(AtenRelu_Op, {"self": x}).results[0].type == TensorType(f32, [3])
    with pytest.raises(Exception):  # noqa: B017 - whatever meta says, not a static shape
        op = build_aten_inferred(AtenMaskedSelect_Op, {"self": x, "mask": mask})
        pytest.fail(f"masked_select typed from zeros: {op.results[0].type}")  # a BaseException: not caught
