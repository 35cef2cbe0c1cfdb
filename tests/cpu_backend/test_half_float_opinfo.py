"""bf16 and float16 ops on OpInfo samples: computed natively (no fallback) and bit for bit
eager's (rtol = atol = 0; NaN where eager's is NaN).

The ops whose eager 16-bit kernels move elements (``lowering/driver.py``'s
``HALF_FLOAT_MOVES``: 16 bits copied) and those computed in float32 and rounded once
(``widen_half_floats.py``); ``test_widen_half_floats_exhaustive.py`` (``-m slow``) checks the
element functions over every 16-bit value.  ``PARTIAL`` lists samples that legitimately keep an
op in torch.
"""

from __future__ import annotations

import torch
import pytest

from tests.cpu_backend.conftest import compile_cpu
from tests.support.opinfo import Case, assert_same, opinfo_cases

MOVES = (
    "reshape view flatten unflatten squeeze unsqueeze permute transpose t expand expand_as repeat tile flip roll "
    "fliplr flipud movedim narrow select cat stack hstack vstack split chunk unbind where masked_fill "
    "nn.functional.pad.constant tril triu diagonal diag diag_embed unfold nn.functional.pixel_shuffle "
    "nn.functional.pixel_unshuffle nn.functional.unfold select_scatter slice_scatter diagonal_scatter zeros_like ones_like full_like "
    "broadcast_tensors meshgrid.variadic_tensors gather take_along_dim index_select nn.functional.embedding scatter "
    "index_put __getitem__ repeat_interleave"
).split()
WIDENED = (
    "abs neg relu sigmoid tanh exp log log2 log10 log1p expm1 sin cos tan sinh cosh asin acos atan asinh acosh atanh "
    "erfc round frac deg2rad rad2deg sign sgn sqrt reciprocal square ceil floor trunc isnan isinf isfinite signbit "
    "logical_not nn.functional.selu nn.functional.celu nn.functional.threshold nn.functional.silu nn.functional.elu "
    "nn.functional.softplus add sub mul maximum minimum eq ne lt le gt ge amax amin sum mean "
    "logaddexp pow lerp addcdiv copysign heaviside hypot atan2 nn.functional.prelu logical_and logical_or "
    "logical_xor any all argmax argmin count_nonzero max.reduction_no_dim min.reduction_no_dim "
    "max.reduction_with_dim min.reduction_with_dim aminmax nn.functional.max_pool1d nn.functional.max_pool2d "
    "nn.functional.adaptive_max_pool1d nn.functional.adaptive_max_pool2d nn.functional.group_norm "
    "nn.functional.rms_norm nn.functional.interpolate.nearest nn.functional.avg_pool1d "
    "nn.functional.adaptive_avg_pool1d nansum trace var_mean std_mean nan_to_num log_softmax logsumexp "
    "nn.functional.logsigmoid nn.functional.hardshrink xlogy logit div.trunc_rounding fmax fmin"
).split()

#: (op, sample index) -> why it stays in torch
PARTIAL: dict[tuple[str, int], str] = {
    ("take_along_dim", 3): "without dim it flattens first",
    ("scatter", 1): "scatter with reduce= adds or multiplies in the 16-bit type",
    ("scatter", 2): "scatter with reduce= adds or multiplies in the 16-bit type",
    ("index_put", 1): "None (full-slice) indices",
    ("index_put", 2): "accumulate adds in the 16-bit type",
    ("index_put", 3): "None (full-slice) indices",
    ("gather", 3): "a uint8 index (float32 keeps it in torch too)",
    ("repeat_interleave", 3): "tensor repeats give a data-dependent shape",
    ("logit", 1): "eps: eager's 16-bit clamp of x to [eps, 1 - eps] is not written out",
    ("logit", 3): "eps: eager's 16-bit clamp of x to [eps, 1 - eps] is not written out",
}


def _cases() -> list[Case]:
    out: list[Case] = []
    for dtype in (torch.bfloat16, torch.float16):
        out.extend(opinfo_cases(MOVES + WIDENED, dtype, per_op=4))
    return out


CASES = _cases()


#: samples per op and dtype in ``make test`` (as test_ops_opinfo's float32 ones); the rest under ``-m slow``
IN_MAKE_TEST = 2


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.slow] if c.index >= IN_MAKE_TEST else [])
                                  for c in CASES],
                         ids=[f"{c.op}-{c.index}-{c.inputs[0].dtype}".replace("torch.", "") for c in CASES])
def test_native_and_bit_exact(case: Case) -> None:
    with torch.no_grad():
        expected = case.module(*[t.clone() for t in case.inputs])
    compiled = compile_cpu(case.module, case.inputs)
    fallback = compiled.report.fallback_ops  # pyright: ignore[reportAttributeAccessIssue]
    if (case.op, case.index) in PARTIAL:
        assert fallback, f"{case.id} runs natively now: drop it from PARTIAL"
    else:
        assert not fallback, fallback
    got = compiled(*[t.clone() for t in case.inputs])  # pyright: ignore[reportCallIssue]
    assert_same(got, expected, op=case.id, rtol=0, atol=0)
