"""Run OpInfo samples through import -> convert-torch-to-trt -> reference executor and compare with eager."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from conversion_harness import Wrap, _flat
from ziggurat.backends.tensorrt.segments import PartitionOptions
from ziggurat.ir.importer import import_model
from ziggurat.ir.interpreter import run
from ziggurat.backends.tensorrt.convert_torch_to_trt import convert_module

#: OpInfo names (``name`` or ``name.variant``) whose samples exercise the converters.
OPINFOS = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf exp exp2 expm1 floor log log10 log1p log2 neg "
    "reciprocal round rsqrt sign sin sinh sqrt square tan tanh trunc frac isfinite isinf isnan sigmoid "
    "add sub rsub mul div.no_rounding_mode div.trunc_rounding div.floor_rounding floor_divide remainder pow atan2 "
    "maximum minimum clamp clamp_min clamp_max eq ne gt ge lt le logical_and logical_or logical_xor logical_not "
    "bitwise_not where masked_fill "
    "nn.functional.relu nn.functional.relu6 nn.functional.leaky_relu nn.functional.elu nn.functional.selu "
    "nn.functional.gelu nn.functional.hardtanh nn.functional.hardsigmoid nn.functional.hardswish "
    "nn.functional.silu nn.functional.mish nn.functional.softplus nn.functional.threshold nn.functional.prelu "
    "reshape view flatten unflatten squeeze unsqueeze permute transpose t expand expand_as repeat tile flip roll "
    "cat stack split split_with_sizes chunk unbind narrow select index_select gather take_along_dim "
    "nn.functional.pixel_shuffle meshgrid.variadic_tensors repeat_interleave "
    "sum mean prod amax amin max.reduction_with_dim min.reduction_with_dim max.reduction_no_dim "
    "min.reduction_no_dim argmax argmin topk cumsum softmax log_softmax var std norm linalg.vector_norm any all "
    "matmul mm bmm addmm baddbmm einsum nn.functional.linear "
    "nn.functional.conv1d nn.functional.conv2d nn.functional.conv3d nn.functional.conv_transpose1d "
    "nn.functional.conv_transpose2d nn.functional.max_pool1d nn.functional.max_pool2d nn.functional.avg_pool1d "
    "nn.functional.avg_pool2d nn.functional.avg_pool3d nn.functional.adaptive_avg_pool1d "
    "nn.functional.adaptive_avg_pool2d nn.functional.adaptive_max_pool2d "
    "nn.functional.batch_norm nn.functional.layer_norm nn.functional.group_norm nn.functional.instance_norm "
    "nn.functional.pad.constant nn.functional.pad.reflect nn.functional.pad.replicate nn.functional.pad.circular "
    "nn.functional.interpolate.nearest nn.functional.interpolate.bilinear nn.functional.interpolate.linear "
    "nn.functional.interpolate.trilinear nn.functional.embedding nn.functional.scaled_dot_product_attention "
    "zeros_like ones_like full_like fake_quantize_per_tensor_affine"
).split()


@dataclass
class Outcome:
    name: str
    samples: int = 0
    converted: int = 0  # samples whose every op went to TensorRT
    partial: int = 0
    skipped: int = 0  # samples the frontend cannot trace (not a converter matter)
    mismatches: list[str] = field(default_factory=list[str])
    fallback_reasons: list[str] = field(default_factory=list[str])


def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    from tests.support.opinfo import op_db as fast_db

    fast_db()  # samples without the per-iterator stack walk

    return {o.name + (f".{o.variant_test_name}" if o.variant_test_name else ""): o for o in op_db}


def _split(sample: Any) -> tuple[list[torch.Tensor], Any]:
    """Tensor inputs (traced) and a function of them that rebuilds the call."""
    tensors: list[torch.Tensor] = []

    def lift(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            tensors.append(value.detach())
            return ("__tensor__", len(tensors) - 1)
        if isinstance(value, list | tuple):
            lifted = [lift(v) for v in value]  # pyright: ignore
            return lifted if isinstance(value, list) else tuple(lifted)
        return value

    template = (lift(sample.input), lift(list(sample.args)), {k: lift(v) for k, v in sample.kwargs.items()})

    def rebuild(value: Any, ts: tuple[torch.Tensor, ...]) -> Any:
        if isinstance(value, tuple) and len(value) == 2 and value[0] == "__tensor__":
            return ts[value[1]]
        if isinstance(value, list):
            return [rebuild(v, ts) for v in value]  # pyright: ignore
        if isinstance(value, tuple):
            return tuple(rebuild(v, ts) for v in value)  # pyright: ignore
        return value

    return tensors, (template, rebuild)


def samples(name: str, limit: int | None) -> Iterator[Any]:
    info = _opinfos()[name]
    for i, sample in enumerate(info.sample_inputs("cpu", torch.float32, requires_grad=False)):
        if limit is not None and i >= limit:
            return
        yield info, sample


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return torch.equal(a, b) or bool(torch.isnan(a).any()) and torch.allclose(a, b, equal_nan=True)
    return a == b


def run_opinfo(name: str, limit: int | None = 3) -> Outcome:
    outcome = Outcome(name)
    for index, (info, sample) in enumerate(samples(name, limit)):
        tensors, (template, rebuild) = _split(sample)
        if not tensors:
            continue
        if sample.kwargs.get("dropout_p", 0.0) or sample.kwargs.get("training") is True:
            outcome.skipped += 1  # random (the OpInfo may seed it in Python, which tracing does not see)
            continue
        inp, args, kwargs = template

        def fn(*ts: torch.Tensor, _op: Any = info.op, _i: Any = inp, _a: Any = args, _k: Any = kwargs) -> Any:
            return _op(rebuild(_i, ts), *rebuild(_a, ts), **{k: rebuild(v, ts) for k, v in _k.items()})

        model = Wrap(fn).eval()
        try:
            with torch.no_grad():
                expected = _flat(model(*[t.clone() for t in tensors]))
                again = _flat(model(*[t.clone() for t in tensors]))
            if not all(_same(a, b) for a, b in zip(again, expected, strict=True)):
                outcome.skipped += 1  # random ops (dropout): nothing to compare with
                continue
            module = import_model(model, [t.clone() for t in tensors], frontend="torchscript")
        except Exception:  # noqa: BLE001  (the frontend's business, not the converters')
            outcome.skipped += 1
            continue
        if not all(isinstance(e, torch.Tensor) for e in expected):
            outcome.skipped += 1
            continue
        outcome.samples += 1
        (report,) = convert_module(module, PartitionOptions(min_block_size=1))
        module.verify()
        outputs = run(module, [t.clone() for t in tensors])
        if report.fallback:
            outcome.partial += 1
            outcome.fallback_reasons += [f"{r.op.split(' @ ')[0]}: {r.reason}" for r in report.fallback]
        else:
            outcome.converted += 1
        for got, want in zip(outputs, expected, strict=True):
            try:
                torch.testing.assert_close(got, want, rtol=2e-4, atol=2e-5, equal_nan=True)
            except AssertionError as e:
                outcome.mismatches.append(f"OpInfo sample {index}: {str(e).strip().splitlines()[0]}")
    return outcome
