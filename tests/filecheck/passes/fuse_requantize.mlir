// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=true},fuse-requantize{isa=avx512}' --elide-resources | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=true},fuse-requantize{isa=scalar}' --elide-resources | filecheck %s --check-prefix=SCALAR
// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512 int8=true},fuse-requantize' | ziggurat-opt -p 'convert-fused-to-kernel' | filecheck %s --check-prefix=ROUNDTRIP

// PT2E's linear -> relu -> quantize -> dequantize -> linear: the pair after the first (int8)
// linear becomes its last post-op and the eight float32 ops decompose-quantize made of it are
// gone; the second linear still reads a proven uint8 input (its input_quantization comes from
// the post-op) and takes its int8 weight.  As that int8 linear is the value's only reader, the
// value is stored as its integers: #fused.quantize<scale, zero_point, quant_min, quant_max>,
// a ui8 result, read by the second linear as ui8.
// The pair on the function's input (no int8 op before it) is read by the int8 linear only: it
// stops at its integers, cast to ui8 (ziggurat.quantized_integers: the cast is exact).
// CHECK-LABEL: func.func @chain
// CHECK:         %[[W:.*]] = torch.aten.where.ScalarOther
// CHECK-NEXT:    %[[Q:.*]] = torch.aten.to.dtype %[[W]] {ziggurat.quantized_integers, dtype = ui8{{.*}} -> tensor<4x3xui8>
// CHECK:         %[[A:.*]] = fused.linear %[[Q]], %{{.*}} {ziggurat.input_quantization = [5.000000e-02 : f64, 3 : i64], post_ops = [#fused.unary<relu>, #fused.quantize<0.125, 0, 0, 255>], weight_layout = "KN32n4k"{{.*}} -> tensor<4x2xui8>
// CHECK-NOT:     torch.aten.round
// CHECK:         %[[B:.*]] = fused.linear %[[A]], %{{.*}} {ziggurat.input_quantization = [1.250000e-01 : f64, 0 : i64], weight_layout = "KN32n4k"{{.*}} : (tensor<4x2xui8>, tensor<512xi8>) -> tensor<4x2xf32>
// CHECK:         func.return %[[B]]
// ROUNDTRIP-LABEL: func.func @chain
// ROUNDTRIP:       post_ops = [#fused.unary<relu>, #fused.quantize<0.125, 0, 0, 255>]
func.func @chain(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %w2 = torch.literal dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %wd2 = torch.operator "quantized_decomposed::dequantize_per_channel"(%w2, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %r = torch.aten.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%r) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x2xf32>) -> tensor<4x2xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x2xui8>) -> tensor<4x2xf32>
  %y2 = torch.aten.linear %dq2, %wd2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  func.return %y2 : tensor<4x2xf32>
}

// The linear's result also leaves the function: the pair keeps its ops (fusing would change
// the value returned). A float32 linear (an unquantized input) takes no requantize either.
// CHECK-LABEL: func.func @shared
// CHECK:         %[[Y:.*]] = fused.linear {{.*}}weight_layout = "KN32n4k"
// CHECK-NOT:     requantize
// CHECK:         torch.aten.mul.Scalar %[[Y]]
// CHECK:         torch.aten.round
// CHECK-LABEL: func.func @float_producer
// CHECK:         fused.linear {{.*}}weight_layout = "KN32n"
// CHECK-NOT:     requantize
// CHECK:         torch.aten.round
func.func @shared(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%y) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x2xf32>) -> tensor<4x2xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x2xui8>) -> tensor<4x2xf32>
  func.return %y, %dq2 : tensor<4x2xf32>, tensor<4x2xf32>
}
func.func @float_producer(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = torch.aten.linear %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%y) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x2xf32>) -> tensor<4x2xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x2xui8>) -> tensor<4x2xf32>
  func.return %dq2 : tensor<4x2xf32>
}

// A reader that is not an int8 op (the tanh) keeps the float32 value: #fused.requantize stays.
// CHECK-LABEL: func.func @float_reader
// CHECK:         %[[F:.*]] = fused.linear {{.*}}#fused.requantize<0.125, 0, 0, 255>]{{.*}} -> tensor<4x2xf32>
// CHECK:         fused.linear %[[F]], {{.*}} : (tensor<4x2xf32>, tensor<512xi8>) -> tensor<4x2xf32>
// CHECK:         torch.aten.tanh %[[F]]
func.func @float_reader(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %w2 = torch.literal dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %wd2 = torch.operator "quantized_decomposed::dequantize_per_channel"(%w2, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %r = torch.aten.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%r) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x2xf32>) -> tensor<4x2xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x2xui8>) -> tensor<4x2xf32>
  %y2 = torch.aten.linear %dq2, %wd2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %t = torch.aten.tanh %dq2 : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y2, %t : tensor<4x2xf32>, tensor<4x2xf32>
}

// The value is also the residual of the second linear (fused as its binary post-op): it reads
// the ui8 tensor there too, dequantized by ziggurat.other_quantization.
// CHECK-LABEL: func.func @residual
// CHECK:         %[[R:.*]] = fused.linear {{.*}}#fused.quantize<0.125, 0, 0, 255>]{{.*}} -> tensor<4x2xui8>
// CHECK:         fused.linear %[[R]], %{{.*}} other(%[[R]] : tensor<4x2xui8>) {ziggurat.input_quantization = [1.250000e-01 : f64, 0 : i64], ziggurat.other_quantization = [1.250000e-01 : f64, 0 : i64], post_ops = [#fused.binary<add, 1.0>]
func.func @residual(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %w2 = torch.literal dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %wd2 = torch.operator "quantized_decomposed::dequantize_per_channel"(%w2, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %r = torch.aten.relu %y : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%r) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x2xf32>) -> tensor<4x2xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x2xui8>) -> tensor<4x2xf32>
  %y2 = torch.aten.linear %dq2, %wd2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %s2 = torch.aten.add.Tensor %y2, %dq2 {alpha = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %s2 : tensor<4x2xf32>
}

// On an ISA with the native depthwise kernel (avx512, avx2) a depthwise convolution of a float32
// weight takes quantized operands too: it reads the input pair's integers (cast to ui8, its
// input_quantization set) and quantizes its output in its epilogue (#fused.quantize, ui8),
// which the int8 1x1 convolution reads.  On the scalar ISA it keeps float32 operands.
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[Q:.*]] = torch.aten.to.dtype %{{.*}} {ziggurat.quantized_integers, dtype = ui8
// CHECK:         %[[D:.*]] = fused.conv2d %[[Q]], %{{.*}} {ziggurat.input_quantization = [5.000000e-02 : f64, 3 : i64]{{.*}}groups = 4 : i64, post_ops = [#fused.unary<relu6>, #fused.quantize<0.125, 0, 0, 255>]} : (tensor<1x4x5x5xui8>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xui8>
// CHECK:         fused.conv2d %[[D]], {{.*}} : (tensor<1x4x5x5xui8>, tensor<{{.*}}xi8>) -> tensor<1x2x5x5xf32>
// SCALAR-LABEL: func.func @depthwise
// SCALAR:         fused.conv2d {{.*}}groups = 4 : i64, post_ops = [#fused.unary<relu6>]} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
func.func @depthwise(%x: tensor<1x4x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %w = torch.literal dense<[[[[1, -2, 3], [4, 5, -6], [7, 8, 9]]], [[[1, 0, 0], [0, 1, 0], [0, 0, 1]]], [[[-1, -1, -1], [2, 2, 2], [3, 3, 3]]], [[[9, 8, 7], [6, 5, 4], [3, 2, 1]]]]> : tensor<4x1x3x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01, 1.250000e-01, 6.250000e-02]> : tensor<4xf32>
  %z = torch.literal dense<0> : tensor<4xi64>
  %w2 = torch.literal dense<[[[[3]], [[-7]], [[1]], [[2]]], [[[-128]], [[127]], [[0]], [[5]]]]> : tensor<2x4x1x1xi8>
  %s2 = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z2 = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x1x3x3xi8>, tensor<4xf32>, tensor<4xi64>) -> tensor<4x1x3x3xf32>
  %y = torch.aten.conv2d %dq, %wd {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %r = torch.aten.relu6 %y : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%r) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.250000e-01 : f64, zero_point = 0 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<1x4x5x5xui8>) -> tensor<1x4x5x5xf32>
  %wd2 = torch.operator "quantized_decomposed::dequantize_per_channel"(%w2, %s2, %z2) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x4x1x1xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x4x1x1xf32>
  %y2 = torch.aten.conv2d %dq2, %wd2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x5x5xf32>
  func.return %y2 : tensor<1x2x5x5xf32>
}
