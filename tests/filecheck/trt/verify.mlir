// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics | filecheck %s
// TensorRT's layer rules are verifier errors naming the op, the nvinfer1 layer and the layer name.

func.func @elementwise_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = trt.elementwise kSUM %a, %b {name = "aten::add.Tensor @ model.py:7"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.elementwise (IElementWiseLayer) 'aten::add.Tensor @ model.py:7': inputs must have equal rank (TensorRT broadcasts only over size-1 dims), got shapes [2, 3], [3]

// -----

func.func @elementwise_broadcast(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x3xf32> {
  %0 = trt.elementwise kPROD %a, %b {name = "mul"} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.elementwise (IElementWiseLayer) 'mul': dims are neither equal nor 1 in shapes [2, 3], [2, 2]

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %0 = trt.matrix_multiply %a kNONE, %b kNONE {name = "mm"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
// CHECK: trt.matrix_multiply (IMatrixMultiplyLayer) 'mm': contraction dims differ: 3 in [2, 3] (kNONE) and 4 in [4, 5] (kNONE)

// -----

func.func @matmul_batch_rank(%a: tensor<2x3xf32>, %b: tensor<7x3x5xf32>) -> tensor<7x2x5xf32> {
  %0 = trt.matrix_multiply %a kNONE, %b kNONE {name = "bmm"} : (tensor<2x3xf32>, tensor<7x3x5xf32>) -> tensor<7x2x5xf32>
  func.return %0 : tensor<7x2x5xf32>
}
// CHECK: trt.matrix_multiply (IMatrixMultiplyLayer) 'bmm': inputs must have the same number of batch dims

// -----

func.func @conv1d(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6xf32> {
  %0 = trt.convolution %x, %w {name = "conv1d", num_output_maps = 4 : i64, kernel_size = array<i64: 3>} : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  func.return %0 : tensor<1x4x6xf32>
}
// CHECK: trt.convolution (IConvolutionLayer) 'conv1d': IConvolutionLayer supports 2-D and 3-D windows only, got 1-D [3]

// -----

func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = trt.convolution %x, %w {name = "conv", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}
// CHECK: trt.convolution (IConvolutionLayer) 'conv': result type must be tensor<1x4x3x3xf32> by the layer's shape rules, declared tensor<1x4x8x8xf32>

// -----

func.func @softmax_axes(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = trt.softmax %a {name = "softmax", axes = 4 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.softmax (ISoftMaxLayer) 'softmax': axes bitmask 0b100 selects an axis >= rank 2

// -----

func.func @reduce_keep(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = trt.reduce kMAX %a {name = "amax", axes = 2 : i32, keep_dims = true} : tensor<2x3xf32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: trt.reduce (IReduceLayer) 'amax': result type must be tensor<2x1xf32> by the layer's shape rules, declared tensor<2xf32>

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = trt.shuffle %a {name = "view", reshape_dims = array<i64: 4, 2>} : tensor<2x3xf32> -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: trt.shuffle (IShuffleLayer) 'view': reshape changes the element count: [2, 3] has 6, [4, 2] has 8

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %0 = trt.concatenation %a, %b {name = "cat", axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: trt.concatenation (IConcatenationLayer) 'cat': inputs must agree on every dim except axis 0, got [2, 3], [2, 4]

// -----

func.func @slice_bounds(%a: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %0 = trt.slice %a {name = "narrow", start = array<i64: 0, 2>, size = array<i64: 2, 2>, stride = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
// CHECK: trt.slice (ISliceLayer) 'narrow': kSTRICT_BOUNDS slice reads out of bounds in dim 1: start 2, size 2, stride 1, input size 3

// -----

func.func @logical_types(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = trt.elementwise kAND %a, %a {name = "and"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.elementwise (IElementWiseLayer) 'and': kAND takes bool (i1) inputs, got f32

// -----

func.func @scale_weights(%a: tensor<1x3x2x2xf32>, %s: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = trt.scale kCHANNEL %a scale(%s : tensor<3xf32>) {name = "bn"} : tensor<1x3x2x2xf32> -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<1x3x2x2xf32>
}
// CHECK: trt.scale (IScaleLayer) 'bn': scale must be build-time weights (a trt.constant)

// -----

func.func @f64(%a: tensor<2xf64>) -> tensor<2xf64> {
  %0 = trt.unary kEXP %a {name = "exp"} : tensor<2xf64> -> tensor<2xf64>
  func.return %0 : tensor<2xf64>
}
// CHECK: trt.unary (IUnaryLayer) 'exp': operand #0 has element type f64, TensorRT takes f32, f16, bf16, i32, i64, i8, i1

// -----

func.func @quantize_scale_not_weights(%x: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<2x3xi8> {
  %0 = trt.quantize %x, %s {name = "aten::mul.Scalar @ model.py:9 (quantize)"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}
// CHECK: trt.quantize (IQuantizeLayer) 'aten::mul.Scalar @ model.py:9 (quantize)': scale must be build-time weights (a trt.constant), not a run-time tensor

// -----

func.func @quantize_to_float(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = trt.constant {name = "s"} dense<0.5> : tensor<f32>
  %0 = trt.quantize %x, %s {name = "q"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.quantize (IQuantizeLayer) 'q': result type must be tensor<2x3xi8> by the layer's shape rules, declared tensor<2x3xf32>

// -----

func.func @per_tensor_scale_with_a_shape(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  %s = trt.constant {name = "s"} dense<0.5> : tensor<1xf32>
  %0 = trt.quantize %x, %s {name = "q"} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}
// CHECK: trt.quantize (IQuantizeLayer) 'q': a per-tensor scale is 0-D, got shape [1] (set axis for a per-channel one)

// -----

func.func @per_channel_scale_size(%q: tensor<2x3xi8>) -> tensor<2x3xf32> {
  %s = trt.constant {name = "s"} dense<0.5> : tensor<2xf32>
  %0 = trt.dequantize %q, %s {name = "dq", axis = 1 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.dequantize (IDequantizeLayer) 'dq': a per-channel scale along axis 1 has shape [3], got [2]

// -----

func.func @dequantize_float_input(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = trt.constant {name = "s"} dense<0.5> : tensor<f32>
  %0 = trt.dequantize %x, %s {name = "dq"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: trt.dequantize (IDequantizeLayer) 'dq': input has element type f32, this layer takes i8

// -----

func.func @dequantize_axis_out_of_range(%q: tensor<2x3xi8>) -> tensor<2x3xf16> {
  %s = trt.constant {name = "s"} dense<0.5> : tensor<3xf16>
  %0 = trt.dequantize %q, %s {name = "dq", axis = 2 : i64} : (tensor<2x3xi8>, tensor<3xf16>) -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}
// CHECK: trt.dequantize (IDequantizeLayer) 'dq': axis 2 is out of range for an input of rank 2
