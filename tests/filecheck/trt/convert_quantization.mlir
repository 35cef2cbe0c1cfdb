// RUN: ziggurat-opt %s -p 'graph-opt,convert-torch-to-trt{min_block_size=1}' | filecheck %s
// PT2E's quantize -> dequantize pairs become TensorRT Q/DQ layers where the pair's integers fit
// int8 without a zero point: x * (1 / scale) (eager's product), quantize by 1, dequantize by the
// scale.  uint8 with zero point 128 adds the NaN test (NaN -> -128, eager's (0 - 128) * scale);
// uint8 with zero point 3 ([-3, 252]) does not fit int8 and stays float32 layers.  The folded
// int8 weight of the linear becomes its int8 constant and a per-channel dequantize along axis 0.

// CHECK-LABEL: func.func private @pairs_trt_0(
// int8, zero point 0, [-128, 127]: the two layers alone
// CHECK:      %[[S0:.*]] = trt.constant {name = "aten::mul.Scalar #2 (x * (1 / scale) scalar)"} dense<2.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT: %[[T0:.*]] = trt.elementwise kPROD %x, %[[S0]] {{.*}} -> tensor<2x3xf32>
// CHECK-NEXT: %[[ONE0:.*]] = trt.constant {name = "aten::mul.Scalar #2 (quantize scale)"} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[Q0:.*]] = trt.quantize %[[T0]], %[[ONE0]] {name = "aten::mul.Scalar #2 (quantize)"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi8>
// CHECK-NEXT: %[[D0:.*]] = trt.constant {name = "aten::mul.Scalar #2 (dequantize scale)"} dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[PAIR0:.*]] = trt.dequantize %[[Q0]], %[[D0]] {name = "aten::mul.Scalar #2 (dequantize)"} : (tensor<2x3xi8>, tensor<f32>) -> tensor<2x3xf32>
// uint8, zero point 3: float32 layers, no Q/DQ
// CHECK:      trt.unary kROUND
// uint8, zero point 128: [-128, 127] after the shift; NaN becomes -128 before the quantize
// CHECK:      %[[T1:.*]] = trt.elementwise kPROD %x, %{{.*}} {name = "aten::mul.Scalar #4 (x * (1 / scale))"}
// CHECK-NEXT: %[[N1:.*]] = trt.elementwise kEQUAL %[[T1]], %[[T1]] {name = "aten::mul.Scalar #4 (not NaN)"}
// CHECK-NEXT: %[[Z1:.*]] = trt.constant {{.*}} dense<-1.280000e+02> : tensor<1x1xf32>
// CHECK-NEXT: %[[G1:.*]] = trt.select %[[N1]], %[[T1]], %[[Z1]]
// CHECK-NEXT: %[[ONE1:.*]] = trt.constant {{.*}} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[Q1:.*]] = trt.quantize %[[G1]], %[[ONE1]]
// CHECK-NEXT: %[[D1:.*]] = trt.constant {{.*}} dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: trt.dequantize %[[Q1]], %[[D1]]
// CHECK-NOT:  trt.quantize
// the linear's int8 weight
// CHECK:      %[[W:.*]] = trt.constant {name = "fused.linear (dequantize_per_channel_folded int8)"} dense<{{\[\[}}1, -2, 3], [127, -127, 0]]> : tensor<2x3xi8>
// CHECK-NEXT: %[[WS:.*]] = trt.constant {name = "fused.linear (dequantize_per_channel_folded scales)"} dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-NEXT: %[[WD:.*]] = trt.dequantize %[[W]], %[[WS]] {name = "fused.linear (dequantize dequantize_per_channel_folded)", axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: trt.matrix_multiply %[[PAIR0]] kNONE, %[[WD]] kTRANSPOSE
func.func @pairs(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = torch.literal dense<[[1, -2, 3], [127, -127, 0]]> : tensor<2x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %quantize_per_tensor = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-01 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<2x3xf32>) -> tensor<2x3xi8>
  %dequantize_per_tensor = torch.operator "quantized_decomposed::dequantize_per_tensor"(%quantize_per_tensor) {args = {scale = 5.000000e-01 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>) -> tensor<2x3xf32>
  %quantize_per_tensor_1 = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 2.500000e-01 : f64, zero_point = 128 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<2x3xf32>) -> tensor<2x3xui8>
  %dequantize_per_tensor_1 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%quantize_per_tensor_1) {args = {scale = 2.500000e-01 : f64, zero_point = 128 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xui8>) -> tensor<2x3xf32>
  %quantize_per_tensor_2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 2.500000e-01 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<2x3xf32>) -> tensor<2x3xui8>
  %dequantize_per_tensor_2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%quantize_per_tensor_2) {args = {scale = 2.500000e-01 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xui8>) -> tensor<2x3xf32>
  %zeros = torch.aten.zeros {size = array<i64: 2>, dtype = i64, device = "cpu", pin_memory = false} : tensor<2xi64>
  %dequantize_per_channel = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %zeros) {args = {axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %linear = torch.aten.linear %dequantize_per_tensor, %dequantize_per_channel : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %linear, %dequantize_per_tensor_1, %dequantize_per_tensor_2 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
