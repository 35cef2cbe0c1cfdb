"""Memory of ``ziggurat.compile``: the peak RSS rise during a compile and what stays after it.

    python bench/compile_memory.py gpt2-small:bf16 bert-base:bf16 resnet50:fp32 bert-base:fp32:dynamic

Each ``model:precision`` compiles in turn in this process, after a small warm-up compile of
the same precision (so that lazily imported modules do not count), with the heap trimmed
before each.  "peak" is the high-water mark of RSS during the compile minus RSS before it
(``bench/memory.py``); "kept" is RSS after it (a gc, no trim) minus RSS before it: the
compiled module's weights and code, and what the allocator did not give back.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.heap import release_free_heap
from ziggurat.bench.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
from ziggurat.bench.models import MODELS

MB = 1 << 20


def measure(name: str, precision: str, dynamic: bool = False) -> str:
    """``dynamic``: compile with the batch dim of every input dynamic (1 .. 64)."""
    spec = MODELS[name]
    model, inputs = spec.build(), spec.example_inputs()
    dynamic_shapes = None
    if dynamic:
        batch = Dim("batch", min=1, max=64)
        dynamic_shapes = tuple({0: batch} for _ in inputs)
        # torch.export fixes a size of 1: the example at batch 2 or more
        inputs = tuple(torch.cat([t, t]) if t.shape[0] == 1 else t for t in inputs)
    label = f"{precision}, dynamic batch" if dynamic else precision
    warm = torch.nn.Linear(8, 8).eval()
    ziggurat.compile(warm, (torch.randn(2, 8),), backend="cpu", precision=precision)
    gc.collect()
    release_free_heap()
    start = rss_bytes()
    if start is None or not reset_peak_rss():
        return f"| {name} | {label} | not measured: this kernel does not report or reset peak RSS | | | |"
    began = time.perf_counter()
    compiled = ziggurat.compile(model, inputs, backend="cpu", precision=precision, dynamic_shapes=dynamic_shapes)
    seconds = time.perf_counter() - began
    peak = (peak_rss_bytes() or start) - start
    gc.collect()
    kept = (rss_bytes() or start) - start
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    del compiled
    return (f"| {name} | {label} | {weights // MB} | {seconds:.1f} | {peak // MB} | {kept // MB} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("runs", nargs="+", help="model:precision[:dynamic] (precision fp32, bf16 or fp16; "
                                                 "dynamic: the batch dim of every input dynamic)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print("| model | precision | weights MB | compile s | peak rise MB | kept MB |")
    print("|---|---|---:|---:|---:|---:|")
    for run in args.runs:
        name, _, rest = run.partition(":")
        precision, _, mode = rest.partition(":")
        if mode not in ("", "dynamic"):
            parser.error(f"{run}: the third field is 'dynamic' or nothing, not {mode!r}")
        print(measure(name, precision or "fp32", mode == "dynamic"), flush=True)
        gc.collect()
        release_free_heap()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
