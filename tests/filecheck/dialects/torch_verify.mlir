// RUN: not ziggurat-opt %s --split-input-file 2>&1 | filecheck %s
// Rank and dtype rules that the schemas imply are verifier errors.

func.func @mm_rank(%x: tensor<2x3x4xf32>, %y: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = torch.aten.mm %x, %y : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}
// CHECK: error: torch.aten.mm: operand 'self' must have rank 2, got tensor<2x3x4xf32> (schema: aten::mm(Tensor self, Tensor mat2) -> Tensor)
