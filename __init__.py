"""Ziggurat: a multi-level IR compiler for PyTorch models, built on xDSL.

    import ziggurat
    compiled = ziggurat.compile(model, (x,), backend="cpu")
    y = compiled(x)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ziggurat.ir.version import VERSION as __version__


def compile(model: Any, example_inputs: Any = (), backend: str = "cpu", *,
            example_kwargs: dict[str, Any] | None = None, **options: Any) -> Any:
    """Compile ``model`` for ``example_inputs`` and return an ``nn.Module`` that runs it.

    ``model``: an ``nn.Module``, ``torch.jit.ScriptModule``/``ScriptFunction``, TorchScript
    IR text, or a ``torch.export`` ``ExportedProgram``. ``example_inputs``: a tensor or a
    tuple of positional inputs, ``example_kwargs``: keyword inputs (as ``torch.export`` takes
    them); the compiled module is called as the model is (``compiled(x, mask=m)``), with
    tensors of exactly these shapes/dtypes (any strides: other layouts are copied), and returns
    what the model returns (tuples, dicts, dataclasses, Hugging Face ``ModelOutput``s ...).

    Backends: ``"cpu"`` (native AVX-512/AVX2 code), ``"tensorrt"`` (a TensorRT engine),
    ``"tensorrt-reference"`` (the TensorRT lowering run by the CPU reference executor),
    ``"reference"`` (the reference interpreter).

    Options:
      passes:    pass pipeline override, e.g. ``"graph-opt"`` (default: the backend's).
      prepack:   prepack constant weights into blocked layouts (default True).
      isa:       "auto" | "avx512" | "avx2" | "scalar" (CPU backend).
      threads:   native worker threads (default: torch.get_num_threads() at each call,
                 at most the available cores).
      fallback:  run ops the backend cannot take through torch (default True); with
                 False, compile raises one error listing all of them.
      cache_dir: object-code cache directory (default ~/.cache/ziggurat).
      dump_ir:   directory receiving the IR after every pass as numbered .mlir files.
      verbose:   log pass names and times.
      frontend:  "auto" | "torchscript" | "export" for a plain nn.Module.
      precision: "fp32" (default) | "bf16" | "fp16": the model as it runs under
                 ``torch.autocast`` at that dtype (its casts explicit in the IR, the weights'
                 folded), floating outputs in the model's dtype; needs torch.export.
    Backends take a few of their own (``min_block_size`` for TensorRT, ``profile`` for the CPU);
    an unknown option is an ``UnknownOptionError`` (a ``TypeError``) naming the closest one.
    """
    from ziggurat.backends.driver import compile_model
    from ziggurat.backends.options import CompileOptions

    return compile_model(model, example_inputs, CompileOptions.from_kwargs(backend, options), example_kwargs)


def explain(model: Any, example_inputs: Any = (), backend: str = "cpu", *,
            example_kwargs: dict[str, Any] | None = None, **options: Any) -> Any:
    """Before compiling: every op ``backend`` cannot take (schema, reason, source line), the
    fusions that will apply, and the backend's figures (vectorized share, prepacked bytes,
    memory plan, TensorRT segments). Returns an ``ExplainReport``; ``print(report)``."""
    from ziggurat.backends.explain import explain_model
    from ziggurat.backends.options import CompileOptions

    return explain_model(model, example_inputs, CompileOptions.from_kwargs(backend, options), example_kwargs)


def bisect(model: Any, example_inputs: Any = (), backend: str = "cpu", *,
           example_kwargs: dict[str, Any] | None = None, **options: Any) -> Any:
    """Find the first pass and op whose output diverges from eager (see ``BisectResult``)."""
    from ziggurat.backends.bisect import bisect_model
    from ziggurat.backends.options import CompileOptions

    return bisect_model(model, example_inputs, CompileOptions.from_kwargs(backend, options),
                        example_kwargs=example_kwargs)


def load(path: str | Path) -> Any:
    """Load a module saved with ``compiled.save(path)``, without recompiling (a dynamic-shape
    module builds sizes it was not saved with when it is called with them)."""
    from ziggurat.backends.serialization import load_module

    return load_module(path)


__all__ = ["__version__", "bisect", "compile", "explain", "load"]
