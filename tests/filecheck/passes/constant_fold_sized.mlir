// RUN: ziggurat-opt %s -p constant-fold 2>/dev/null | filecheck %s
// A range build's lowerings are compared at sampled sizes, so an op whose result's shape
// follows the shape symbols (marked ziggurat.sized by the specializing import) is never folded
// into a literal: embedding(pos, arange(seq)) stays ops, with seq a run-time size later. The
// same op without the mark folds.

// CHECK-LABEL: func.func @sized
// CHECK:         %[[R:.*]] = torch.aten.arange {ziggurat.sized, {{.*}}} : tensor<5xi64>
// CHECK:         %[[E:.*]] = torch.aten.embedding %{{.*}}, %[[R]] {{.*}}ziggurat.sized
// CHECK:         %[[F:.*]] = torch.literal dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK:         func.return %[[E]], %[[F]]
func.func @sized() -> (tensor<5x3xf32>, tensor<5xi64>) {
  %w = torch.literal dense<1.5> : tensor<8x3xf32>
  %0 = torch.aten.arange {ziggurat.sized, end = 5 : i64, device = "cpu", pin_memory = false} : tensor<5xi64>
  %1 = torch.aten.embedding %w, %0 {padding_idx = -1 : i64, scale_grad_by_freq = false, sparse = false, ziggurat.sized} : (tensor<8x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
  %2 = torch.aten.arange {end = 5 : i64, device = "cpu", pin_memory = false} : tensor<5xi64>
  func.return %1, %2 : tensor<5x3xf32>, tensor<5xi64>
}
