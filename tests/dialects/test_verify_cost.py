"""Verifying small torch ops does not import ``torch._dynamo``: some of torch's meta kernels
are Python references whose first call imports it (2.4 s in every ``ziggurat-opt`` process),
so small operands are typed by a CPU run that agrees with the declared types first."""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
import sys
from xdsl.parser import Parser
from ziggurat.ir.context import make_context
text = '''
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = torch.aten.dropout %0 {p = 0.5 : f64, train = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}'''
Parser(make_context(), text).parse_module().verify()
bad = text.replace('-> tensor<2x3xf32>\\n  %1', '-> tensor<3x2xf32>\\n  %1', 1)
try:
    Parser(make_context(), bad).parse_module().verify()
    print("bad verified")
except Exception as e:
    print("bad refused:", str(e).splitlines()[0][:80])
print("dynamo imported:", "torch._dynamo" in sys.modules)
"""


def test_small_ops_verify_without_importing_dynamo() -> None:
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "dynamo imported: False" in out.stdout, out.stdout
    assert "bad refused:" in out.stdout, out.stdout  # a wrong declared type is still an error
