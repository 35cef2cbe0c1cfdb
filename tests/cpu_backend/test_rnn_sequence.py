"""Full-sequence nn.LSTM / nn.GRU (``aten::lstm.input`` / ``aten::gru.input``) against eager:
decomposed by ``decompose-rnn`` into input-projection GEMMs and unrolled cells, then run
natively on every ISA, and by the reference interpreter; on both frontends."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
import torch

import ziggurat
from ziggurat.ir.errors import UnsupportedOpsError
from tests.cpu_backend.conftest import ISAS, compile_cpu, host_isas, max_rel_error


@dataclass(frozen=True)
class Case:
    kind: str  # "lstm" | "gru" | "rnn_tanh" | "rnn_relu"
    layers: int = 1
    bidirectional: bool = False
    batch_first: bool = False
    bias: bool = True
    proj_size: int = 0
    with_state: bool = False
    steps: int = 5
    frontend: str = "export"

    @property
    def id(self) -> str:
        parts = [self.kind, f"{self.layers}l", f"t{self.steps}", self.frontend]
        parts += [name for name, on in (("bidir", self.bidirectional), ("bf", self.batch_first),
                                        ("nobias", not self.bias), ("state", self.with_state)) if on]
        return "-".join(parts + ([f"proj{self.proj_size}"] if self.proj_size else []))


# input 7, hidden 13, batch 3: no size is a multiple of a vector width
INPUT, HIDDEN, BATCH = 7, 13, 3

CASES = [
    Case("lstm", layers=2, bidirectional=True, batch_first=True),
    Case("lstm", bias=False, with_state=True, frontend="torchscript"),
    Case("lstm", layers=2, with_state=True, steps=1, batch_first=True, frontend="torchscript"),
    Case("lstm", layers=2, bidirectional=True, proj_size=5, with_state=True),
    Case("gru", layers=2, bidirectional=True, with_state=True, frontend="torchscript"),
    Case("gru", batch_first=True, bias=False),
    Case("gru", layers=2, bidirectional=True, batch_first=True, bias=False, steps=1, frontend="torchscript"),
    Case("gru", layers=2, with_state=True),
    Case("rnn_tanh", layers=2, bidirectional=True, with_state=True, frontend="torchscript"),
    Case("rnn_relu", batch_first=True, bias=False),
]


class Rnn(torch.nn.Module):
    """The RNN called with or without its initial states."""

    def __init__(self, case: Case) -> None:
        super().__init__()
        options: dict[str, Any] = {"num_layers": case.layers, "bidirectional": case.bidirectional,
                                   "batch_first": case.batch_first, "bias": case.bias}
        if case.kind == "lstm":
            self.rnn: torch.nn.Module = torch.nn.LSTM(INPUT, HIDDEN, proj_size=case.proj_size, **options)
        elif case.kind == "gru":
            self.rnn = torch.nn.GRU(INPUT, HIDDEN, **options)
        else:
            self.rnn = torch.nn.RNN(INPUT, HIDDEN, nonlinearity=case.kind.removeprefix("rnn_"), **options)

    def forward(self, x: torch.Tensor, *state: torch.Tensor) -> Any:
        if not state:
            return self.rnn(x)
        return self.rnn(x, state[0] if len(state) == 1 else (state[0], state[1]))


def model_and_inputs(case: Case) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model = Rnn(case).eval()
    x = torch.randn((BATCH, case.steps, INPUT) if case.batch_first else (case.steps, BATCH, INPUT))
    if not case.with_state:
        return model, (x,)
    states = case.layers * (2 if case.bidirectional else 1)
    h0 = torch.randn(states, BATCH, case.proj_size or HIDDEN)
    if case.kind != "lstm":
        return model, (x, h0)
    return model, (x, h0, torch.randn(states, BATCH, HIDDEN))


def flat(value: Any) -> list[torch.Tensor]:
    if isinstance(value, tuple | list):
        return [t for v in value for t in flat(v)]  # pyright: ignore[reportUnknownVariableType]
    assert isinstance(value, torch.Tensor)
    return [value]


def check_against_eager(compiled: Any, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
    torch.manual_seed(1)
    for attempt in range(2):  # the example inputs, then others
        call = inputs if attempt == 0 else tuple(torch.randn_like(t) for t in inputs)
        with torch.no_grad():
            expected = flat(model(*call))
            actual = flat(compiled(*call))
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert a.shape == e.shape
            assert max_rel_error(a, e) < 1e-5, (attempt, max_rel_error(a, e))
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5)


def assert_decomposed(report: Any, kind: str) -> None:
    assert report.fallback_ops == {}, report.format()
    assert report.pass_stats["decompose-rnn"][kind] == 1
    assert not any("lstm" in op or "gru" in op or "rnn" in op for op in report.native_ops)


def _isa_params() -> list[object]:
    """Every case on avx512; on avx2 and scalar the first LSTM and GRU case in make test, the
    rest slow-marked (each case compiles ~1-4 s; 24 of them cost make test ~50 s of CPU)."""
    quick = {CASES[0].id, CASES[4].id}
    params: list[object] = []
    for isa in ISAS:
        for case in CASES:
            marks = [] if isa == "avx512" or case.id in quick else [pytest.mark.slow]
            params.append(pytest.param(case, isa, marks=marks, id=f"{isa}-{case.id}"))
    return params


@pytest.mark.parametrize(("case", "isa_name"), _isa_params())
def test_cpu_matches_eager(case: Case, isa_name: str) -> None:
    if isa_name not in host_isas():
        pytest.skip(f"host cannot run {isa_name}")
    isa = isa_name
    model, inputs = model_and_inputs(case)
    compiled = compile_cpu(model, inputs, isa=isa, frontend=case.frontend, fallback=False)
    assert_decomposed(compiled.report, case.kind)
    check_against_eager(compiled, model, inputs)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reference_matches_eager(case: Case) -> None:
    """The decomposition alone, run by the reference interpreter, on the other frontend too."""
    model, inputs = model_and_inputs(case)
    for frontend in ("export", "torchscript"):
        compiled = ziggurat.compile(model, inputs, backend="reference", frontend=frontend, passes="decompose-rnn")
        assert compiled.report.pass_stats["decompose-rnn"][case.kind] == 1
        check_against_eager(compiled, model, inputs)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_cpu_both_frontends(kind: str) -> None:
    case = Case(kind, layers=2, bidirectional=True, batch_first=True, with_state=True, steps=3)
    model, inputs = model_and_inputs(case)
    for frontend in ("export", "torchscript"):
        compiled = compile_cpu(model, inputs, frontend=frontend, fallback=False)
        assert_decomposed(compiled.report, kind)
        check_against_eager(compiled, model, inputs)


def test_zero_state_step_is_folded() -> None:
    """Without initial states the first step's h0 @ w_hh^T + b_hh is a constant: one GEMM per
    step after the first, plus one input projection per layer (two directions: one GEMM)."""
    case = Case("lstm", layers=2, steps=4)
    model, inputs = model_and_inputs(case)
    compiled = compile_cpu(model, inputs, fallback=False)
    assert compiled.report.stats["gemm calls"] == 2 * (1 + case.steps - 1)
    assert compiled.report.pass_stats["fuse-post-ops"]["linear+add"] == 2 * (case.steps - 1)
    check_against_eager(compiled, model, inputs)


def test_long_sequence_falls_back_with_its_reason() -> None:
    torch.manual_seed(0)
    model = torch.nn.GRU(3, 4).eval()
    x = torch.randn(257, 1, 3)
    compiled = compile_cpu(model, (x,))
    (reason,) = compiled.report.fallback_ops["aten::gru.input"]
    assert "decompose-rnn: 257 time steps, more than max_steps=256" in reason
    with pytest.raises(UnsupportedOpsError, match="257 time steps"):
        compile_cpu(model, (x,), fallback=False)
    check_against_eager(compiled, model, (x,))
    # tensorrt-reference reports the pass's reason beside the converters' refusal
    on_trt = ziggurat.compile(model, (x,), backend="tensorrt-reference")
    (reason,) = on_trt.report.fallback_ops["aten::gru.input"]
    assert "decompose-rnn: 257 time steps, more than max_steps=256" in reason, reason
    check_against_eager(on_trt, model, (x,))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_identical_step_kernels_compile_once(kind: str) -> None:
    """The steps' GEMMs differ only by name and operand offsets: one LLVM function for the input
    projection and one for every step.  An LSTM step reads x_t in its GEMM's epilogue (offsets
    passed by the call), so its kernels are the same for every step too; a GRU step's kernel
    reads x_t itself (the offset is in its body): one per step."""
    case = Case(kind, steps=6, with_state=True)
    model, inputs = model_and_inputs(case)
    compiled = compile_cpu(model, inputs, fallback=False, isa="scalar")
    llvm = compiled.ir["llvm"]
    kernels = set(re.findall(r"^define internal void @\"?(zk_\w+)", llvm, re.M))
    gemms = set(re.findall(r"^define\b[^@]*@\"?(zg_\w+?)\"?\(", llvm, re.M))
    assert compiled.report.stats["gemm calls"] == case.steps + 1
    assert len(gemms) == 2, sorted(gemms)
    if kind == "lstm":
        assert compiled.report.stats["kernels"] >= 2 * case.steps
        # c of step 0 (it reads c0), c and h of every step, the output stack, the final states
        assert len(kernels) <= 5, sorted(kernels)
        # a kernel called from several sites is not inlined into each (LLVM's optimizer took
        # minutes on a 256-step LSTM's entry with its kernels inlined 512 times)
        shared = [line for line in llvm.splitlines() if line.startswith("define") and "noinline" in line]
        assert len(shared) >= 2
    check_against_eager(compiled, model, inputs)
