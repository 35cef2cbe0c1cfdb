"""The fuzzer's PT2E patterns (``ops_quantized.py``, the ``quantized`` profile): generated
programs with quantize -> dequantize pairs around int8-weight linears and convolutions agree
with eager on every configuration, the CPU backend takes its int8 kernels for some of them,
and the oracle fails a result one that is off by a few quanta."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import ziggurat
from tests.fuzz.execute import build_module, example_inputs
from tests.fuzz.generator import PROFILES, generate
from tests.fuzz.oracle import all_configs, check_program, reference
from tests.fuzz.thread_counts import CHOICES
from tests.fuzz.program import Program
from tests.fuzz.tolerance import compare

SEED = 40


def _programs(profile: str, specs: tuple[str, ...], limit: int, tries: int = 40) -> list[Program]:
    """The first ``limit`` programs of ``profile`` that hold one of ``specs``."""
    found = [p for p in (generate(SEED, i, PROFILES[profile]) for i in range(tries))
             if any(op.startswith(specs) for op in p.ops())]
    return found[:limit]


PROGRAMS = _programs("quantized", ("quantized_linear", "quantized_conv"), 5)
#: int8 linears back to back (``quantized-chain``): values stored as uint8 between them
CHAINS = _programs("quantized-chain", ("quantized_block",), 4, tries=30)


#: make test checks the first 3 programs and 2 chains (each ~4.5 s on every configuration), -m slow all
IN_MAKE_TEST = {p.name for p in PROGRAMS[:3] + CHAINS[:2]}


@pytest.mark.parametrize("program", [pytest.param(p, id=p.name, marks=[] if p.name in IN_MAKE_TEST else [pytest.mark.slow])
                                     for p in PROGRAMS + CHAINS])
def test_quantized_programs_match_eager(program: Program) -> None:
    # by its place in PROGRAMS + CHAINS: make test's five get 1, 2, 3 and 3, 1
    threads = CHOICES[(PROGRAMS + CHAINS).index(program) % len(CHOICES)]
    result = check_program(program, all_configs(), threads)
    assert not result.invalid, result.invalid
    failures = [f"{o.config}: {o.kind}: {o.reason}\n    {o.detail[:600]}" for o in result.outcomes
                if o.kind in ("wrong", "crash")]
    assert not failures, f"{program.name} ({', '.join(program.ops())}, {threads} threads):\n" + "\n".join(failures)


def _avx512_reports(programs: list[Program]) -> list[Any]:
    """The CPU backend's compile reports of ``programs`` on avx512 (skips without AVX512-VNNI)."""
    from ziggurat.backends.cpu.isa import Isa
    from ziggurat.backends.cpu.kernels.gemm_int8 import int8_kernel_available

    if not int8_kernel_available(Isa.AVX512):
        pytest.skip("this host has no AVX512-VNNI: the int8 kernels are not taken")
    return [ziggurat.compile(build_module(p), example_inputs(p), backend="cpu", isa="avx512").report for p in programs]


def test_the_int8_kernels_are_reached() -> None:
    packed = sum("int8 weights packed" in report.format() for report in _avx512_reports(PROGRAMS))
    assert packed >= 3, packed


def test_a_result_off_by_quanta_fails() -> None:
    program = PROGRAMS[0]
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    compiled = ziggurat.compile(build_module(program), inputs, backend="reference")
    with torch.no_grad():
        out = compiled(*inputs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    assert compare(outs, ref).ok
    k = next(i for i, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel())
    wrong = outs[k].contiguous().clone()
    scale = float(ref.e32[k].abs().max())
    wrong.view(-1)[0] += 0.05 * scale + 0.05  # a few quanta of any pair here: no rounding explains it
    outs[k] = wrong
    assert not compare(outs, ref).ok


def test_the_chains_store_uint8_values() -> None:
    stored = sum(report.pass_stats.get("fuse-requantize", {}).get("results stored as uint8", 0)
                 for report in _avx512_reports(CHAINS))
    assert stored >= 2, stored


def test_a_pair_read_as_a_bias_compiles_everywhere() -> None:
    """``quantized_block`` with a 1-d input reads the input pair's value as its linear's bias too;
    storing that value as uint8 made the IR unverifiable (a ui8 bias): every configuration must
    take the program (no refusal), with eager's results."""
    import re

    from tests.fuzz.program import module_source

    program = next(p for p in (generate(49, i, PROFILES["quantized-chain"]) for i in range(40))
                   if re.search(r"F\.linear\((\w+), \w+, \1\)", module_source(p)))
    result = check_program(program, all_configs())
    assert not result.invalid, result.invalid
    assert all(o.kind == "ok" for o in result.outcomes), [(o.config, o.kind, o.reason) for o in result.outcomes]
