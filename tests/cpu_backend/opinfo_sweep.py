"""Sweep OpInfo samples through the cpu backend and report, per op: native, fallback, mismatch, error.

    .venv/bin/python tests/cpu_backend/opinfo_sweep.py [--isa avx512] [--per-op 4] [name ...]

A development tool (the pytest suite runs a fixed selection, ``test_ops_opinfo.py``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import ziggurat  # noqa: E402
from tests.support.opinfo import assert_same, opinfo_cases  # noqa: E402

DEFAULT = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf erfc exp exp2 expm1 floor log log10 log1p log2 neg "
    "reciprocal round rsqrt sign sin sinh sqrt square tan tanh trunc frac isfinite isinf isnan sigmoid "
    "nn.functional.logsigmoid deg2rad rad2deg logit nan_to_num signbit "
    "add sub rsub mul div.no_rounding_mode div.trunc_rounding div.floor_rounding floor_divide remainder fmod pow "
    "atan2 maximum minimum fmax fmin clamp clamp_min clamp_max eq ne gt ge lt le logical_and logical_or logical_xor "
    "logical_not bitwise_not bitwise_and bitwise_or bitwise_xor where masked_fill lerp addcmul addcdiv hypot "
    "logaddexp xlogy copysign heaviside isclose "
    "nn.functional.relu nn.functional.relu6 nn.functional.leaky_relu nn.functional.elu nn.functional.selu "
    "nn.functional.celu nn.functional.gelu nn.functional.hardtanh nn.functional.hardsigmoid "
    "nn.functional.hardswish nn.functional.silu nn.functional.mish nn.functional.softplus nn.functional.threshold "
    "nn.functional.prelu nn.functional.hardshrink nn.functional.softshrink nn.functional.tanhshrink "
    "reshape view flatten unflatten squeeze unsqueeze permute transpose t expand expand_as repeat tile flip roll "
    "fliplr flipud movedim diagonal narrow select unfold "
    "cat stack hstack vstack split split_with_sizes chunk unbind index_select gather take_along_dim "
    "nn.functional.pixel_shuffle nn.functional.pixel_unshuffle nn.functional.unfold meshgrid.variadic_tensors repeat_interleave "
    "sum mean prod amax amin max.reduction_with_dim min.reduction_with_dim max.reduction_no_dim "
    "min.reduction_no_dim argmax argmin aminmax cumsum cumprod logcumsumexp softmax log_softmax var std var_mean "
    "std_mean logsumexp norm linalg.vector_norm any all count_nonzero nansum "
    "matmul mm bmm addmm baddbmm mv dot einsum nn.functional.linear "
    "nn.functional.conv1d nn.functional.conv2d nn.functional.conv_transpose1d nn.functional.conv_transpose2d "
    "nn.functional.max_pool1d nn.functional.max_pool2d nn.functional.avg_pool1d nn.functional.avg_pool2d "
    "nn.functional.adaptive_avg_pool1d nn.functional.adaptive_avg_pool2d nn.functional.adaptive_max_pool1d "
    "nn.functional.adaptive_max_pool2d "
    "nn.functional.batch_norm nn.functional.layer_norm nn.functional.group_norm nn.functional.instance_norm "
    "nn.functional.rms_norm "
    "nn.functional.pad.constant nn.functional.pad.reflect nn.functional.pad.replicate nn.functional.pad.circular "
    "nn.functional.interpolate.nearest nn.functional.interpolate.bilinear nn.functional.interpolate.linear "
    "nn.functional.embedding nn.functional.scaled_dot_product_attention "
    "zeros_like ones_like full_like arange linspace full zeros ones tril triu "
    "sort argsort topk kthvalue msort scatter scatter_add scatter_reduce.sum scatter_reduce.prod "
    "scatter_reduce.amax scatter_reduce.amin scatter_reduce.mean index_put slice_scatter select_scatter "
    "diagonal_scatter diag diag_embed outer addr bucketize linalg.cross cross trace nn.functional.mse_loss "
    "nn.functional.l1_loss nn.functional.smooth_l1_loss nn.functional.huber_loss nn.functional.kl_div "
    "nn.functional.binary_cross_entropy_with_logits nn.functional.nll_loss nn.functional.cross_entropy "
    "nn.functional.poisson_nll_loss nn.functional.cosine_similarity nn.functional.bilinear "
    "nn.functional.grid_sample nn.functional.interpolate.bicubic"
).split()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*")
    parser.add_argument("--isa", default="avx512")
    parser.add_argument("--per-op", type=int, default=4)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--frontend", default="auto")
    parser.add_argument("-v", action="store_true")
    args = parser.parse_args()
    logging.getLogger("ziggurat").setLevel(logging.ERROR)
    dtype = getattr(torch, args.dtype)
    names = args.names or DEFAULT
    totals = {"native": 0, "partial": 0, "mismatch": 0, "error": 0}
    for name in names:
        cases = opinfo_cases([name], dtype, per_op=args.per_op)
        status: list[str] = []
        for case in cases:
            with torch.no_grad():
                expected = case.module(*[t.clone() for t in case.inputs])
            try:
                compiled = ziggurat.compile(case.module, case.inputs, backend="cpu", isa=args.isa,
                                            frontend=args.frontend)
                actual = compiled(*[t.clone() for t in case.inputs])
            except Exception as e:  # noqa: BLE001
                status.append("E")
                totals["error"] += 1
                msg = str(e).strip().splitlines()
                print(f"  {case.id}: ERROR {type(e).__name__}: {msg[0] if msg else ''}")
                if args.v:
                    traceback.print_exc()
                continue
            try:
                assert_same(actual, expected, op=case.id, shapes_only=case.random, rtol=1e-4, atol=1e-5)
            except AssertionError as e:
                status.append("M")
                totals["mismatch"] += 1
                print(f"  {case.id}: MISMATCH {str(e).splitlines()[0][:300]}")
                continue
            fb = compiled.report.fallback_ops
            if fb:
                status.append("f")
                totals["partial"] += 1
                print(f"  {case.id}: fallback {', '.join(f'{k}: {v[0][:100]}' for k, v in fb.items())}")
            else:
                status.append(".")
                totals["native"] += 1
        print(f"{name:45s} {''.join(status)}")
    print(totals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
