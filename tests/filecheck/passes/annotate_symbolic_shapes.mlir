// RUN: ziggurat-opt %s -p annotate-symbolic-shapes --split-input-file --verify-diagnostics | filecheck %s
// Each ? of a dynamic-shape torch level gets its expression over the declared symbols: batch
// through a reshape by a run-time size, 2*batch from a cat, seq + 1 from a pad, and an input dim
// derived from another (2*seq); a size scalar is its symbol; ops on static sizes are left alone.

// CHECK-LABEL: func.func @forward
// CHECK:         torch.operator "aten::sym_size.int"(%x) {ziggurat.shapes = ["batch"]
// CHECK:         torch.aten.relu %x {ziggurat.shapes = ["batch x seq x 4"]}
// CHECK:         torch.operator "aten::reshape"({{.*}}) {ziggurat.shapes = ["batch x 4*seq"]
// CHECK:         torch.aten.cat [%r, %r] {ziggurat.shapes = ["2*batch x seq x 4"]
// CHECK:         torch.aten.constant_pad_nd %x {ziggurat.shapes = ["batch x seq + 1 x 4"]
// CHECK:         torch.aten.cat [%x, %m] {ziggurat.shapes = ["batch x 3*seq x 4"]
// CHECK:         torch.aten.mul.Tensor %x, %s {ziggurat.shapes = ["batch x seq x 4"]}
// CHECK:         torch.aten.relu %s : (tensor<4xf32>) -> tensor<4xf32>
func.func @forward(%x: tensor<?x?x4xf32>, %m: tensor<?x?x4xf32>, %s: tensor<4xf32>) -> (tensor<?x?xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>) attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64], [\22seq\22, 2, 384]], \22dims\22: [[0, \22x\22, 0, \22batch\22], [0, \22x\22, 1, \22seq\22], [1, \22m\22, 0, \22batch\22], [1, \22m\22, 1, \222*seq\22]]}"} {
  %b = torch.operator "aten::sym_size.int"(%x) {args = {dim = 0 : i64}, operand_names = ["self"], schema = "aten::sym_size.int(Tensor self, int dim) -> SymInt"} : (tensor<?x?x4xf32>) -> i64
  %r = torch.aten.relu %x : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %minus1 = arith.constant -1 : i64
  %flat = torch.operator "aten::reshape"(%r, %b, %minus1) {args = {}, operand_names = ["self", "shape#0", "shape#1"], schema = "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"} : (tensor<?x?x4xf32>, i64, i64) -> tensor<?x?xf32>
  %c = torch.aten.cat [%r, %r] {dim = 0 : i64} : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %p = torch.aten.constant_pad_nd %x {pad = array<i64: 0, 0, 0, 1>, value = 0.0 : f64} : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %j = torch.aten.cat [%x, %m] {dim = 1 : i64} : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %k = torch.aten.mul.Tensor %x, %s : (tensor<?x?x4xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  %t = torch.aten.relu %s : (tensor<4xf32>) -> tensor<4xf32>
  func.return %flat, %c, %p, %j, %k, %t : tensor<?x?xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>
}
