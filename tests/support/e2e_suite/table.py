"""Which program runs each op of the e2e suite: an OpInfo sample where one runs the op, else a
hand-written one (:mod:`handwritten`, :mod:`scripted`)."""

from __future__ import annotations

from pathlib import Path

import tests.support.e2e_suite.handwritten  # noqa: F401 - registers its programs
import tests.support.e2e_suite.scripted  # noqa: F401 - registers its programs
from tests.support.e2e_suite.from_opinfo import opinfo_program
from tests.support.e2e_suite.program import Program, Random
from tests.support.e2e_suite.registry import HANDWRITTEN

SUITE = Path("/work/shared/ops/e2e-suite.txt")

#: ops whose OpInfo has the op's own name
_SAME_NAME = """
_softmax_backward_data abs acos acosh add addbmm addcdiv addcmul addmm all amax amin aminmax any argmax
argmin argsort as_strided asin asinh atan atan2 atanh atleast_1d baddbmm bernoulli bincount bitwise_and
bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm broadcast_tensors broadcast_to
bucketize cat ceil chunk clamp clamp_max clamp_min clone column_stack complex constant_pad_nd contiguous
copysign cos cosh count_nonzero cumprod cumsum deg2rad diag diag_embed diagonal dot einsum empty_like eq erf
exp exp2 expand expand_as expm1 flatten flip fliplr flipud float_power floor floor_divide fmax fmin fmod
frac full_like gather ge gt heaviside hstack index_put index_select isclose isfinite isinf isnan isneginf
isposinf kthvalue ldexp le lerp log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp
logical_and logical_not logical_or logical_xor logit lt masked_fill masked_scatter matmul
max_pool2d_with_indices_backward maximum mean minimum mm movedim mul multinomial mv nan_to_num narrow
native_batch_norm native_group_norm native_layer_norm ne neg new_empty new_empty_strided new_full new_ones
new_zeros nonzero ones_like outer permute polar pow prod rad2deg randn_like real reciprocal remainder renorm
repeat repeat_interleave reshape reshape_as roll rot90 round rsqrt scatter scatter_add select select_scatter
sgn sigmoid sign signbit sin sinh slice softmax sort split split_with_sizes sqrt square squeeze stack std
stft sub sum t tan tanh tensor_split tile to topk trace transpose tril triu trunc unbind unflatten unfold
unsqueeze var var_mean view view_as_complex where xlogy zero_ zeros_like
""".split()

#: ops whose OpInfo is ``nn.functional.<op>``
_FUNCTIONAL = """
adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d
adaptive_max_pool3d avg_pool1d avg_pool2d avg_pool3d batch_norm bilinear binary_cross_entropy_with_logits
celu channel_shuffle cosine_similarity dropout elu embedding embedding_bag gelu glu group_norm hardshrink
hardsigmoid hardswish hardtanh instance_norm kl_div l1_loss layer_norm leaky_relu linear max_pool1d
max_pool2d max_pool3d max_unpool2d max_unpool3d mish mse_loss one_hot pixel_shuffle pixel_unshuffle
poisson_nll_loss prelu relu relu6 rms_norm rrelu scaled_dot_product_attention selu silu softplus softshrink
threshold
""".split()

#: op -> OpInfo, where the names differ (tracing the OpInfo's op records the aten op)
OPINFO: dict[str, str] = {
    **{f"aten::{n}": n for n in _SAME_NAME},
    **{f"aten::{n}": f"nn.functional.{n}" for n in _FUNCTIONAL},
    "aten::div": "div.no_rounding_mode", "aten::fft_rfft": "fft.rfft", "aten::linalg_cross": "linalg.cross",
    "aten::linalg_det": "linalg.det", "aten::linalg_norm": "linalg.norm", "aten::linalg_slogdet": "linalg.slogdet",
    "aten::linalg_vector_norm": "linalg.vector_norm", "aten::max": "max.reduction_with_dim",
    "aten::meshgrid": "meshgrid.variadic_tensors", "aten::min": "min.reduction_with_dim",
    "aten::pad": "nn.functional.pad.constant", "aten::scatter_reduce": "scatter_reduce.sum", "aten::uniform_": "uniform",
    "aten::_convolution": "nn.functional.conv2d", "aten::_safe_softmax": "torch.ops.aten._safe_softmax.default",
    "aten::cross_entropy_loss": "nn.functional.cross_entropy", "aten::grid_sampler": "nn.functional.grid_sample",
    "aten::index": "__getitem__", "aten::log_sigmoid": "nn.functional.logsigmoid", "aten::numpy_T": "T",
    "aten::upsample_bicubic2d": "nn.functional.interpolate.bicubic",
    "aten::upsample_bilinear2d": "nn.functional.interpolate.bilinear",
    "aten::upsample_linear1d": "nn.functional.interpolate.linear",
    "aten::upsample_nearest1d": "nn.functional.interpolate.nearest",
    "aten::upsample_trilinear3d": "nn.functional.interpolate.trilinear",
    "aten::_upsample_nearest_exact1d": "nn.functional.interpolate.nearest-exact",
}

#: OpInfo samples whose values are random or uninitialized: shape, dtype and range are compared
RANDOM: dict[str, Random] = {
    "aten::bernoulli": Random(0.0, 1.0), "aten::multinomial": Random(0, 2), "aten::uniform_": Random(-100.0, 100.0),
    "aten::randn_like": Random(), "aten::rrelu": Random(), "aten::new_empty": Random(),
    "aten::new_empty_strided": Random(), "aten::empty_like": Random(),
}

#: usable OpInfo samples passed over (``one_hot``'s first has ``num_classes=-1``: its shape depends on values)
SKIP: dict[str, int] = {"aten::one_hot": 1}

#: float32 results that legitimately differ more from eager (polynomial approximations, reassociation)
TOLERANCE: dict[str, tuple[float, float]] = {}


def suite_ops() -> list[tuple[str, int]]:
    """(op, how many of the suite's tests use it), in the file's order; empty when the file is absent."""
    if not SUITE.exists():
        return []
    out: list[tuple[str, int]] = []
    for line in SUITE.read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            out.append((parts[0], int(parts[1]) if len(parts) > 1 else 0))
    return out


def program_for(op: str) -> Program:
    """The op's program: its OpInfo sample where the table names one, else the hand-written one."""
    if op in OPINFO:
        rtol, atol = TOLERANCE.get(op, (1e-4, 1e-5))
        return opinfo_program(op, OPINFO[op], random=RANDOM.get(op), rtol=rtol, atol=atol,
                              skip=SKIP.get(op, 0))
    if op in HANDWRITTEN:
        return HANDWRITTEN[op]()
    raise LookupError(f"no program for {op}: add an OpInfo name to OPINFO or a hand-written program")
