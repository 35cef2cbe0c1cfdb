// RUN: ziggurat-opt %s -p torch-canonicalize | filecheck %s
// contiguous/clone copy into fresh storage: a no-op for every op that reads elements, but not
// for as_strided, which reads storage (after x.t().contiguous() the row-major transposed
// values, after x.t() the storage of x). They stay when their result reaches an as_strided,
// also through views; elsewhere they still go.

// CHECK-LABEL: func.func @kept_before_as_strided
// CHECK:         %[[T:.*]] = torch.aten.t %x
// CHECK-NEXT:    %[[C:.*]] = torch.aten.contiguous %[[T]]
// CHECK-NEXT:    %[[S:.*]] = torch.aten.as_strided %[[C]]
// CHECK-NEXT:    %[[K:.*]] = torch.aten.clone %[[T]]
// CHECK-NEXT:    %[[V:.*]] = torch.aten.unsqueeze %[[K]]
// CHECK-NEXT:    torch.aten.as_strided %[[V]]
func.func @kept_before_as_strided(%x: tensor<4x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = torch.aten.t %x : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = torch.aten.contiguous %0 {memory_format = "contiguous_format"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = torch.aten.as_strided %1 {size = array<i64: 3, 2>, stride = array<i64: 1, 3>, storage_offset = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %3 = torch.aten.clone %0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = torch.aten.unsqueeze %3 {dim = 0 : i64} : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %5 = torch.aten.as_strided %4 {size = array<i64: 3, 2>, stride = array<i64: 1, 3>, storage_offset = 1 : i64} : (tensor<1x3x4xf32>) -> tensor<3x2xf32>
  func.return %2, %5 : tensor<3x2xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @removed_elsewhere
// CHECK-NEXT:    %[[T:.*]] = torch.aten.t %x
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %[[T]]
// CHECK-NEXT:    func.return %[[R]]
func.func @removed_elsewhere(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %0 = torch.aten.t %x : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %1 = torch.aten.contiguous %0 {memory_format = "contiguous_format"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = torch.aten.relu %1 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %2 : tensor<3x4xf32>
}
