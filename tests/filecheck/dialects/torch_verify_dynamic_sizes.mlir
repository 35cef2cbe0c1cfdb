// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// A ? size (a data-dependent shape) needs a cause: an op whose result shape depends on the
// values (nonzero), an operand with a ? size, or a run-time int operand. A static op that
// declares one is an error at the op; the valid ones verify and print back.

// CHECK-LABEL: func.func @valid
// CHECK:         torch.aten.neg %{{.*}} : (tensor<?x?xi64>) -> tensor<?x?xi64>
func.func @valid(%x: tensor<5xi1>) -> tensor<?x?xi64> {
  %0 = torch.operator "aten::nonzero"(%x) {args = {}, operand_names = ["self"], schema = "aten::nonzero(Tensor self) -> Tensor"} : (tensor<5xi1>) -> tensor<?x?xi64>
  %1 = torch.aten.neg %0 : (tensor<?x?xi64>) -> tensor<?x?xi64>
  func.return %1 : tensor<?x?xi64>
}

// -----
func.func @no_cause(%x: tensor<5xf32>) -> tensor<?xf32> {
  %0 = torch.aten.neg %x : (tensor<5xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
// CHECK: torch.aten.neg: result 0 has a dynamic dimension (tensor<?xf32>) although its operands are static and its shape does not depend on their values; Ziggurat compiles static shapes
