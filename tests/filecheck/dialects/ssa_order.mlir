// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// A value used above the line that defines it (xDSL's verifier accepts it; passes and
// lowerings then read a value that is computed later) is a verifier diagnostic.

func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %1 = torch.aten.tanh %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = torch.aten.relu %x : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}
// CHECK: ziggurat-opt: error: torch.aten.tanh: operand 0 (of type tensor<2x4xf32>) is used before it is defined, or outside the region that defines it
