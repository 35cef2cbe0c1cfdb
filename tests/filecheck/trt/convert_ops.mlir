// RUN: ziggurat-opt %s -p 'convert-torch-to-trt{min_block_size=1}' --split-input-file | filecheck %s
// One aten op -> its TensorRT layers (the IR before is the input, after is checked below).
// Layers are named after the torch op (these ops have no source location).

// hardtanh is one IActivationLayer kCLIP with alpha = min_val, beta = max_val.
// CHECK-LABEL: func.func @hardtanh(
// CHECK-NEXT:    %0 = func.call @hardtanh_trt_0(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %0
// CHECK:       func.func private @hardtanh_trt_0(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {ziggurat.backend = "tensorrt", ziggurat.trt_ops = {"aten::hardtanh" = 1 : i64}} {
// CHECK-NEXT:    %0 = trt.activation kCLIP %x {name = "aten::hardtanh", alpha = -5.000000e-01 : f32, beta = 2.000000e+00 : f32} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %0
// CHECK-NOT:   torch.aten
func.func @hardtanh(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.hardtanh %x {min_val = -5.000000e-01 : f64, max_val = 2.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// softmax over dim -1 of a rank-3 tensor: ISoftMaxLayer's axes bitmask 0b100.
// CHECK-LABEL: func.func private @softmax_trt_0(
// CHECK-NEXT:    %0 = trt.softmax %x {name = "aten::softmax.int", axes = 4 : i32} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %0
func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.softmax.int %x {dim = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// TensorRT broadcasts only between tensors of equal rank: the rank-1 operand is
// reshaped to 1x1x4 by a shuffle layer named after the add, then added.
// CHECK-LABEL: func.func private @broadcast_add_trt_0(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = trt.shuffle %b {name = "aten::add.Tensor (broadcast)", zero_is_placeholder = false, reshape_dims = array<i64: 1, 1, 4>} : tensor<4xf32> -> tensor<1x1x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = trt.elementwise kSUM %x, %[[B]] {name = "aten::add.Tensor"} : (tensor<2x3x4xf32>, tensor<1x1x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @broadcast_add(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// sub with alpha = 2: other * alpha first; the scalar is a rank-aligned 1x1 constant
// (no shuffle at run time), helper layers carry a suffix.
// CHECK-LABEL: func.func private @sub_alpha_trt_0(
// CHECK-NEXT:    %[[A:.*]] = trt.constant {name = "aten::sub.Tensor (alpha scalar)"} dense<2.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = trt.elementwise kPROD %y, %[[A]] {name = "aten::sub.Tensor (alpha)"}
// CHECK-NEXT:    %[[D:.*]] = trt.elementwise kSUB %x, %[[S]] {name = "aten::sub.Tensor"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %[[D]]
func.func @sub_alpha(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.sub.Tensor %x, %y {alpha = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
