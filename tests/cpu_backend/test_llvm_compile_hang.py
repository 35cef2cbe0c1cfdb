"""LLVM 22's loop-idiom pass looks for CRC loops (HashRecognize) in loops of 8, 16, 32 and 64
steps; on the scalar loop of a remainder, a sigmoid, a logit and a max over 8 elements it ran
for 250 s (fuzz seed 111, program 59, recorded as a hang).  ``isa.LLVM_OPTIONS`` turns that
recognizer off.  The compile runs in a child process under a deadline far above its time
(about a second): a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ziggurat.backends.cpu.isa import LLVM_OPTIONS

CHILD = textwrap.dedent("""
    import torch
    import ziggurat

    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.logit(torch.sigmoid(torch.remainder(x, -2)) * 0.5 + 0.25)
            lo, hi = torch.aminmax(y)
            return hi

    x = torch.randn({n}, generator=torch.Generator().manual_seed(0))
    m = M()
    compiled = ziggurat.compile(m, (x,), isa="scalar", cache_dir={cache!r})
    # the native sigmoid and logit are within a few ulps of eager's, not its bits
    torch.testing.assert_close(compiled(x), m(x), rtol=1e-5, atol=1e-6)
    print("ok")
""")


def test_the_crc_recognizer_is_off() -> None:
    assert "-disable-loop-idiom-hashrecognize" in LLVM_OPTIONS


@pytest.mark.parametrize("n", [8, 16])
def test_an_eight_step_scalar_loop_compiles(n: int, tmp_path: Path) -> None:
    code = CHILD.format(n=n, cache=str(tmp_path))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"compiling the {n}-step loop took over 90 s (LLVM's CRC recognizer?)")
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]
