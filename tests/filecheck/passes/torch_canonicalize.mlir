// RUN: ziggurat-opt %s -p torch-canonicalize | filecheck %s

// No-ops disappear: eval dropout, contiguous, clone, detach, same-type view, identity permute.
// CHECK-LABEL: func.func @noops
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %x
// CHECK-NEXT:    func.return %[[R]]
// CHECK-NOT:     torch.aten.dropout
func.func @noops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.dropout %x {p = 0.1 : f64, train = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = torch.aten.contiguous %0 {memory_format = "contiguous_format"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = torch.aten.clone %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = torch.aten.detach %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = torch.aten.view %3 {size = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = torch.aten.permute %4 {dims = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = torch.aten.relu %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %6 : tensor<2x3xf32>
}

// Dropout in training mode and a real permute stay.
// CHECK-LABEL: func.func @kept
// CHECK:         torch.aten.dropout
// CHECK:         torch.aten.permute
func.func @kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = torch.aten.dropout %x {p = 0.1 : f64, train = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = torch.aten.permute %0 {dims = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}

// Shape queries on static shapes fold; duplicate ops are CSE'd; dead ops removed.
// CHECK-LABEL: func.func @queries
// CHECK-NEXT:    %[[C:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %x
// CHECK-NEXT:    %[[A:.*]] = torch.aten.add.Tensor %[[R]], %[[R]]
// CHECK-NEXT:    func.return %[[A]], %[[C]]
// CHECK-NOT:     torch.aten.sigmoid
func.func @queries(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, i64) {
  %0 = torch.aten.size.int %x {dim = -1 : i64} : (tensor<2x3xf32>) -> i64
  %1 = torch.aten.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = torch.aten.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = torch.aten.add.Tensor %1, %2 {alpha = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = torch.aten.sigmoid %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %3, %0 : tensor<2x3xf32>, i64
}

// A traced convolution becomes conv2d; a transposed one does not.
// CHECK-LABEL: func.func @convolution
// CHECK:         torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}
// CHECK:         torch.aten._convolution %x, %w {{.*}}transposed = true
func.func @convolution(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x3xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x15x15xf32>) {
  %0 = torch.aten._convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x4x4xf32>
  %1 = torch.aten._convolution %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x15x15xf32>
  func.return %0, %1 : tensor<1x3x4x4xf32>, tensor<1x3x15x15xf32>
}

// A string padding becomes integers: "valid" none, "same" half of dilation * (kernel - 1) on each
// side; a "same" that pads one side more (a 2x2 kernel) stays, as torch pads it with an F.pad.
// CHECK-LABEL: func.func @string_padding
// CHECK:         torch.aten.conv2d %x, %w {stride = array<i64: 3, 3>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 2>, groups = 1 : i64}
// CHECK:         torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 2>, dilation = array<i64: 1, 2>, groups = 1 : i64}
// CHECK:         torch.aten.conv2d.padding %x, %v {{.*}}padding = "same"
func.func @string_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x3xf32>, %v: tensor<3x3x2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) {
  %0 = torch.aten.conv2d.padding %x, %w {stride = array<i64: 3, 3>, padding = "valid", dilation = array<i64: 1, 2>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x2x2xf32>
  %1 = torch.aten.conv2d.padding %x, %w {stride = array<i64: 1, 1>, padding = "same", dilation = array<i64: 1, 2>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  %2 = torch.aten.conv2d.padding %x, %v {stride = array<i64: 1, 1>, padding = "same", dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x2x2xf32>) -> tensor<1x3x8x8xf32>
  func.return %0, %1, %2 : tensor<1x3x2x2xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
}

// A slice of what a slice_scatter wrote is the written value; a unit-step slice beside it reads
// the base; the rebuilt base then dies (the TorchScript frontend's functionalized chunk writes).
// CHECK-LABEL: func.func @slice_of_slice_scatter
// CHECK-NEXT:    %[[S:.*]] = torch.aten.sigmoid %p
// CHECK-NEXT:    %[[B:.*]] = torch.aten.slice.Tensor %base {dim = -1 : i64, start = 4 : i64, end = 8 : i64, step = 1 : i64}
// CHECK-NEXT:    %[[M:.*]] = torch.aten.mul.Tensor %[[S]], %[[B]]
// CHECK-NEXT:    func.return %[[M]]
func.func @slice_of_slice_scatter(%base: tensor<3x12xf32>, %p: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %s = torch.aten.sigmoid %p : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = torch.aten.slice_scatter %base, %s {dim = 1 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (tensor<3x12xf32>, tensor<3x4xf32>) -> tensor<3x12xf32>
  %a = torch.aten.slice.Tensor %r {dim = 1 : i64, start = 0 : i64, end = 4 : i64, step = 1 : i64} : (tensor<3x12xf32>) -> tensor<3x4xf32>
  %b = torch.aten.slice.Tensor %r {dim = -1 : i64, start = 4 : i64, end = 8 : i64, step = 1 : i64} : (tensor<3x12xf32>) -> tensor<3x4xf32>
  %m = torch.aten.mul.Tensor %a, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %m : tensor<3x4xf32>
}
