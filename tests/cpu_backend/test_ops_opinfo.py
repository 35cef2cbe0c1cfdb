"""Per-op numerics of every native lowering against eager, on OpInfo samples, under all ISAs.

The default run takes two samples per op under AVX-512 and one under AVX2 and scalar;
``-m slow`` runs six samples per op under every ISA.  Each case must run fully natively
(no op falls back to torch) unless listed in ``PARTIAL``.
"""

from __future__ import annotations

import pytest
import torch

from ziggurat.ir.errors import ModelImportError
from tests.cpu_backend.conftest import compile_cpu, host_isas
from tests.cpu_backend.opinfo_sweep import DEFAULT
from tests.support.opinfo import Case, assert_same, opinfo_cases
from tests.support.sweep import each_choice

#: (op, sample) pairs that legitimately keep an op in torch, with the reason.
PARTIAL: dict[str, str] = {
    "take_along_dim": "without dim it flattens first (runs through torch)",
    "repeat_interleave": "tensor repeats give a data-dependent shape",
    "nn.functional.embedding": "max_norm renormalizes the weight in place",
    "nn.functional.conv_transpose1d": "output_padding samples",
    "index_put": "None (full-slice) indices run through torch",
    "nn.functional.scaled_dot_product_attention": "samples with dropout are random",
    "nn.functional.cross_entropy": "label smoothing runs through torch",
    # training samples with running statistics write them in place: functionalized, the
    # update (_native_batch_norm_legit_functional) has no native lowering yet
    "nn.functional.batch_norm": "training with running statistics runs through torch",
}

#: ops some of whose samples are refused, and the refusal: running statistics passed as kwargs
#: are constants of the module, which use_input_stats would update in place
REFUSED: dict[str, str] = {
    "nn.functional.instance_norm": "is mutated in the forward method",
}

RTOL, ATOL = 1e-4, 1e-5
#: ops whose float32 results legitimately differ more (polynomial approximations, reassociation).
LOOSE = {"pow": (1e-3, 1e-4), "logaddexp": (1e-4, 1e-4), "nn.functional.mish": (1e-4, 1e-4),
         "cumprod": (1e-3, 1e-4), "prod": (1e-3, 1e-5), "var": (1e-4, 1e-4), "std": (1e-4, 1e-4),
         "var_mean": (1e-4, 1e-4), "std_mean": (1e-4, 1e-4), "logcumsumexp": (1e-4, 1e-4),
         "addcdiv": (1e-4, 1e-4), "atanh": (1e-4, 1e-4), "nn.functional.interpolate.bilinear": (1e-4, 1e-4)}


def _cases(per_op: int) -> list[Case]:
    return opinfo_cases(DEFAULT, torch.float32, per_op=per_op)


def _check(case: Case, isa: str) -> None:
    if isa not in host_isas():
        pytest.skip(f"host cannot run {isa}")
    with torch.no_grad():
        expected = case.module(*[t.clone() for t in case.inputs])
    try:
        compiled = compile_cpu(case.module, case.inputs, isa=isa)
    except ModelImportError as e:
        if case.op in REFUSED and REFUSED[case.op] in str(e):
            return
        raise
    actual = compiled(*[t.clone() for t in case.inputs])
    rtol, atol = LOOSE.get(case.op, (RTOL, ATOL))
    assert_same(actual, expected, op=case.id, shapes_only=case.random, rtol=rtol, atol=atol)
    fallback = compiled.report.fallback_ops
    if fallback and case.op not in PARTIAL:
        pytest.fail(f"{case.id} ({isa}) fell back to torch: {fallback}")


_AVX512 = _cases(2)
_ONE = [c for c in _AVX512 if c.index == _AVX512[[x.op for x in _AVX512].index(c.op)].index]


@pytest.mark.parametrize("case", _AVX512, ids=[c.id for c in _AVX512])
def test_native_avx512(case: Case) -> None:
    _check(case, "avx512")


# Each op's first sample on avx2 and on scalar: make test takes one of the two per op (the
# each-choice cover alternates them), -m slow both (and test_native_sweep 6 samples on every ISA).
@each_choice("case, isa", _ONE, ["avx2", "scalar"], ids=[lambda c: c.id, None])
def test_native_avx2_scalar(case: Case, isa: str) -> None:
    _check(case, isa)


@pytest.mark.slow
@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("case", _cases(6), ids=lambda c: c.id)
def test_native_sweep(case: Case, isa: str) -> None:
    _check(case, isa)
