"""Element-wise op specs: unary math and activations, binary arithmetic, comparisons, logic.

Domains are kept by wrapping operands in the graph itself (``x.abs() + 0.125`` before a
log), so the program stays valid on call-time inputs too, not only on the examples.
"""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit, Value
from tests.fuzz.registry import add_spec, spec

F32 = (torch.float32,)
INTS = (torch.int64, torch.int32)
NUMS = (torch.float32, torch.int64, torch.int32)
LOGIC = (torch.bool, torch.int64, torch.int32)

POSITIVE = "({x}.abs() + 0.125)"
UNIT = "{x}.clamp(-0.875, 0.875)"
BOUNDED = "{x}.clamp(-8.0, 8.0)"

#: name -> (expression of {x}, operand wrapper or None)
UNARY_FLOAT: dict[str, tuple[str, str | None]] = {
    "abs": ("torch.abs({x})", None), "absolute": ("torch.absolute({x})", None),
    "neg": ("torch.neg({x})", None), "negative": ("torch.negative({x})", None),
    "positive": ("torch.positive({x}) * 1.0", None),
    "ceil": ("torch.ceil({x})", None), "floor": ("torch.floor({x})", None), "round": ("torch.round({x})", None),
    "trunc": ("torch.trunc({x})", None), "fix": ("torch.fix({x})", None), "frac": ("torch.frac({x})", None),
    "sign": ("torch.sign({x})", None), "sgn": ("torch.sgn({x})", None), "signbit": ("torch.signbit({x})", None),
    "sigmoid": ("torch.sigmoid({x})", None), "tanh": ("torch.tanh({x})", None),
    "sin": ("torch.sin({x})", None), "cos": ("torch.cos({x})", None), "tan": ("torch.tan({x})", "{x}.clamp(-1.4, 1.4)"),
    "atan": ("torch.atan({x})", None), "arctan": ("torch.arctan({x})", None),
    "asinh": ("torch.asinh({x})", None), "arcsinh": ("torch.arcsinh({x})", None),
    "asin": ("torch.asin({x})", UNIT), "arcsin": ("torch.arcsin({x})", UNIT),
    "acos": ("torch.acos({x})", UNIT), "arccos": ("torch.arccos({x})", UNIT),
    "atanh": ("torch.atanh({x})", UNIT), "arctanh": ("torch.arctanh({x})", UNIT),
    "acosh": ("torch.acosh({x})", "({x}.abs() + 1.0)"), "arccosh": ("torch.arccosh({x})", "({x}.abs() + 1.0)"),
    "sinh": ("torch.sinh({x})", BOUNDED), "cosh": ("torch.cosh({x})", BOUNDED),
    "erf": ("torch.erf({x})", None), "erfc": ("torch.erfc({x})", None),
    "exp": ("torch.exp({x})", BOUNDED), "exp2": ("torch.exp2({x})", BOUNDED), "expm1": ("torch.expm1({x})", BOUNDED),
    "log": ("torch.log({x})", POSITIVE), "log2": ("torch.log2({x})", POSITIVE),
    "log10": ("torch.log10({x})", POSITIVE), "log1p": ("torch.log1p({x})", "{x}.abs()"),
    "sqrt": ("torch.sqrt({x})", "{x}.abs()"), "rsqrt": ("torch.rsqrt({x})", POSITIVE),
    "reciprocal": ("torch.reciprocal({x})", POSITIVE), "square": ("torch.square({x})", None),
    "deg2rad": ("torch.deg2rad({x})", None), "rad2deg": ("torch.rad2deg({x})", None),
    "relu": ("torch.relu({x})", None), "relu6": ("F.relu6({x})", None),
    "gelu": ("F.gelu({x})", None), "gelu_tanh": ("F.gelu({x}, approximate='tanh')", None),
    "silu": ("F.silu({x})", None), "mish": ("F.mish({x})", None),
    "hardsigmoid": ("F.hardsigmoid({x})", None), "hardswish": ("F.hardswish({x})", None),
    "hardtanh": ("F.hardtanh({x}, -1.5, 2.25)", None), "elu": ("F.elu({x}, alpha=0.75)", None),
    "selu": ("F.selu({x})", None), "celu": ("F.celu({x}, alpha=1.5)", None),
    "leaky_relu": ("F.leaky_relu({x}, 0.125)", None), "softplus": ("F.softplus({x}, beta=2.0, threshold=5.0)", None),
    "logsigmoid": ("F.logsigmoid({x})", None), "hardshrink": ("F.hardshrink({x}, 0.5)", None),
    "softshrink": ("F.softshrink({x}, 0.25)", None), "threshold": ("F.threshold({x}, 0.25, -2.0)", None),
    "tanhshrink": ("F.tanhshrink({x})", None), "logit": ("torch.logit({x}, eps=1e-3)", "torch.sigmoid({x})"),
    "logit_noeps": ("torch.logit({x})", "(torch.sigmoid({x}) * 0.5 + 0.25)"),
    "nan_to_num": ("torch.nan_to_num({x}, nan=0.5, posinf=100.0, neginf=-100.0)", None),
    "isfinite": ("torch.isfinite({x})", None), "isinf": ("torch.isinf({x})", None),
    "isnan": ("torch.isnan({x})", None), "isneginf": ("torch.isneginf({x})", None),
    "isposinf": ("torch.isposinf({x})", None),
    "dropout_eval": ("F.dropout({x}, p=0.25, training=False)", None),
    "alpha_dropout_eval": ("F.alpha_dropout({x}, p=0.25, training=False)", None),
    "feature_dropout_eval": ("torch.feature_dropout({x}, 0.25, False)", None),
}

#: in-place forms (on a fresh clone), name -> method
INPLACE_FLOAT = {
    "abs_": "abs_()", "neg_": "neg_()", "ceil_": "ceil_()", "floor_": "floor_()", "round_": "round_()",
    "trunc_": "trunc_()", "frac_": "frac_()", "sign_": "sign_()", "sigmoid_": "sigmoid_()", "tanh_": "tanh_()",
    "sin_": "sin_()", "cos_": "cos_()", "erf_": "erf_()", "relu_": "relu_()", "square_": "square_()",
    "exp_": "clamp_(-8.0, 8.0).exp_()", "log_": "abs_().add_(0.125).log_()", "sqrt_": "abs_().sqrt_()",
    "rsqrt_": "abs_().add_(0.125).rsqrt_()", "reciprocal_": "abs_().add_(0.5).reciprocal_()",
    "hardtanh_": "clamp_(-1.0, 1.0)", "deg2rad_": "deg2rad_()", "expm1_": "clamp_(-8.0, 8.0).expm1_()",
    "log1p_": "abs_().log1p_()", "nan_to_num_": "nan_to_num_(0.0)",
}

UNARY_INT: dict[str, str] = {
    "abs_int": "torch.abs({x})", "neg_int": "torch.neg({x})", "sign_int": "torch.sign({x})",
    "square_int": "torch.square({x})", "bitwise_not_int": "torch.bitwise_not({x})", "relu_int": "torch.relu({x})",
    "clamp_int": "torch.clamp({x}, -3, 4)", "clamp_min_int": "torch.clamp_min({x}, -2)",
    "clamp_max_int": "torch.clamp_max({x}, 5)", "invert_int": "~{x}",
}

UNARY_BOOL: dict[str, str] = {
    "logical_not": "torch.logical_not({x})", "bitwise_not_bool": "torch.bitwise_not({x})", "invert_bool": "~{x}",
    "logical_not_num": "torch.logical_not({x})",
}


def _unary(template: str, wrap: str | None, dtypes: tuple[torch.dtype, ...]):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> Emit:
        x = b.pick(dtypes)
        operand = wrap.format(x=x) if wrap else x.name
        return template.format(x=operand)

    return make


def _inplace(method: str):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> Emit:
        return f"{b.pick_float()}.clone().{method}"

    return make


for _name, (_tpl, _wrap) in UNARY_FLOAT.items():
    add_spec(_name, _unary(_tpl, _wrap, F32), family="unary")
for _name, _method in INPLACE_FLOAT.items():
    add_spec(_name, _inplace(_method), weight=0.5, family="unary")
for _name, _tpl in UNARY_INT.items():
    add_spec(_name, _unary(_tpl, None, INTS), family="unary")
for _name, _tpl in UNARY_BOOL.items():
    add_spec(_name, _unary(_tpl, None, (torch.bool,) if _name != "logical_not_num" else NUMS), family="unary")


#: ``UNARY_FLOAT``'s functions that the CPU kernels look up for a 16-bit value
#: (``backends/cpu/codegen/lookup.py``'s tables)
HALF_ACTIVATIONS = ("gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "mish", "selu", "exp", "exp2", "expm1",
                    "log", "log2", "log10", "log1p", "erf", "erfc", "sin", "cos")


@spec("half_activation", weight=0.0, family="unary")
def _half_activation(b: Builder) -> Emit:
    """One of those functions of a float32 value cast to bf16 or float16, cast back: on AVX-512
    hosts with AMX the CPU kernel reads the 16-bit answer from a table of eager's
    (``loop.lookup``); or, a fifth of the time, a softmax over any dim (over another than the
    last, eager's 16-bit kernel rounds inside: the TensorRT path converted it anyway).  Of
    weight 0 but in the ``half-activations`` profile."""
    x = b.pick_float(min_rank=1)
    half = f"{x}.to({b.choice(['torch.bfloat16', 'torch.float16'])})"
    if b.chance(0.2):  # eager's 16-bit softmax rounds inside over another dim than the last
        return f"torch.softmax({half}, dim={b.dim(x.rank)}).float()"
    template, wrap = UNARY_FLOAT[b.choice(HALF_ACTIVATIONS)]
    return template.format(x=wrap.format(x=half) if wrap else half) + ".float()"


@spec("clamp", family="unary")
def _clamp(b: Builder) -> Emit:
    x = b.pick_float()
    lo, hi = sorted(b.rng.sample([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0], 2))
    return b.choice([f"torch.clamp({x}, min={lo})", f"torch.clamp({x}, max={hi})", f"torch.clip({x}, {lo}, {hi})",
                     f"torch.clamp_min({x}, {lo})", f"torch.clamp({x}, {lo}, {hi})"])


@spec("round_decimals", weight=0.3, family="unary")
def _round_decimals(b: Builder) -> Emit:
    return f"torch.round({b.pick_float()}, decimals={b.choice([1, 2, -1])})"


# ---- binary -------------------------------------------------------------------------------

def _div_safe(b: Builder, d: Value) -> str:
    """A divisor without zeros (integers: division by zero is an error in eager)."""
    if d.is_float:
        return f"({d}.abs() + 0.5)" if b.chance(0.7) else f"torch.where({d} == 0, 1.0, {d})"
    return f"torch.where({d} == 0, 1, {d})" if b.chance(0.5) else f"({d}.abs() + 1)"


BINARY: dict[str, tuple[str, tuple[torch.dtype, ...], str]] = {
    # name -> (expression of {a}, {b}; operand dtypes; divisor handling: "" | "div" | "pos" | "shift")
    "add": ("torch.add({a}, {b})", NUMS, ""), "add_alpha": ("torch.add({a}, {b}, alpha=2)", NUMS, ""),
    "sub": ("torch.sub({a}, {b})", NUMS, ""), "sub_alpha": ("torch.sub({a}, {b}, alpha=3)", NUMS, ""),
    "subtract": ("torch.subtract({a}, {b})", NUMS, ""), "rsub": ("torch.rsub({a}, {b})", NUMS, ""),
    "mul": ("torch.mul({a}, {b})", NUMS, ""), "multiply": ("torch.multiply({a}, {b})", NUMS, ""),
    "add_op": ("{a} + {b}", NUMS, ""), "sub_op": ("{a} - {b}", NUMS, ""), "mul_op": ("{a} * {b}", NUMS, ""),
    "div": ("torch.div({a}, {b})", NUMS, "div"), "true_divide": ("torch.true_divide({a}, {b})", NUMS, "div"),
    "divide": ("torch.divide({a}, {b})", NUMS, "div"), "div_op": ("{a} / {b}", NUMS, "div"),
    "div_trunc": ("torch.div({a}, {b}, rounding_mode='trunc')", NUMS, "div"),
    "div_floor": ("torch.div({a}, {b}, rounding_mode='floor')", NUMS, "div"),
    "floor_divide": ("torch.floor_divide({a}, {b})", NUMS, "div"), "floordiv_op": ("{a} // {b}", NUMS, "div"),
    "remainder": ("torch.remainder({a}, {b})", NUMS, "div"), "mod_op": ("{a} % {b}", NUMS, "div"),
    "fmod": ("torch.fmod({a}, {b})", NUMS, "div"),
    "pow": ("torch.pow({a}, {b})", F32, "pow"), "pow_int": ("torch.pow({a}, {b})", INTS, "ipow"),
    "float_power": ("torch.float_power({a}, {b}).to(torch.float32)", F32, "pow"),
    "atan2": ("torch.atan2({a}, {b})", F32, ""), "arctan2": ("torch.arctan2({a}, {b})", F32, ""),
    "maximum": ("torch.maximum({a}, {b})", NUMS, ""), "minimum": ("torch.minimum({a}, {b})", NUMS, ""),
    "max_other": ("torch.max({a}, {b})", NUMS, ""), "min_other": ("torch.min({a}, {b})", NUMS, ""),
    "fmax": ("torch.fmax({a}, {b})", NUMS, ""), "fmin": ("torch.fmin({a}, {b})", NUMS, ""),
    "hypot": ("torch.hypot({a}, {b})", F32, ""), "logaddexp": ("torch.logaddexp({a}, {b})", F32, ""),
    "logaddexp2": ("torch.logaddexp2({a}, {b})", F32, ""), "xlogy": ("torch.xlogy({a}, {b})", F32, "pos"),
    "copysign": ("torch.copysign({a}, {b})", F32, ""), "heaviside": ("torch.heaviside({a}, {b})", NUMS, ""),
    "clamp_tensor": ("torch.clamp({a}, min={b})", NUMS, ""), "clamp_max_tensor": ("torch.clamp_max({a}, {b})", NUMS, ""),
    "clamp_min_tensor": ("torch.clamp_min({a}, {b})", NUMS, ""),
    "lerp_scalar": ("torch.lerp({a}, {b}, 0.375)", F32, ""),
    "isclose": ("torch.isclose({a}, {b}, rtol=0.05, atol=0.25)", F32, ""),
    "eq": ("torch.eq({a}, {b})", NUMS, ""), "ne": ("torch.ne({a}, {b})", NUMS, ""),
    "gt": ("torch.gt({a}, {b})", NUMS, ""), "ge": ("torch.ge({a}, {b})", NUMS, ""),
    "lt": ("torch.lt({a}, {b})", NUMS, ""), "le": ("torch.le({a}, {b})", NUMS, ""),
    "greater": ("torch.greater({a}, {b})", NUMS, ""), "greater_equal": ("torch.greater_equal({a}, {b})", NUMS, ""),
    "less": ("torch.less({a}, {b})", NUMS, ""), "less_equal": ("torch.less_equal({a}, {b})", NUMS, ""),
    "not_equal": ("torch.not_equal({a}, {b})", NUMS, ""),
    "eq_op": ("{a} == {b}", NUMS, ""), "lt_op": ("{a} < {b}", NUMS, ""), "ge_op": ("{a} >= {b}", NUMS, ""),
    "logical_and": ("torch.logical_and({a}, {b})", LOGIC, ""), "logical_or": ("torch.logical_or({a}, {b})", LOGIC, ""),
    "logical_xor": ("torch.logical_xor({a}, {b})", LOGIC, ""),
    "bitwise_and": ("torch.bitwise_and({a}, {b})", LOGIC, ""), "bitwise_or": ("torch.bitwise_or({a}, {b})", LOGIC, ""),
    "bitwise_xor": ("torch.bitwise_xor({a}, {b})", LOGIC, ""),
    "and_op": ("{a} & {b}", LOGIC, ""), "or_op": ("{a} | {b}", LOGIC, ""), "xor_op": ("{a} ^ {b}", LOGIC, ""),
    "lshift": ("torch.bitwise_left_shift({a}, {b})", INTS, "shift"),
    "rshift": ("torch.bitwise_right_shift({a}, {b})", INTS, "shift"),
    "lshift_op": ("{a} << {b}", INTS, "shift"), "rshift_op": ("{a} >> {b}", INTS, "shift"),
}


def _second(b: Builder, a: Value, dtypes: tuple[torch.dtype, ...]) -> Value:
    if b.chance(0.15):  # mixed dtypes: type promotion
        other = b.choice([d for d in dtypes if d != a.dtype] or [a.dtype])
        return b.partner(a, other)
    return b.partner(a)


def _binary(template: str, dtypes: tuple[torch.dtype, ...], kind: str):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> Emit:
        a = b.pick(dtypes)
        other = _second(b, a, dtypes)
        x, y = a.name, other.name
        if b.chance(0.5):  # either operand may be the broadcast one
            x, y = y, x
        if kind == "div":
            y = _div_safe(b, a if y == a.name else other)
        elif kind == "pos":
            y = f"({y}.abs() + 0.125)"
        elif kind == "pow":
            x, y = f"({x}.abs() + 0.25)", f"{y}.clamp(-3.0, 3.0)"
        elif kind == "ipow":
            y = f"{y}.abs().clamp(max=3)"
        elif kind == "shift":
            y = f"{y}.abs().clamp(max=7)"
        return template.format(a=x, b=y)

    return make


for _name, (_tpl, _dts, _kind) in BINARY.items():
    add_spec(_name, _binary(_tpl, _dts, _kind), family="binary")


#: ops with a Python scalar operand: name -> (expression of {a} and {s}, dtypes, scalars)
SCALAR: dict[str, tuple[str, tuple[torch.dtype, ...], tuple[object, ...]]] = {
    "add_scalar": ("torch.add({a}, {s})", NUMS, (2, -1.5, 0.25)), "radd_scalar": ("{s} + {a}", NUMS, (3, 0.5)),
    "sub_scalar": ("torch.sub({a}, {s})", NUMS, (1, 2.5)), "rsub_scalar": ("torch.rsub({a}, {s})", NUMS, (1, 2.5)),
    "rsub_op_scalar": ("{s} - {a}", NUMS, (1, 0.75)), "mul_scalar": ("{a} * {s}", NUMS, (3, -0.5, 1.25)),
    "div_scalar": ("torch.div({a}, {s})", NUMS, (3, -2.5, 0.5)), "rdiv_scalar": ("{s} / ({a}.abs() + 1)", NUMS, (2, 1.5)),
    "div_scalar_trunc": ("torch.div({a}, {s}, rounding_mode='trunc')", NUMS, (3, -2, 2.5, -0.75)),
    "div_scalar_floor": ("torch.div({a}, {s}, rounding_mode='floor')", NUMS, (3, -2, 2.5, -0.75)),
    "floor_divide_scalar": ("torch.floor_divide({a}, {s})", NUMS, (3, -2, 1.5)),
    "remainder_scalar": ("torch.remainder({a}, {s})", NUMS, (3, -2, 1.5, -0.75)),
    "remainder_scalar_tensor": ("torch.remainder({s}, {a}.abs() + 1)", NUMS, (7, 2.5)),
    "fmod_scalar": ("torch.fmod({a}, {s})", NUMS, (3, -2, 1.5)),
    "pow_scalar": ("torch.pow({a}, {s})", NUMS, (2, 3, 0)), "pow_frac": ("torch.pow({a}.abs(), {s})", F32, (0.5, 1.5, -1.0)),
    "rpow": ("torch.pow({s}, {a}.clamp(-4, 4))", NUMS, (2, 0.5, 3.0)), "pow_op": ("{a} ** {s}", NUMS, (2, 3)),
    "eq_scalar": ("torch.eq({a}, {s})", NUMS, (0, 1, 0.25)), "ne_scalar": ("torch.ne({a}, {s})", NUMS, (0, 2)),
    "gt_scalar": ("torch.gt({a}, {s})", NUMS, (0, -0.5)), "ge_scalar": ("{a} >= {s}", NUMS, (0, 1)),
    "lt_scalar": ("torch.lt({a}, {s})", NUMS, (0, 0.5)), "le_scalar": ("{a} <= {s}", NUMS, (0, -1)),
    "maximum_scalar": ("torch.clamp_min({a}, {s})", NUMS, (0, -1)),
    "bitwise_and_scalar": ("torch.bitwise_and({a}, {s})", INTS, (3, 5, -2)),
    "bitwise_or_scalar": ("torch.bitwise_or({a}, {s})", INTS, (4, 1)),
    "bitwise_xor_scalar": ("torch.bitwise_xor({a}, {s})", INTS, (6, -1)),
    "and_scalar_op": ("{a} & {s}", INTS, (3, 12)), "or_scalar_op": ("{a} | {s}", INTS, (1, 8)),
    "xor_scalar_op": ("{a} ^ {s}", INTS, (5,)),
    "bitwise_and_scalar_tensor": ("torch.bitwise_and({s}, {a})", INTS, (6,)),
    "lshift_scalar": ("torch.bitwise_left_shift({a}, {s})", INTS, (1, 3)), "rshift_scalar": ("{a} >> {s}", INTS, (1, 2)),
    "lshift_scalar_tensor": ("torch.bitwise_left_shift({s}, {a}.abs().clamp(max=5))", INTS, (1, 3)),
    "rshift_scalar_tensor": ("torch.bitwise_right_shift({s}, {a}.abs().clamp(max=5))", INTS, (100, -64)),
    "xlogy_scalar_self": ("torch.xlogy({s}, {a}.abs() + 0.125)", F32, (2.0, 0.5)),
    "xlogy_scalar_other": ("torch.xlogy({a}, {s})", F32, (3.0, 0.5)),
    "copysign_scalar": ("torch.copysign({a}, {s})", F32, (-1.0, 2.0)),
    "lerp_scalar_weight": ("torch.lerp({a}, {a} * 2, {s})", F32, (0.25, 1.5)),
    "float_power_scalar": ("torch.float_power({s}, {a}.clamp(-3, 3)).to(torch.float32)", F32, (2.0, 1.5)),
    "logical_and_scalar": ("torch.logical_and({a}, {a} > {s})", NUMS, (0,)),
}


def _scalar(template: str, dtypes: tuple[torch.dtype, ...], scalars: tuple[object, ...]):  # type: ignore[no-untyped-def]
    def make(b: Builder) -> Emit:
        a = b.pick(dtypes)
        s = b.choice(list(scalars))
        if a.is_int and isinstance(s, float) and b.chance(0.5):
            s = int(s) or 1
        return template.format(a=a, s=s)

    return make


for _name, (_tpl, _dts, _sc) in SCALAR.items():
    add_spec(_name, _scalar(_tpl, _dts, _sc), weight=0.7, family="scalar")


@spec("where", family="ternary")
def _where(b: Builder) -> Emit:
    x = b.pick((torch.float32, torch.int64, torch.int32, torch.bool))
    y = b.partner(x)
    cond = b.partner(x, torch.bool)
    forms = [lambda: f"torch.where({cond}, {x}, {y})", lambda: f"torch.where({cond}, {x}, {b.choice([0, 1.5, -2])})",
             lambda: f"torch.where({cond}, {b.choice([0, 2.5])}, {x})", lambda: f"torch.where({cond}, 1.0, -1.0)"]
    return b.choice(forms)()


@spec("where_cmp", family="ternary")
def _where_cmp(b: Builder) -> Emit:
    x = b.pick(NUMS)
    y = b.partner(x)
    return f"torch.where({x} > {y}, {x}, {y})"


@spec("masked_fill", family="ternary")
def _masked_fill(b: Builder) -> Emit:
    x = b.pick(NUMS + (torch.bool,))
    mask = b.partner(x, torch.bool)
    value = b.choice([0, -1, 2.5]) if not x.is_bool else b.choice([True, False])
    if x.is_int and isinstance(value, float):
        value = 3
    if b.chance(0.3):
        return f"{x}.masked_fill({mask}, torch.tensor({value}))"
    return f"torch.masked_fill({x}, {mask}, {value})"


@spec("addcmul", family="ternary")
def _addcmul(b: Builder) -> Emit:
    x = b.pick_float()
    return f"torch.addcmul({x}, {b.partner(x)}, {b.partner(x)}, value={b.choice([1, 0.5, -2])})"


@spec("addcdiv", family="ternary")
def _addcdiv(b: Builder) -> Emit:
    x = b.pick_float()
    return f"torch.addcdiv({x}, {b.partner(x)}, {b.partner(x)}.abs() + 0.5, value={b.choice([1, 0.25, -2])})"


@spec("lerp_tensor", family="ternary")
def _lerp(b: Builder) -> Emit:
    x = b.pick_float()
    return f"torch.lerp({x}, {b.partner(x)}, torch.sigmoid({b.partner(x)}))"


@spec("cast", weight=2.0, family="cast")
def _cast(b: Builder) -> Emit:
    x = b.pick((torch.float32, torch.int64, torch.int32, torch.bool))
    target = b.choice([t for t in ("float32", "int64", "int32", "bool") if t != str(x.dtype)[6:]])
    if x.is_float and target in ("int64", "int32"):
        x_name = f"{x}.clamp(-1e6, 1e6)"  # float -> int is undefined out of range
    else:
        x_name = x.name
    form = b.rng.randrange(3)
    if form == 0:
        return f"{x_name}.to(torch.{target})"
    if form == 1 and target != "float32":
        method = {"int64": "long", "int32": "int", "bool": "bool"}[target]
        return f"{x_name}.{method}()"
    return f"{x_name}.to(dtype=torch.{target})"


@spec("type_as", weight=0.5, family="cast")
def _type_as(b: Builder) -> Emit:
    x = b.pick((torch.int64, torch.int32, torch.bool))
    y = b.pick_float()
    return f"{x}.type_as({y})" if b.chance(0.5) else f"{y}.clamp(-1e6, 1e6).type_as({x})"

