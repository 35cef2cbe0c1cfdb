// RUN: not ziggurat-opt %s 2>&1 | filecheck %s

func.func @embedding_float_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  %0 = torch.aten.embedding %w, %i {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
// CHECK: error: torch.aten.embedding: operand 'indices' must have integer elements, got tensor<3xf32>
