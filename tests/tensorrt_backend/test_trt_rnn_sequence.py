"""Full-sequence nn.LSTM / nn.GRU on ``tensorrt-reference``: graph-opt's ``decompose-rnn`` turns
them into linears, selects, splits, element-wise gates and stacks, which convert into one
TensorRT segment (without it, ``aten::lstm.input`` / ``aten::gru.input`` have no converter and
run in torch)."""

from __future__ import annotations

import pytest
import torch

from tests.cpu_backend.test_rnn_sequence import Case, assert_decomposed, check_against_eager, model_and_inputs
import ziggurat

CASES = [
    Case("lstm", layers=2, bidirectional=True, batch_first=True, with_state=True),
    Case("lstm", bias=False, steps=1, frontend="torchscript"),
    Case("gru", layers=2, bidirectional=True, frontend="torchscript"),
    Case("gru", batch_first=True, bias=False, with_state=True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_tensorrt_reference_matches_eager(case: Case) -> None:
    model, inputs = model_and_inputs(case)
    compiled = ziggurat.compile(model, inputs, backend="tensorrt-reference", frontend=case.frontend,
                                fallback=False)
    assert_decomposed(compiled.report, case.kind)
    assert compiled.report.stats["TensorRT segments"] == 1
    check_against_eager(compiled, model, inputs)
