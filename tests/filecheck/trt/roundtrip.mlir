// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Every trt op prints in its custom form and parses back; parameters at their TensorRT defaults are elided.

func.func @all(%x: tensor<1x3x8x8xf32>, %m: tensor<2x3xf32>, %n: tensor<3x4xf32>, %c: tensor<2x3xi1>, %idx: tensor<2xi32>) -> tensor<1x4x8x8xf32> {
  %w = trt.constant {name = "conv.weight"} dense<1.0> : tensor<4x3x3x3xf32>
  %b = trt.constant {name = "conv.bias"} dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %0 = trt.convolution %x, %w, %b {name = "conv", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>, pre_padding = array<i64: 1, 1>, post_padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %1 = trt.activation kCLIP %0 {name = "hardtanh", alpha = -1.0 : f32, beta = 1.0 : f32} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %dw = trt.constant {name = "deconv.weight"} dense<0.5> : tensor<4x2x2x2xf32>
  %2 = trt.deconvolution %1, %dw {name = "deconv", num_output_maps = 2 : i64, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32>
  %3 = trt.matrix_multiply %m kNONE, %n kNONE {name = "mm"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %4 = trt.elementwise kSUM %m, %m {name = "add"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = trt.elementwise kLESS %m, %m {name = "lt"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %6 = trt.unary kEXP %m {name = "exp"} : tensor<2x3xf32> -> tensor<2x3xf32>
  %7 = trt.select %c, %m, %6 {name = "where"} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = trt.constant {name = "s"} dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %8 = trt.scale kCHANNEL %x scale(%s : tensor<3xf32>) {name = "scale"} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  %9 = trt.identity %m {name = "id"} : tensor<2x3xf32> -> tensor<2x3xf32>
  %10 = trt.cast %m {name = "cast"} : tensor<2x3xf32> -> tensor<2x3xf16>
  %qs = trt.constant {name = "qs"} dense<0.5> : tensor<f32>
  %q = trt.quantize %m, %qs {name = "quantize"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi8>
  %dqs = trt.constant {name = "dqs"} dense<[0.5, 0.25]> : tensor<2xf32>
  %dq = trt.dequantize %q, %dqs {name = "dequantize", axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
  %11 = trt.einsum %m, %n {name = "einsum", equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %12 = trt.pooling kMAX %x {name = "maxpool", window_size = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %13 = trt.reduce kSUM %m {name = "sum", axes = 2 : i32, keep_dims = true} : tensor<2x3xf32> -> tensor<2x1xf32>
  %14 = trt.softmax %m {name = "softmax", axes = 2 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>
  %g = trt.constant {name = "g"} dense<1.0> : tensor<1x1x1x8xf32>
  %bb = trt.constant {name = "bb"} dense<0.0> : tensor<1x1x1x8xf32>
  %15 = trt.normalization %x, %g, %bb {name = "ln", axes = 8 : i32} : (tensor<1x3x8x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x3x8x8xf32>
  %16, %17 = trt.topk kMAX %m {name = "topk", k = 2 : i64, axes = 2 : i32} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi32>
  %18 = trt.cumulative kSUM %m {name = "cumsum", axis = 1 : i64, reverse = true} : tensor<2x3xf32> -> tensor<2x3xf32>
  %19 = trt.shuffle %m {name = "t", first_transpose = array<i64: 1, 0>, reshape_dims = array<i64: 0, -1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %20 = trt.concatenation %m, %m {name = "cat", axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %21 = trt.slice %m {name = "slice", start = array<i64: 0, 2>, size = array<i64: 2, 2>, stride = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2x2xf32>
  %f = trt.constant {name = "f"} dense<7.0> : tensor<f32>
  %22 = trt.slice %m fill(%f : tensor<f32>) {name = "pad", start = array<i64: -1, -1>, size = array<i64: 4, 5>, stride = array<i64: 1, 1>, mode = #trt<sample_mode kFILL>} : tensor<2x3xf32> -> tensor<4x5xf32>
  %23 = trt.gather kDEFAULT %m[%idx] {name = "index_select", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  %ii = trt.constant {name = "ii"} dense<[[0, 1, 2], [2, 1, 0]]> : tensor<2x3xi32>
  %24 = trt.scatter kELEMENT %m[%ii], %m {name = "scatter", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %25 = trt.padding %x {name = "pad2", pre_padding = array<i64: 1, 1>, post_padding = array<i64: 0, -1>} : tensor<1x3x8x8xf32> -> tensor<1x3x9x8xf32>
  %26 = trt.resize kLINEAR kALIGN_CORNERS %x {name = "up", scales = array<f32: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  %27 = trt.shape %x {name = "size"} : tensor<1x3x8x8xf32> -> tensor<4xi64>
  %28 = trt.fill kLINSPACE {name = "arange", alpha = 0.0 : f64, beta = array<f64: 1.0>} : tensor<5xf32>
  %gr = trt.constant {name = "grid"} dense<0.5> : tensor<1x2x2x2xf32>
  %29 = trt.grid_sample %x, %gr {name = "grid_sampler", align_corners = true, sample_mode = #trt<sample_mode kREFLECT>} : (tensor<1x3x8x8xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// CHECK: %w = trt.constant {name = "conv.weight"} dense<1.000000e+00> : tensor<4x3x3x3xf32>
// CHECK-NEXT: %b = trt.constant {name = "conv.bias"} dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %0 = trt.convolution %x, %w, %b {name = "conv", num_output_maps = 4 : i64, kernel_size = array<i64: 3, 3>, pre_padding = array<i64: 1, 1>, post_padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %1 = trt.activation kCLIP %0 {name = "hardtanh", alpha = -1.000000e+00 : f32, beta = 1.000000e+00 : f32} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK-NEXT: %dw = trt.constant {name = "deconv.weight"} dense<5.000000e-01> : tensor<4x2x2x2xf32>
// CHECK-NEXT: %2 = trt.deconvolution %1, %dw {name = "deconv", num_output_maps = 2 : i64, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x16x16xf32>
// CHECK-NEXT: %3 = trt.matrix_multiply %m kNONE, %n kNONE {name = "mm"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %4 = trt.elementwise kSUM %m, %m {name = "add"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %5 = trt.elementwise kLESS %m, %m {name = "lt"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %6 = trt.unary kEXP %m {name = "exp"} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %7 = trt.select %c, %m, %6 {name = "where"} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %s = trt.constant {name = "s"} dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT: %8 = trt.scale kCHANNEL %x scale(%s : tensor<3xf32>) {name = "scale"} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %9 = trt.identity %m {name = "id"} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %10 = trt.cast %m {name = "cast"} : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK-NEXT: %qs = trt.constant {name = "qs"} dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %q = trt.quantize %m, %qs {name = "quantize"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi8>
// CHECK-NEXT: %dqs = trt.constant {name = "dqs"} dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-NEXT: %dq = trt.dequantize %q, %dqs {name = "dequantize", axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %11 = trt.einsum %m, %n {name = "einsum", equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %12 = trt.pooling kMAX %x {name = "maxpool", window_size = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %13 = trt.reduce kSUM %m {name = "sum", axes = 2 : i32, keep_dims = true} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK-NEXT: %14 = trt.softmax %m {name = "softmax", axes = 2 : i32} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %g = trt.constant {name = "g"} dense<1.000000e+00> : tensor<1x1x1x8xf32>
// CHECK-NEXT: %bb = trt.constant {name = "bb"} dense<0.000000e+00> : tensor<1x1x1x8xf32>
// CHECK-NEXT: %15 = trt.normalization %x, %g, %bb {name = "ln", axes = 8 : i32} : (tensor<1x3x8x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT: %16, %17 = trt.topk kMAX %m {name = "topk", k = 2 : i64, axes = 2 : i32} : tensor<2x3xf32> -> tensor<2x2xf32>, tensor<2x2xi32>
// CHECK-NEXT: %18 = trt.cumulative kSUM %m {name = "cumsum", axis = 1 : i64, reverse = true} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %19 = trt.shuffle %m {name = "t", first_transpose = array<i64: 1, 0>, reshape_dims = array<i64: 0, -1>} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT: %20 = trt.concatenation %m, %m {name = "cat", axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %21 = trt.slice %m {name = "slice", start = array<i64: 0, 2>, size = array<i64: 2, 2>, stride = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %f = trt.constant {name = "f"} dense<7.000000e+00> : tensor<f32>
// CHECK-NEXT: %22 = trt.slice %m fill(%f : tensor<f32>) {name = "pad", start = array<i64: -1, -1>, size = array<i64: 4, 5>, stride = array<i64: 1, 1>, mode = #trt<sample_mode kFILL>} : tensor<2x3xf32> -> tensor<4x5xf32>
// CHECK-NEXT: %23 = trt.gather kDEFAULT %m[%idx] {name = "index_select", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
// CHECK-NEXT: %ii = trt.constant {name = "ii"} dense<[[0, 1, 2], [2, 1, 0]]> : tensor<2x3xi32>
// CHECK-NEXT: %24 = trt.scatter kELEMENT %m[%ii], %m {name = "scatter", axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %25 = trt.padding %x {name = "pad2", pre_padding = array<i64: 1, 1>, post_padding = array<i64: 0, -1>} : tensor<1x3x8x8xf32> -> tensor<1x3x9x8xf32>
// CHECK-NEXT: %26 = trt.resize kLINEAR kALIGN_CORNERS %x {name = "up", scales = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
// CHECK-NEXT: %27 = trt.shape %x {name = "size"} : tensor<1x3x8x8xf32> -> tensor<4xi64>
// CHECK-NEXT: %28 = trt.fill kLINSPACE {name = "arange", alpha = 0.000000e+00 : f64, beta = array<f64: 1.000000e+00>} : tensor<5xf32>
// CHECK-NEXT: %gr = trt.constant {name = "grid"} dense<5.000000e-01> : tensor<1x2x2x2xf32>
// CHECK-NEXT: %29 = trt.grid_sample %x, %gr {name = "grid_sampler", align_corners = true, sample_mode = #trt<sample_mode kREFLECT>} : (tensor<1x3x8x8xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT: func.return %0 : tensor<1x4x8x8xf32>

