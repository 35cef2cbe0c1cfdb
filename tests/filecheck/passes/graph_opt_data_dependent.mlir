// RUN: ziggurat-opt %s -p 'graph-opt' --elide-resources | filecheck %s
// Graph rewrites leave ops that involve a ? size (a data-dependent shape) as they are: the
// size query on the nonzero result is not folded and the linear on it is not fused, while the
// same ops on static shapes are.

// CHECK-LABEL: func.func @dynamic_left_alone
// CHECK:         %[[N:.*]] = torch.aten.size.int %{{.*}} {dim = 0 : i64} : (tensor<?x?xf32>) -> i64
// CHECK:         %[[L:.*]] = torch.aten.linear %{{.*}}, %w : (tensor<?x?xf32>, tensor<4x2xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %[[L]] : (tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK:         fused.linear %s, %w {post_ops = [#fused.unary<relu>]}
// CHECK:         arith.constant 3 : i64
func.func @dynamic_left_alone(%x: tensor<3x2xi1>, %s: tensor<3x2xf32>, %w: tensor<4x2xf32>) -> (i64, tensor<?x?xf32>, tensor<3x4xf32>, i64) {
  %0 = torch.operator "aten::nonzero"(%x) {args = {}, operand_names = ["self"], schema = "aten::nonzero(Tensor self) -> Tensor"} : (tensor<3x2xi1>) -> tensor<?x?xi64>
  %1 = torch.aten.size.int %0 {dim = 0 : i64} : (tensor<?x?xi64>) -> i64
  %f = torch.operator "aten::_to_copy"(%0) {args = {dtype = 6 : i64}, operand_names = ["self"], schema = "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"} : (tensor<?x?xi64>) -> tensor<?x?xf32>
  %2 = torch.aten.size.int %f {dim = 0 : i64} : (tensor<?x?xf32>) -> i64
  %3 = torch.aten.linear %f, %w : (tensor<?x?xf32>, tensor<4x2xf32>) -> tensor<?x?xf32>
  %4 = torch.aten.relu %3 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %5 = torch.aten.linear %s, %w : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
  %6 = torch.aten.relu %5 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %7 = torch.aten.size.int %s {dim = 0 : i64} : (tensor<3x2xf32>) -> i64
  func.return %2, %4, %6, %7 : i64, tensor<?x?xf32>, tensor<3x4xf32>, i64
}
