// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=true}' --elide-resources | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=false}' --elide-resources | filecheck %s --check-prefix=FLOAT
// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=true}' | ziggurat-opt -p 'convert-fused-to-kernel' | filecheck %s --check-prefix=ROUNDTRIP

// A linear of a PT2E-quantized uint8 input (the ops decompose-quantize makes of the pair prove
// it: an integer of [0, 255] minus the zero point, times the scale) and a weight folded from
// int8 times its row scales
// (ziggurat.row_scales) takes the int8 weight back, packed as KN32n4k: the epilogue table
// (zero point x column sums, a_scale x w_scale, w_scale; 3 rows of 32 float32 words) then the
// VNNI-4 panels (1 panel x 4 k x 32 columns): 384 + 128 bytes. The input's scale and zero point
// go on the op. A linear of a float input keeps the float32 panels; int8=false packs float32.

// CHECK-LABEL: func.func @quantized
// CHECK:         %[[P:.*]] = torch.literal dense_resource<{{.*}}> : tensor<512xi8>
// CHECK:         fused.linear %{{.*}}, %[[P]] {ziggurat.input_quantization = [5.000000e-02 : f64, 3 : i64], post_ops = [#fused.unary<relu>], weight_layout = "KN32n4k", weight_shape = array<i64: 2, 3>} : (tensor<4x3xf32>, tensor<512xi8>) -> tensor<4x2xf32>
// FLOAT-LABEL: func.func @quantized
// FLOAT:         weight_layout = "KN32n"
// FLOAT-NOT:     KN32n4k
// ROUNDTRIP-LABEL: func.func @quantized
// ROUNDTRIP:       weight_layout = "KN32n4k"
func.func @quantized(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %r = torch.aten.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @float_input
// CHECK:         weight_layout = "KN32n"
// CHECK-NOT:     KN32n4k
func.func @float_input(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = torch.aten.linear %x, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// A convolution of one group of a quantized input packs its int8 weight [O, I, kh, kw] as
// the GEMM's [O, kh*kw*I] (KN32n4k: the GEMM over the output pixels, channels-last, a KxK
// one on the implicit im2col): 1x1: 384 + 1 panel x 4 k x 32 bytes; 3x3: 384 + 28 x 32.
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG:     %[[P:.*]] = torch.literal dense_resource<{{.*}}> : tensor<512xi8>
// CHECK-DAG:     %[[P3:.*]] = torch.literal dense_resource<{{.*}}> : tensor<1280xi8>
// CHECK:         fused.conv2d %{{.*}}, %[[P]] {{.*}}ziggurat.input_quantization = [5.000000e-02 : f64, 3 : i64]{{.*}}weight_layout = "KN32n4k", weight_shape = array<i64: 2, 3, 1, 1>
// CHECK:         fused.conv2d %{{.*}}, %[[P3]] {{.*}}weight_layout = "KN32n4k", weight_shape = array<i64: 2, 3, 3, 3>
func.func @pointwise(%x: tensor<1x3x4x5xf32>) -> (tensor<1x2x4x5xf32>, tensor<1x2x2x3xf32>) {
  %w = torch.literal dense<[[[[3]], [[-7]], [[1]]], [[[-128]], [[127]], [[0]]]]> : tensor<2x3x1x1xi8>
  %w3 = torch.literal dense<1> : tensor<2x3x3x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<1x3x4x5xui8>) -> tensor<1x3x4x5xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3x1x1xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3x1x1xf32>
  %wd3 = torch.operator "quantized_decomposed::dequantize_per_channel"(%w3, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3x3x3xf32>
  %y = torch.aten.conv2d %dq, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x4x5xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x5xf32>
  %y3 = torch.aten.conv2d %dq, %wd3 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x4x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x2x3xf32>
  func.return %y, %y3 : tensor<1x2x4x5xf32>, tensor<1x2x2x3xf32>
}

// The proof is read from the ops: the same chain with a clamp bound that is not an integer,
// or a NaN test on another value than the chain's input, proves nothing, and the linear keeps
// the float32 panels.
// CHECK-LABEL: func.func @not_proven
// CHECK-NOT:     KN32n4k
// CHECK:         weight_layout = "KN32n"
// CHECK:         weight_layout = "KN32n"
// CHECK-NOT:     KN32n4k
func.func @not_proven(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = torch.literal dense<[[1.500000e+00, -3.500000e+00, 5.000000e-01], [-3.200000e+01, 3.175000e+01, 0.000000e+00]]> : tensor<2x3xf32> {ziggurat.row_scales = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>}
  %0 = torch.aten.mul.Scalar %x {other = 2.000000e+01 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = torch.aten.round %0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = torch.aten.add.Scalar %1 {other = 3 : i64, alpha = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %3 = torch.aten.clamp %2 {min = 5.000000e-01 : f64, max = 2.550000e+02 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = torch.aten.eq.Tensor %x, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %5 = torch.aten.where.ScalarOther %4, %3 {other = 0.000000e+00 : f64} : (tensor<4x3xi1>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %6 = torch.aten.sub.Scalar %5 {other = 3 : i64, alpha = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %7 = torch.aten.mul.Scalar %6 {other = 5.000000e-02 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = torch.aten.linear %7, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %c = torch.aten.clamp %2 {min = 0 : i64, max = 255 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %e = torch.aten.eq.Tensor %t, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %n = torch.aten.where.ScalarOther %e, %c {other = 0.000000e+00 : f64} : (tensor<4x3xi1>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = torch.aten.sub.Scalar %n {other = 3 : i64, alpha = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %d = torch.aten.mul.Scalar %s {other = 5.000000e-02 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %z = torch.aten.linear %d, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y, %z : tensor<4x2xf32>, tensor<4x2xf32>
}
