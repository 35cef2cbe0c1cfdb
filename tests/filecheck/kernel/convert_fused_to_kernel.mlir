// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel' | filecheck %s
// One kernel per op, no decision: the kind follows from the op's CPU lowering, constants
// stay outside as inputs, element-wise ops carry their broadcast index maps.

builtin.module {
  func.func @forward(%x: tensor<4x37xf32>, %b: tensor<37xf32>, %idx: tensor<3xi64>, %w: tensor<1x3x32xf32>) -> (tensor<4xf32>, tensor<4x37xf32>, tensor<3x37xf32>, tensor<4x37xf32>, tensor<4x32xf32>) {
    %c = torch.literal dense<2.0> : tensor<f32>
    %0 = torch.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<4x37xf32>, tensor<37xf32>) -> tensor<4x37xf32>
    %1 = torch.aten.amax %0 {dim = array<i64: 1>, keepdim = false} : (tensor<4x37xf32>) -> tensor<4xf32>
    %2 = torch.aten.cumsum %0 {dim = 1 : i64} : (tensor<4x37xf32>) -> tensor<4x37xf32>
    %3 = torch.aten.index_select %x, %idx {dim = 0 : i64} : (tensor<4x37xf32>, tensor<3xi64>) -> tensor<3x37xf32>
    %4 = torch.aten.mul.Tensor %x, %c : (tensor<4x37xf32>, tensor<f32>) -> tensor<4x37xf32>
    %5 = torch.operator "aten::special_i0e"(%x) {args = {}, operand_names = ["self"], schema = "aten::special_i0e(Tensor self) -> Tensor"} : (tensor<4x37xf32>) -> tensor<4x37xf32>
    %6 = torch.aten.narrow %x {dim = 1 : i64, start = 0 : i64, length = 3 : i64} : (tensor<4x37xf32>) -> tensor<4x3xf32>
    %7 = fused.linear %6, %w {post_ops = [#fused.unary<relu>], weight_layout = "KN32n", weight_shape = array<i64: 32, 3>} : (tensor<4x3xf32>, tensor<1x3x32xf32>) -> tensor<4x32xf32>
    func.return %1, %2, %3, %5, %7 : tensor<4xf32>, tensor<4x37xf32>, tensor<3x37xf32>, tensor<4x37xf32>, tensor<4x32xf32>
  }
}

// CHECK:      %c = torch.literal
// CHECK-NEXT: %0 = kernel.pointwise ins(%x, %b : tensor<4x37xf32>, tensor<37xf32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x37xf32> {
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: tensor<4x37xf32>, %[[B:.*]]: tensor<37xf32>):
// CHECK-NEXT:   %[[S:.*]] = torch.aten.add.Tensor %[[X]], %[[B]]
// CHECK-NEXT:   kernel.yield %[[S]] : tensor<4x37xf32>
// CHECK-NEXT: }
// CHECK-NEXT: kernel.reduction ins(%0 : tensor<4x37xf32>) {window = 37 : i64}
// CHECK:      kernel.scan ins(%0 : tensor<4x37xf32>) {dim = 1 : i64}
// CHECK:      kernel.gather ins(%x, %idx : tensor<4x37xf32>, tensor<3xi64>)
// CHECK:      kernel.pointwise ins(%x, %c : tensor<4x37xf32>, tensor<f32>) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]}
// CHECK:      kernel.fallback ins(%x : tensor<4x37xf32>) {reason = "no native lowering of aten::special_i0e"}
// CHECK:      kernel.pointwise ins(%x : tensor<4x37xf32>) {view}
// CHECK:        torch.aten.narrow
// CHECK:      kernel.gemm ins(%{{.*}}, %w : tensor<4x3xf32>, tensor<1x3x32xf32>) {spec = #kernel.gemm<batch = 1, m = 4, n = 32, k = 3, b = "KN32n">}
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<1x3x32xf32>):
// CHECK-NEXT:   fused.linear
// CHECK:      func.return
