"""Activations and pointwise ops that compare, clamp or combine, on NaN, +-inf, -0, 0, tiny
(denormal) and huge values, against eager: every ISA of the cpu backend (natively, no
fallback), ``tensorrt-reference`` (min_block_size 1) and ``reference``.

Fuzz classes: hardshrink/softshrink(NaN) gave 0; hypot(inf, NaN) gave NaN; isclose(0.25,
-inf) was True; lerp(x, inf, 1) gave inf; logcumsumexp over +inf gave NaN; softmax of a
single inf/NaN element gave 1; attention whose scores are NaN gave 0 (cpu); log_softmax was
-inf where eager is finite, atan2 and pow(-inf, +-0.5) were wrong (tensorrt-reference).

NaN must sit exactly where eager has it, infinities must match exactly, finite values within
1e-5 relative (1e-7 absolute), bools bit for bit.  The sign of a zero is not compared (eager
itself gives softshrink(-0.3) as -0 or 0 depending on the vector path)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from tests.cpu_backend.conftest import compile_cpu, host_isas
from tests.support.opinfo import OpModule

NAN, INF = math.nan, math.inf
#: each value next to the thresholds the ops use (0.5, 0.3, 1, 2, 20, 25)
VALUES = [NAN, INF, -INF, -0.0, 0.0, 1e-45, -1e-45, 1e-38, 3e38, -3e38, 0.3, -0.3, 0.5, -0.5, 1.0, -1.0,
          2.0, 25.0, -25.0]

TARGETS = ["avx512", "avx2", "scalar", "tensorrt-reference", "reference"]


def _values() -> torch.Tensor:
    """The values once (19: one AVX-512 vector and a tail)."""
    return torch.tensor(VALUES)


def _pairs() -> tuple[torch.Tensor, torch.Tensor]:
    """Every ordered pair of values (361 elements)."""
    a = torch.tensor([p for p in VALUES for _ in VALUES])
    b = torch.tensor([q for _ in VALUES for q in VALUES])
    return a, b


def _triples() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(start, end, weight) for lerp and the three-operand ops: 7 x 7 x 12 combinations."""
    ends = [NAN, INF, -INF, 0.0, 1.0, -2.0, 3e38]
    weights = [NAN, INF, -INF, 0.0, -0.0, 0.25, 0.5, 0.75, 1.0, 2.0, -1.0, 1e-45]
    s = torch.tensor([x for x in ends for _ in ends for _ in weights])
    e = torch.tensor([y for _ in ends for y in ends for _ in weights])
    w = torch.tensor([z for _ in ends for _ in ends for z in weights])
    return s, e, w


UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "hardshrink": lambda x: F.hardshrink(x, 0.5),
    "hardshrink_0": lambda x: F.hardshrink(x, 0.0),
    "softshrink": lambda x: F.softshrink(x, 0.5),
    "softshrink_0": lambda x: F.softshrink(x, 0.0),
    "threshold": lambda x: F.threshold(x, 0.3, -2.0),
    "threshold_to_inf": lambda x: F.threshold(x, 0.5, INF),
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 2.0),
    "relu": F.relu,
    "relu6": F.relu6,
    "clamp": lambda x: torch.clamp(x, -0.5, 2.0),
    "clamp_min": lambda x: torch.clamp(x, min=0.3),
    "clamp_max": lambda x: torch.clamp(x, max=0.3),
    "clamp_min_above_max": lambda x: torch.clamp(x, 1.0, -1.0),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "leaky_relu_negative_slope": lambda x: F.leaky_relu(x, -2.0),
    "rrelu_eval": lambda x: F.rrelu(x, 0.1, 0.3, training=False),
    "elu": lambda x: F.elu(x, 0.7),
    "celu": lambda x: F.celu(x, 1.3),
    "selu": F.selu,
    "mish": F.mish,
    "softplus": F.softplus,
    "softplus_beta_threshold": lambda x: F.softplus(x, 2.0, 5.0),
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "logsigmoid": F.logsigmoid,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "sign": torch.sign,
    "sgn": torch.sgn,
    "nan_to_num": torch.nan_to_num,
    "nan_to_num_values": lambda x: torch.nan_to_num(x, 1.5, 7.0, -8.0),
    "logit": torch.logit,
    "logit_eps": lambda x: torch.logit(x, 0.1),
    "heaviside": lambda x: torch.heaviside(x, torch.flip(x, [0])),
    "pow_2": lambda x: torch.pow(x, 2),
    "pow_3": lambda x: torch.pow(x, 3),
    "pow_half": lambda x: torch.pow(x, 0.5),
    "pow_minus_half": lambda x: torch.pow(x, -0.5),
    "pow_minus_1": lambda x: torch.pow(x, -1),
    "pow_minus_2": lambda x: torch.pow(x, -2),
    "pow_0": lambda x: torch.pow(x, 0),
    "pow_2_5": lambda x: torch.pow(x, 2.5),
    "pow_minus_3": lambda x: torch.pow(x, -3.0),
    "pow_inf": lambda x: torch.pow(x, INF),
    "pow_minus_inf": lambda x: torch.pow(x, -INF),
    "pow_nan": lambda x: torch.pow(x, NAN),
    "pow_base_2": lambda x: torch.pow(2.0, x),
    "pow_base_minus_2": lambda x: torch.pow(-2.0, x),
    "pow_base_1": lambda x: torch.pow(1.0, x),
}

BINARY: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "max_other": lambda a, b: torch.max(a, b),
    "where": lambda a, b: torch.where(a > b, a, b),
    "where_isnan": lambda a, b: torch.where(a.isnan(), b, a),
    "clamp_tensor_min": lambda a, b: torch.clamp(a, min=b),
    "clamp_tensor_max": lambda a, b: torch.clamp(a, max=b),
    "clamp_tensor_both": lambda a, b: torch.clamp(a, b, b + 1.0),
    "copysign": torch.copysign,
    "hypot": torch.hypot,
    "atan2": torch.atan2,
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "xlogy": torch.xlogy,
    "pow": torch.pow,
    "isclose": lambda a, b: torch.isclose(a, b, rtol=0.05, atol=0.25),
    "isclose_equal_nan": lambda a, b: torch.isclose(a, b, equal_nan=True),
    "isclose_exact": lambda a, b: torch.isclose(a, b, rtol=0.0, atol=0.0),
    "isclose_infinite_atol": lambda a, b: torch.isclose(a, b, rtol=0.0, atol=INF),
    "isclose_int": lambda a, b: torch.isclose((a.nan_to_num() * 1e-30).to(torch.int64) + 2 ** 40,
                                              (b.nan_to_num() * 1e-30).to(torch.int64) + 2 ** 40, rtol=0.0, atol=0.5),
    "lerp_weight_0_3": lambda a, b: torch.lerp(a, b, 0.3),
    "lerp_weight_0_7": lambda a, b: torch.lerp(a, b, 0.7),
    "softshrink_of_product": lambda a, b: F.softshrink(a * b, 0.5),
    "addcmul": lambda a, b: torch.addcmul(a, a, b, value=0.5),
}

TERNARY: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "lerp": torch.lerp,
    "addcdiv": lambda s, e, w: torch.addcdiv(s, e, w, value=0.5),
    "addcmul": lambda s, e, w: torch.addcmul(s, e, w, value=3.0),
    "clamp_tensors": lambda s, e, w: torch.clamp(s, e, w),
    "where": lambda s, e, w: torch.where(w > 0.5, s, e),
}


def _rows() -> torch.Tensor:
    """Rows of 7 for the scans and softmaxes: repeated and mixed infinities, NaN first and
    last, all -inf, huge values that overflow a sum, and a plain row."""
    return torch.tensor([
        [INF, INF, 1.0, INF, -INF, 2.0, 0.5],
        [-INF, -INF, -INF, -INF, -INF, -INF, -INF],
        [-INF, -INF, 1.0, -INF, 3.0, -INF, -INF],
        [NAN, 1.0, 2.0, -INF, INF, 0.0, 1.0],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, NAN],
        [3e38, 3e38, -3e38, 3e38, 1.0, -0.0, 1e-45],
        [INF, -INF, INF, NAN, -INF, 1.0, 1.0],
        [0.5, -1.5, 2.5, -3.5, 80.0, -90.0, 100.0],
    ])


ROWS: dict[str, Callable[[torch.Tensor], Any]] = {
    "logcumsumexp": lambda x: torch.logcumsumexp(x, -1),
    "logcumsumexp_reversed": lambda x: torch.logcumsumexp(x.flip(-1), -1),
    "logcumsumexp_dim0": lambda x: torch.logcumsumexp(x, 0),
    "softmax": lambda x: torch.softmax(x, -1),
    "softmax_dim0": lambda x: torch.softmax(x, 0),
    "log_softmax": lambda x: torch.log_softmax(x, -1),
    "log_softmax_dim0": lambda x: torch.log_softmax(x, 0),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
    "softmax_one_element": lambda x: torch.softmax(x.reshape(-1, 1), 1),
    "log_softmax_one_element": lambda x: torch.log_softmax(x.reshape(-1, 1), 1),
    "softmax_0d": lambda x: tuple(torch.softmax(x[3, i], 0) for i in range(5)),
    "log_softmax_0d": lambda x: tuple(torch.log_softmax(x[3, i], 0) for i in range(5)),
    "logcumsumexp_0d": lambda x: tuple(torch.logcumsumexp(x[3, i], 0) for i in range(5)),
}


def _compile(fn: Callable[..., Any], inputs: tuple[torch.Tensor, ...], target: str, **options: Any) -> Any:
    module = OpModule(fn)
    if target in ("avx512", "avx2", "scalar"):
        if target not in host_isas():
            pytest.skip(f"host cannot run {target}")
        compiled = compile_cpu(module, inputs, isa=target, **options)
        assert compiled.report.fallback_ops == {}, compiled.report.fallback_ops
        return compiled
    if target == "tensorrt-reference":
        options = {"min_block_size": 1, **options}
    return ziggurat.compile(module, inputs, backend=target, **options)


def assert_same_special_values(got: Any, expected: Any, atol: float = 1e-7) -> None:
    """NaN exactly where eager has NaN, infinities exactly, finite values within 1e-5 relative
    plus ``atol``."""
    if isinstance(expected, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(expected)  # pyright: ignore
        for g, e in zip(got, expected, strict=True):  # pyright: ignore
            assert_same_special_values(g, e, atol)
        return
    assert isinstance(got, torch.Tensor) and isinstance(expected, torch.Tensor)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not expected.dtype.is_floating_point:
        bad = (got != expected).nonzero().tolist()
        assert not bad, f"differs at {bad[:10]}: got {got[got != expected].tolist()[:10]}, " \
                        f"expected {expected[got != expected].tolist()[:10]}"
        return
    g, e = got.double().flatten(), expected.double().flatten()
    nan_differs = g.isnan() != e.isnan()
    close = (g == e) | ((g - e).abs() <= 1e-5 * e.abs() + atol)
    bad = nan_differs | (~e.isnan() & ~close)
    where = bad.nonzero().flatten().tolist()
    assert not where, f"{len(where)} elements differ: " + ", ".join(
        f"[{i}] got {g[i].item()!r}, eager {e[i].item()!r}" for i in where[:8])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_special_values(op: str, target: str) -> None:
    fn, x = UNARY[op], _values()
    assert_same_special_values(_compile(fn, (x,), target)(x), fn(x))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_special_values(op: str, target: str) -> None:
    fn, (a, b) = BINARY[op], _pairs()
    assert_same_special_values(_compile(fn, (a, b), target)(a, b), fn(a, b))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", sorted(TERNARY))
def test_ternary_special_values(op: str, target: str) -> None:
    fn, inputs = TERNARY[op], _triples()
    assert_same_special_values(_compile(fn, inputs, target)(*inputs), fn(*inputs))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", sorted(ROWS))
def test_rows_special_values(op: str, target: str) -> None:
    fn, x = ROWS[op], _rows()
    assert_same_special_values(_compile(fn, (x,), target)(x), fn(x))


#: The unary post-ops fuse-post-ops folds into a GEMM's epilogue (``gelu``, erf form, is left
#: out: eager float32 gives NaN for +inf and inf above 1.7e38 on its vector path, inf and the
#: value on its scalar path; Ziggurat gives the latter).
EPILOGUE: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": F.relu, "relu6": F.relu6, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "hardtanh": lambda t: F.hardtanh(t, -0.5, 2.0),
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid, "leaky_relu": lambda t: F.leaky_relu(t, 0.2),
    "clamp": lambda t: t.clamp(-0.3, 0.5), "clamp_min": lambda t: t.clamp(min=0.1),
}


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
@pytest.mark.parametrize("op", sorted(EPILOGUE))
def test_gemm_epilogue_special_values(op: str, isa: str) -> None:
    """linear + other -> op and matmul - other -> op, fused into the GEMM's epilogue, where
    ``other`` holds the special values (an absolute 1e-5 for the GEMM's summation order)."""
    fn = EPILOGUE[op]
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(3, 8, generator=g), torch.randn(len(VALUES), 8, generator=g)
    other = _values().repeat(3, 1)

    def model(x: torch.Tensor, o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return fn(F.linear(x, w) + o), fn(torch.matmul(x, w.t()) - o)

    assert_same_special_values(_compile(model, (x, other), isa)(x, other), model(x, other), atol=1e-5)


def _attention_inputs(rank: int) -> dict[str, torch.Tensor]:
    """Query rows (``q``): 0 NaN (3-D only), 1 +inf, 2-4 plain; ``q_plain`` has no special
    values.  ``keep`` hides rows 0 and 3 entirely (a plain row 3 gives 0 as eager's
    _safe_softmax; the NaN row stays NaN), and keys 5 (+inf) and 6 (NaN) of ``k_special``
    from row 4; a causal mask hides them from the first rows.  Eager adds the masks, so a NaN
    or +inf score they hide makes the row NaN, except a causal mask in its 4-D flash kernel,
    which never computes the scores it hides.

    That kernel gives a row whose scores are all NaN (a NaN query) 0 or NaN depending on the
    sequence lengths and the host's vector width (its row maximum drops a NaN in a scalar
    tail and keeps it in a vector); Ziggurat gives NaN, as eager's 3-D (math) path.  So only
    the 3-D inputs hold a NaN query."""
    g = torch.Generator().manual_seed(3)
    lead = (2, 3) if rank == 4 else (2,)
    q, k, v = (torch.randn(*lead, n, 8, generator=g) for n in (5, 7, 7))
    q_plain = q.clone()
    if rank == 3:
        q[..., 0, 1] = NAN
    q[..., 1, 2] = INF
    keep = torch.rand(5, 7, generator=g) > 0.3
    keep[0] = False
    keep[3] = False
    keep[4, 5:] = False
    k_special = k.clone()
    k_special[..., 5, 0] = INF
    k_special[..., 6, 0] = NAN
    additive = torch.zeros(5, 7).masked_fill(~keep, -INF)
    return {"q": q, "q_plain": q_plain, "k": k, "k_special": k_special, "v": v, "keep": keep,
            "additive": additive}


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, m: torch.Tensor | None = None) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m)


ATTENTION: dict[str, tuple[Callable[..., torch.Tensor], tuple[str, ...]]] = {
    "no_mask": (_sdpa, ("q", "k", "v")),
    "bool_mask": (_sdpa, ("q", "k", "v", "keep")),
    "float_mask": (_sdpa, ("q", "k", "v", "additive")),
    "bool_mask_hides_special_keys": (_sdpa, ("q", "k_special", "v", "keep")),
    "float_mask_hides_special_keys": (_sdpa, ("q_plain", "k_special", "v", "additive")),
    "causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
               ("q_plain", "k", "v")),
    "causal_hides_special_keys": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                  ("q_plain", "k_special", "v")),
}


@pytest.mark.parametrize("native", [False, True], ids=["decomposed", "native"])
@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("form", sorted(ATTENTION))
@pytest.mark.parametrize("target", TARGETS)
def test_attention_special_scores(target: str, form: str, rank: int, native: bool) -> None:
    """scaled_dot_product_attention through the decomposition and through each backend's own
    lowering of the op (``passes`` without decompose-torch-ops)."""
    if native and target == "reference":
        pytest.skip("the reference runs the op in torch")
    fn, names = ATTENTION[form]
    data = _attention_inputs(rank)
    inputs = tuple(data[n] for n in names)
    options = {"passes": "torch-canonicalize"} if native else {}
    compiled = _compile(fn, inputs, target, **options)
    assert_same_special_values(compiled(*inputs), fn(*inputs))
