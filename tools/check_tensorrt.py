"""Check the TensorRT path on a machine with TensorRT and a GPU: engines vs eager.

    python -m ziggurat.tools.check_tensorrt                      # the example CNN + the smoke zoo
    python -m ziggurat.tools.check_tensorrt --models resnet18 bert-base --fp16
    python -m ziggurat.tools.check_tensorrt --reference          # no GPU: the CPU reference executor

For each model: import, ``graph-opt{prepack=false}``, ``convert-torch-to-trt``, one engine
per segment through the real TensorRT API, run on CUDA, compare with eager (max relative
error); then the executable's payload (the serialized engines, as ``compiled.save`` writes
it) is loaded back without converting or building and must give the same outputs.
``--reference`` runs the same ``trt`` IR on the CPU reference executor instead and
still plans every segment's TensorRT API calls.  Without TensorRT or
a GPU it exits with status 2 and says what is missing (``--reference`` still checks the IR).
Exit status: 0 all models within tolerance, 1 some model failed, 2 TensorRT unavailable.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

DEFAULT_MODELS = ("small-cnn", "mlp-b1", "resnet18", "mobilenet_v2", "bert-base")


@dataclass
class Result:
    model: str
    ok: bool
    error: float | None = None
    detail: str = ""
    seconds: float = 0.0


def _example_models() -> dict[str, tuple[Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]], float]]:
    """name -> (build returning (model, inputs), fp32 tolerance on max relative error)."""
    from ziggurat.examples.small_cnn import build as small_cnn

    models: dict[str, tuple[Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]], float]] = {
        "small-cnn": (small_cnn, 1e-4),
    }
    try:
        from ziggurat.bench.models import MODELS
    except ImportError:
        return models
    for name, spec in MODELS.items():
        models[name] = ((lambda s: lambda: (s.build(), s.example_inputs()))(spec), spec.tolerance)
    return models


def _relative_error(got: Sequence[Any], want: Sequence[Any]) -> float:
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        if isinstance(w, torch.Tensor):
            g = g.detach().cpu().to(torch.float64)
            w = w.detach().cpu().to(torch.float64)
            scale = max(float(w.abs().max()) if w.numel() else 0.0, 1e-12)
            worst = max(worst, float((g - w).abs().max()) / scale if w.numel() else 0.0)
    return worst


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]  # pyright: ignore
    return [value]


def _planned_layers(module: Any) -> int:
    from xdsl.dialects.func import FuncOp

    from ziggurat.backends.tensorrt.emitter import plan_network
    from ziggurat.backends.tensorrt.segments import BACKEND_ATTR

    segments = [op for op in module.ops if isinstance(op, FuncOp) and BACKEND_ATTR in op.attributes]
    return sum(len(plan_network(seg).layers) for seg in segments)


def check_model(name: str, build: Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]], tolerance: float,
                *, reference: bool, fp16: bool, min_block_size: int) -> Result:
    from ziggurat.backends.executable import CompileReport
    from ziggurat.backends.options import CompileOptions
    from ziggurat.backends.tensorrt.backend import TensorRTBackend, TensorRTReferenceBackend
    from ziggurat.ir.importer import import_model
    from ziggurat.ir.pipeline import parse_pipeline, run_pipeline

    start = time.perf_counter()
    model, inputs = build()
    with torch.no_grad():
        expected = _flat(model(*inputs))
    backend = TensorRTReferenceBackend() if reference else TensorRTBackend()
    options = CompileOptions(backend=backend.name, extra={"min_block_size": min_block_size, "fp16": fp16})
    module = import_model(model, list(inputs), frontend="torchscript")
    run_pipeline(module, parse_pipeline(backend.default_pipeline(options)))
    report = CompileReport(backend=backend.name)
    executable = backend.build(module, options, report)
    layers = _planned_layers(module)  # every segment must map onto the TensorRT API
    outputs = executable.run(list(inputs))
    error = _relative_error(outputs, expected)
    limit = tolerance if not fp16 else max(tolerance, 2e-2)
    fallback = sum(len(v) for v in report.fallback_ops.values())
    detail = f"{sum(report.native_ops.values())} ops on TensorRT ({layers} layers), {fallback} in torch"
    reloaded = backend.load(executable.serialize(), module, options).run(list(inputs))
    reload_error = _relative_error(reloaded, outputs)
    if reload_error > 0.0:
        detail += f"; reloaded payload differs by {reload_error:.2e}"
    return Result(name, error <= limit and reload_error == 0.0, error, detail, time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=list(DEFAULT_MODELS), help="model names (see --list)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--fp16", action="store_true", help="build engines with BuilderFlag.FP16")
    parser.add_argument("--min-block-size", type=int, default=1)
    parser.add_argument("--reference", action="store_true",
                        help="run the trt IR on the CPU reference executor instead of TensorRT")
    args = parser.parse_args(argv)
    models = _example_models()
    if args.list:
        print("\n".join(sorted(models)))
        return 0
    unknown = [m for m in args.models if m not in models]
    if unknown:
        print(f"check_tensorrt: unknown model(s) {', '.join(unknown)}; known: {', '.join(sorted(models))}",
              file=sys.stderr)
        return 2
    if not args.reference:
        from ziggurat.backends.tensorrt.availability import tensorrt_unavailable_reason

        reason = tensorrt_unavailable_reason()
        if reason is not None:
            print(f"check_tensorrt: cannot build TensorRT engines here: {reason}", file=sys.stderr)
            return 2
    results: list[Result] = []
    for name in args.models:
        build, tolerance = models[name]
        try:
            result = check_model(name, build, tolerance, reference=args.reference, fp16=args.fp16,
                                 min_block_size=args.min_block_size)
        except Exception as e:  # noqa: BLE001  (report every model, then fail)
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            result = Result(name, False, None, f"{type(e).__name__}: {text}")
        results.append(result)
        error = "-" if result.error is None else f"{result.error:.2e}"
        print(f"{'PASS' if result.ok else 'FAIL'}  {name:<20} max rel err {error:>9}  {result.seconds:6.1f} s  "
              f"{result.detail}", flush=True)
    failed = [r.model for r in results if not r.ok]
    print(f"{len(results) - len(failed)}/{len(results)} models match eager"
          + (f" (failed: {', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
