// RUN: ziggurat-opt %s -p 'fuse-post-ops,convert-torch-to-trt{min_block_size=1}' --print-debuginfo | filecheck %s
// Every layer is named "<op> @ <file:line> [<debug name> (<module>)]" after the torch op it
// came from (the op's location), helper layers add a suffix, fused ops name their post-op
// layers; two ops with one location get " #2" (TensorRT rejects repeated layer names).
// Each layer also keeps the op's location. (The weight is a constant: a padded convolution by
// run-time weights stays in torch, see convolution.py.)

// CHECK:      %[[C:.*]] = trt.convolution %x, %{{.*}} {name = "fused.conv2d @ model.py:12 [%x.3 (layer1.conv)]", {{.*}} loc("%x.3 (layer1.conv)"("model.py":12:0))
// CHECK-NEXT: %[[R:.*]] = trt.activation kRELU %[[C]] {name = "fused.conv2d @ model.py:12 [%x.3 (layer1.conv)] (post-op relu)"} {{.*}} loc("%x.3 (layer1.conv)"("model.py":12:0))
// CHECK-NEXT: %[[S0:.*]] = trt.shuffle %b {name = "fused.conv2d @ model.py:12 [%x.3 (layer1.conv)] (post-op add broadcast)", {{.*}} loc("%x.3 (layer1.conv)"("model.py":12:0))
// CHECK-NEXT: %a = trt.elementwise kSUM %[[R]], %[[S0]] {name = "fused.conv2d @ model.py:12 [%x.3 (layer1.conv)] (post-op add)"}
// CHECK-NEXT: %[[S:.*]] = trt.shuffle %b {name = "aten::add.Tensor @ model.py:14 [%y (layer1)] (broadcast)", {{.*}} loc("%y (layer1)"("model.py":14:0))
// CHECK-NEXT: %z = trt.elementwise kSUM %a, %[[S]] {name = "aten::add.Tensor @ model.py:14 [%y (layer1)]"}
// CHECK-NEXT: %[[S2:.*]] = trt.shuffle %b {name = "aten::add.Tensor @ model.py:14 [%y (layer1)] #2 (broadcast)",
// CHECK-NEXT: %z2 = trt.elementwise kSUM %z, %[[S2]] {name = "aten::add.Tensor @ model.py:14 [%y (layer1)] #2"}
func.func @forward(%x: tensor<1x4x6x6xf32>, %b: tensor<6xf32>) -> tensor<1x4x6x6xf32> {
  %w = torch.literal dense<5.000000e-01> : tensor<4x4x3x3xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("%x.3 (layer1.conv)"("model.py":12:0))
  %r = torch.aten.relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("%x.5 (layer1.relu)"("model.py":13:0))
  %a = torch.aten.add.Tensor %r, %b {alpha = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32> loc("%y (layer1)"("model.py":14:0))
  %z = torch.aten.add.Tensor %a, %b {alpha = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32> loc("%y (layer1)"("model.py":14:0))
  %z2 = torch.aten.add.Tensor %z, %b {alpha = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32> loc("%y (layer1)"("model.py":14:0))
  func.return %z2 : tensor<1x4x6x6xf32>
}
