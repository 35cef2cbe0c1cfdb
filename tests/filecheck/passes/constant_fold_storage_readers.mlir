// RUN: ziggurat-opt %s -p constant-fold | filecheck %s
// A view of a constant folded on its own becomes a fresh row-major literal; an as_strided
// behind it would then read that literal's storage instead of the storage the view shares
// with the constant it views. Such views stay; the as_strided reads the original constant.
// Views that no as_strided reads still fold.

// CHECK-LABEL: func.func @view_before_as_strided
// CHECK:         %[[B:.*]] = torch.literal
// CHECK-NEXT:    %[[T:.*]] = torch.aten.t %[[B]]
// CHECK-NEXT:    %[[S:.*]] = torch.aten.as_strided %[[T]]
// CHECK-NEXT:    %[[F:.*]] = torch.literal {{.*}} : tensor<3x4xf32>
// CHECK-NOT:     torch.aten.t
func.func @view_before_as_strided(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x4xf32>) {
  %b = torch.literal dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<4x3xf32>
  %0 = torch.aten.t %b : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = torch.aten.as_strided %0 {size = array<i64: 3, 2>, stride = array<i64: 1, 3>, storage_offset = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %2 = torch.aten.t %b : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %3 = torch.aten.relu %2 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %1, %3 : tensor<3x2xf32>, tensor<3x4xf32>
}
