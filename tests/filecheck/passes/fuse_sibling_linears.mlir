// RUN: ziggurat-opt %s -p fuse-sibling-linears --elide-resources | filecheck %s
// RUN: ziggurat-opt %s -p fuse-sibling-linears --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// Three projections of %x (one without a bias) become one linear over the concatenated
// weights [4+6+2, 8]; each result is a slice of it along the last dim, under its old name.
// The linear with a post-op, the one on another input and the one whose weight is a
// run-time value stay as they are.
// CHECK-LABEL: func.func @qkv
// CHECK-NOT:     %bq
// CHECK:         %[[W:.*]] = torch.literal dense_resource<{{.*}}> : tensor<12x8xf32>
// CHECK-NEXT:    %[[B:.*]] = torch.literal dense<[5.000000e-01, {{.*}}, 2.500000e-01, {{.*}}, 0.000000e+00, 0.000000e+00]> : tensor<12xf32>
// CHECK-NEXT:    %[[WIDE:.*]] = fused.linear %x, %[[W]] bias(%[[B]] : tensor<12xf32>) : (tensor<3x5x8xf32>, tensor<12x8xf32>) -> tensor<3x5x12xf32>
// CHECK-NEXT:    %q = torch.aten.slice.Tensor %[[WIDE]] {dim = 2 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (tensor<3x5x12xf32>) -> tensor<3x5x4xf32>
// CHECK-NEXT:    %k = torch.aten.slice.Tensor %[[WIDE]] {dim = 2 : i64, start = 4 : i64, end = 10 : i64, step = 1 : i64} : (tensor<3x5x12xf32>) -> tensor<3x5x6xf32>
// CHECK-NEXT:    %v = torch.aten.slice.Tensor %[[WIDE]] {dim = 2 : i64, start = 10 : i64, end = 12 : i64, step = 1 : i64} : (tensor<3x5x12xf32>) -> tensor<3x5x2xf32>
// CHECK-NEXT:    %act = fused.linear %x, %wa {post_ops = [#fused.unary<relu>]}
// CHECK-NEXT:    %other = fused.linear %y, %wq
// CHECK-NEXT:    %runtime = fused.linear %x, %wr
// CHECK-NOT:     fused.linear
func.func @qkv(%x: tensor<3x5x8xf32>, %y: tensor<3x5x8xf32>, %wr: tensor<4x8xf32>) -> (tensor<3x5x4xf32>, tensor<3x5x6xf32>, tensor<3x5x2xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>) {
  %wq = torch.literal dense<1.0> : tensor<4x8xf32>
  %bq = torch.literal dense<0.5> : tensor<4xf32>
  %wk = torch.literal dense<2.0> : tensor<6x8xf32>
  %bk = torch.literal dense<0.25> : tensor<6xf32>
  %wv = torch.literal dense<3.0> : tensor<2x8xf32>
  %wa = torch.literal dense<4.0> : tensor<4x8xf32>
  %q = fused.linear %x, %wq bias(%bq : tensor<4xf32>) : (tensor<3x5x8xf32>, tensor<4x8xf32>) -> tensor<3x5x4xf32>
  %k = fused.linear %x, %wk bias(%bk : tensor<6xf32>) : (tensor<3x5x8xf32>, tensor<6x8xf32>) -> tensor<3x5x6xf32>
  %v = fused.linear %x, %wv : (tensor<3x5x8xf32>, tensor<2x8xf32>) -> tensor<3x5x2xf32>
  %act = fused.linear %x, %wa {post_ops = [#fused.unary<relu>]} : (tensor<3x5x8xf32>, tensor<4x8xf32>) -> tensor<3x5x4xf32>
  %other = fused.linear %y, %wq : (tensor<3x5x8xf32>, tensor<4x8xf32>) -> tensor<3x5x4xf32>
  %runtime = fused.linear %x, %wr : (tensor<3x5x8xf32>, tensor<4x8xf32>) -> tensor<3x5x4xf32>
  func.return %q, %k, %v, %act, %other, %runtime : tensor<3x5x4xf32>, tensor<3x5x6xf32>, tensor<3x5x2xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>, tensor<3x5x4xf32>
}

// STATS: fuse-sibling-linears:
// STATS:   linears merged   3
// STATS:   wide linears     1
