"""A run-time loop on the CPU backend: its body as native code against the body through torch.

The model is a scripted refinement loop (two linears, relu, tanh, a residual) whose trip
count is an input, so it imports as a ``torch.loop``.  It is compiled once; a second compile
has its native loop body removed, so that the whole loop runs through torch as it did before
``backends/cpu/loop_bodies.py``.  Both are checked against eager and timed interleaved with
eager (and Inductor with ``--inductor``).

    python bench/loop_body.py [--threads 1] [--batch 64] [--width 256] [--trips 20] [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import torch

import ziggurat
from ziggurat.bench.timing import measure_interleaved


class Refine(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)
        self.lin2 = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        for _ in range(int(k)):
            x = torch.tanh(self.lin2(torch.relu(self.lin(x)))) + x * 0.5
        return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--trips", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--inductor", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    base = Refine(args.width).eval().requires_grad_(False)
    model = torch.jit.script(base)
    inputs = (torch.randn(args.batch, args.width), torch.tensor(args.trips))
    native = ziggurat.compile(model, inputs, backend="cpu", frontend="torchscript", threads=args.threads)
    through_torch = ziggurat.compile(model, inputs, backend="cpu", frontend="torchscript", threads=args.threads)
    through_torch.executable.loop_bodies.clear()  # pyright: ignore[reportAttributeAccessIssue]
    if native.report.stats.get("native loop bodies") != 1:
        raise SystemExit(f"the loop body did not compile natively: {native.report.format()}")
    runners: dict[str, Any] = {"eager": model, "body native": native, "body through torch": through_torch}
    if args.inductor:
        runners["inductor"] = torch.compile(base)
    with torch.no_grad():
        want = model(*inputs)
        for name in ("body native", "body through torch"):
            torch.testing.assert_close(runners[name](*inputs), want, rtol=1e-4, atol=1e-4)
        timings = measure_interleaved(runners, inputs, 3, args.rounds, 5.0)
    med = {k: statistics.median(t.samples_ms) for k, t in timings.items()}
    print(f"batch {args.batch}, width {args.width}, {args.trips} trips, {args.threads} thread(s); medians in ms")
    print("| runner | ms | eager / runner |")
    print("|---|---|---|")
    for name, ms in med.items():
        print(f"| {name} | {ms:.3f} | {med['eager'] / ms:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
