"""Model-level A/B of a CPU backend option that is a host choice: each zoo model is compiled
with the option False and True, at a precision, and timed interleaved in one process.  Prints
what the second build holds of the option's work, the largest difference between the two
builds' outputs, each build's error against eager under autocast, and median latencies.

- ``activation_tables`` (``look-up-half-float-activations``): 16-bit activations computed or
  looked up; the count is of ``loop.lookup`` ops.
- ``float16_gemms_on_amx`` (``split-float16-gemms``): float16 GEMMs on the float32 kernels or
  split into bf16 ones on AMX where the pass chooses; the count is of AMX GEMMs.

    python bench/option_ab.py --option activation_tables --precision fp16 [--threads 1] [--rounds 9] [models ...]
    python bench/option_ab.py --gelu        # one GELU over 3136x384 of each 16-bit type
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import torch
import torch.utils._pytree as pytree

import ziggurat
from ziggurat.bench.models import MODELS
from ziggurat.bench.timing import measure_interleaved

_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}

#: option -> (the False build's label, the other build's, what it holds of the option's work, and
#: its value: True, or None for the host's own choice where True means "everywhere it can")
OPTIONS = {
    "activation_tables": ("computed", "looked up", "loop.lookup", True),
    "float16_gemms_on_amx": ("float32 kernels", "split", 'bf16_kernel = "amx"', None),
}


def _first_tensor(value: Any) -> torch.Tensor:
    return next(t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor))


def _relative(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got.float() - want.float()).abs().max() / want.float().abs().max().clamp_min(1e-30))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--precision", choices=sorted(_DTYPES), default="fp16")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--option", choices=sorted(OPTIONS), default="activation_tables")
    ap.add_argument("--gelu", action="store_true", help="time one GELU of a 16-bit 3136x384 tensor instead")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.gelu:
        return _gelu(args)
    off, on, marker, value_on = OPTIONS[args.option]
    print(f"| model | precision | {marker} | {off} ms | {on} ms | speed-up | max diff | err vs autocast ({off} / {on}) |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in args.models or ["convnext-blocks", "conv-silu-stack", "resnet18", "mobilenet_v2", "transformer-layer"]:
        spec = MODELS[name]
        model, inputs = spec.build().eval(), tuple(spec.example_inputs())
        builds: dict[str, Any] = {}
        for label, value in ((off, False), (on, value_on)):
            chosen: dict[str, Any] = {} if value is None else {args.option: value}
            builds[label] = ziggurat.compile(model, inputs, backend="cpu", precision=args.precision,
                                             threads=args.threads, **chosen)
        with torch.no_grad(), torch.autocast("cpu", dtype=_DTYPES[args.precision]):
            ref = _first_tensor(model(*inputs))
        with torch.no_grad():
            outs = {label: _first_tensor(fn(*inputs)) for label, fn in builds.items()}
            timings = measure_interleaved(dict(builds), inputs, 3, args.rounds, 5.0)
        med = {k: statistics.median(t.samples_ms) for k, t in timings.items()}
        count = builds[on].ir["loop"].count(marker)
        diff = float((outs[on].float() - outs[off].float()).abs().max())
        print(f"| {name} | {args.precision} | {count} | {med[off]:.3f} | {med[on]:.3f} | "
              f"{med[off] / med[on]:.3f}x | {diff:.2e} | "
              f"{_relative(outs[off], ref):.2e} / {_relative(outs[on], ref):.2e} |", flush=True)
    return 0


class _Gelu(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


def _gelu(args: argparse.Namespace) -> int:
    print("| GELU 3136x384 | elements off eager (computed / looked up) | eager ms | computed ms | looked up ms |")
    print("|---|---|---:|---:|---:|")
    for label, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        x = (torch.randn(3136, 384, generator=torch.Generator().manual_seed(0)) * 2).to(dtype)
        model = _Gelu()
        runners: dict[str, Any] = {"eager": model}
        off = []
        for name, tables in (("computed", False), ("looked up", True)):
            runners[name] = ziggurat.compile(model, (x,), backend="cpu", threads=args.threads, activation_tables=tables)
            off.append(int((runners[name](x).view(torch.int16) != model(x).view(torch.int16)).sum()))
        timings = measure_interleaved(runners, (x,), 3, args.rounds, 5.0)
        med = {k: statistics.median(t.samples_ms) for k, t in timings.items()}
        print(f"| {label} | {off[0]} / {off[1]} | {med['eager']:.3f} | {med['computed']:.3f} | {med['looked up']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
