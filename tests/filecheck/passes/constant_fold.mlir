// RUN: ziggurat-opt %s -p constant-fold --pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats

// A transposed weight and a dtype cast of a bias are computed at compile time.
// CHECK-LABEL: func.func @fold
// CHECK-DAG:     %[[W:.*]] = torch.literal dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG:     %[[B:.*]] = torch.literal dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK:         torch.aten.linear %x, %[[W]] bias(%[[B]])
// CHECK-NOT:     torch.aten.t
// CHECK-NOT:     torch.aten.to.dtype
func.func @fold(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wt = torch.aten.t %w : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = torch.literal dense<[1, 2]> : tensor<2xi64>
  %bf = torch.aten.to.dtype %b {dtype = f32, non_blocking = false, copy = false} : (tensor<2xi64>) -> tensor<2xf32>
  %y = torch.aten.linear %x, %wt bias(%bf) : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// Ops on run-time values and random ops are not folded.
// CHECK-LABEL: func.func @nofold
// CHECK:         torch.aten.mul.Tensor %x
// CHECK:         torch.aten.dropout
func.func @nofold(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = torch.literal dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = torch.aten.mul.Tensor %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = torch.aten.dropout %c {p = 0.5 : f64, train = true} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// A weight norm of constant parameters (wav2vec2's positional convolution) folds: it was a
// torch.operator, which is not folded, and ran through torch at every call.
// CHECK-LABEL: func.func @weight_norm
// CHECK:         %[[W:.*]] = torch.literal dense<{{\[\[}}6.000000e+00, 8.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    torch.aten.linear %x, %[[W]]
func.func @weight_norm(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %v = torch.literal dense<[[3.0, 4.0], [0.0, 2.0]]> : tensor<2x2xf32>
  %g = torch.literal dense<[[10.0], [1.0]]> : tensor<2x1xf32>
  %w = torch.aten._weight_norm %v, %g {dim = 0 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  %y = torch.aten.linear %x, %w : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// STATS: constant-fold:
// STATS:   bytes of constants produced              40
// STATS:   folded ops                               3
