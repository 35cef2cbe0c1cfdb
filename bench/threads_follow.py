"""Does a default-compiled CPU module follow ``torch.set_num_threads`` at call time, and what
does following cost against a module compiled for that count?

    python bench/threads_follow.py [--rounds 15] [--batch 64] [--width 1024]

For each torch thread count (1, then every usable core) it times, interleaved: the module
compiled without ``threads=`` (planned for every core, limited at call time), the module
compiled with ``threads=<that count>``, and eager; and prints the team the native code's
last parallel region ran with (``executable.threads_used``).
"""

from __future__ import annotations

import argparse
import logging
import os

import torch

import ziggurat
from ziggurat.bench.timing import measure_interleaved


def mlp(width: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, width),
                               torch.nn.GELU(), torch.nn.Linear(width, width)).eval()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=1024)
    args = p.parse_args()
    logging.getLogger("ziggurat").setLevel(logging.ERROR)
    torch.manual_seed(0)
    model = mlp(args.width)
    x = torch.randn(args.batch, args.width)
    cores = len(os.sched_getaffinity(0))
    default = ziggurat.compile(model, (x,))
    before = torch.get_num_threads()
    print(f"MLP {args.batch}x{args.width}, 3 Linear + 2 GELU; {cores} usable cores; load average "
          f"{os.getloadavg()[0]:.2f}")
    try:
        for n in sorted({1, cores}):
            fixed = ziggurat.compile(model, (x,), threads=n)
            torch.set_num_threads(n)
            with torch.no_grad():
                t = measure_interleaved({"default": default, f"threads={n}": fixed, "eager": model}, (x,),
                                        warmup=3, rounds=args.rounds, target_ms=20.0)
            print(f"torch.set_num_threads({n}): team used by the default module "
                  f"{default.executable.threads_used}, by threads={n} {fixed.executable.threads_used}")
            for name, timing in t.items():
                print(f"  {name:>10}: median {timing.median_ms:.3f} ms")
    finally:
        torch.set_num_threads(before)


if __name__ == "__main__":
    main()
