// RUN: ziggurat-opt %s -p graph-opt | filecheck %s
// precision="bf16" imports a model as it runs under torch.autocast: autocast's casts are
// aten._to_copy ops (ir/importer/autocast.py). graph-opt folds the casts of the weights into
// bf16 literals (rounded to nearest even: 0.1 -> 0x3DCD), keeps the cast of the run-time
// input and of the output back to the model's float32, and fuses the bf16 linear's relu.

// CHECK-LABEL: func.func @linear_bf16
// CHECK-DAG:     %[[B:.*]] = torch.literal dense_resource<[[BR:.*]]> : tensor<3xbf16>
// CHECK-DAG:     %[[W:.*]] = torch.literal dense_resource<[[WR:.*]]> : tensor<3x2xbf16>
// CHECK:         %[[X:.*]] = torch.aten._to_copy %x {dtype = bf16, non_blocking = false} : (tensor<4x2xf32>) -> tensor<4x2xbf16>
// CHECK-NEXT:    %[[R:.*]] = fused.linear %[[X]], %[[W]] bias(%[[B]] : tensor<3xbf16>) {post_ops = [#fused.unary<relu>]} : (tensor<4x2xbf16>, tensor<3x2xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT:    %{{.*}} = torch.aten._to_copy %[[R]] {dtype = f32, non_blocking = false} : (tensor<4x3xbf16>) -> tensor<4x3xf32>
// CHECK-NOT:     torch.aten._to_copy
// CHECK:         [[BR]]: "0x40000000cd3d4d3e9a3e"
// CHECK-SAME:    [[WR]]: "0x40000000803f004040408040cd3d00bf"
func.func @linear_bf16(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = torch.literal dense<[[1.0, 2.0], [3.0, 4.0], [0.1, -0.5]]> : tensor<3x2xf32>
  %b = torch.literal dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %bc = torch.aten._to_copy %b {dtype = bf16, non_blocking = false} : (tensor<3xf32>) -> tensor<3xbf16>
  %wc = torch.aten._to_copy %w {dtype = bf16, non_blocking = false} : (tensor<3x2xf32>) -> tensor<3x2xbf16>
  %xc = torch.aten._to_copy %x {dtype = bf16, non_blocking = false} : (tensor<4x2xf32>) -> tensor<4x2xbf16>
  %y = torch.aten.linear %xc, %wc bias(%bc) : (tensor<4x2xbf16>, tensor<3x2xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
  %r = torch.aten.relu %y : (tensor<4x3xbf16>) -> tensor<4x3xbf16>
  %out = torch.aten._to_copy %r {dtype = f32, non_blocking = false} : (tensor<4x3xbf16>) -> tensor<4x3xf32>
  func.return %out : tensor<4x3xf32>
}
