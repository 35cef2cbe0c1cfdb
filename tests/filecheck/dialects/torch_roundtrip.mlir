// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Print -> parse -> print keeps every form of torch op: positional, optional and list operands,
// properties, torch.operator and torch.literal.

func.func @ops(%x: tensor<2x8x4x4xf32>, %w: tensor<8xf32>, %i: tensor<3xi64>) -> tensor<4x8x4x4xf32> {
  %c = torch.literal dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = torch.aten.batch_norm %x weight(%w : tensor<8xf32>) bias(%w : tensor<8xf32>) running_mean(%w : tensor<8xf32>) running_var(%w : tensor<8xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, cudnn_enabled = true} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %1 = torch.aten.index.Tensor %x, [%i, %i] {indices_present = array<i1: false, true, true>} : (tensor<2x8x4x4xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %2 = torch.aten.add.Tensor %0, %x {alpha = 1 : i64} : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %3 = torch.aten.cat [%2, %x] {dim = 0 : i64} : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<4x8x4x4xf32>
  %4 = torch.aten.zeros {size = array<i64: 2, 3>} : tensor<2x3xf32>
  %5 = torch.operator "aten::foo.bar"(%x, %w) {args = {k = 3 : i64}, operand_names = ["self", "w"]} : (tensor<2x8x4x4xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %6 = torch.aten.conv2d %x, %x {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x2x1x1xf32>
  func.return %3 : tensor<4x8x4x4xf32>
}

// CHECK:      %c = torch.literal dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %0 = torch.aten.batch_norm %x weight(%w : tensor<8xf32>) bias(%w : tensor<8xf32>) running_mean(%w : tensor<8xf32>) running_var(%w : tensor<8xf32>) {training = false, momentum = 1.000000e-01 : f64, eps = 1.000000e-05 : f64, cudnn_enabled = true} : (tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
// CHECK-NEXT: %1 = torch.aten.index.Tensor %x, [%i, %i] {indices_present = array<i1: false, true, true>}
// CHECK-NEXT: %2 = torch.aten.add.Tensor %0, %x {alpha = 1 : i64}
// CHECK-NEXT: %3 = torch.aten.cat [%2, %x] {dim = 0 : i64}
// CHECK-NEXT: %4 = torch.aten.zeros {size = array<i64: 2, 3>} : tensor<2x3xf32>
// CHECK-NEXT: %5 = torch.operator "aten::foo.bar"(%x, %w) {args = {k = 3 : i64}, operand_names = ["self", "w"]}
// CHECK-NEXT: %6 = torch.aten.conv2d %x, %x {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
