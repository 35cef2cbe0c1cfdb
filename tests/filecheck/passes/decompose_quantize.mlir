// RUN: ziggurat-opt %s -p decompose-quantize | filecheck %s
// RUN: ziggurat-opt %s -p graph-opt | filecheck %s --check-prefix=GRAPH
// PT2E's quantize -> dequantize pair is float32 arithmetic (the integer between the two is
// exact in float32): x * (1/scale), round, + zero_point, clamp to the bounds, NaN -> 0 (as
// .to(uint8) does; tested on x, NaN where the clamped value is), - zero_point, * scale. Only a
// quantize whose every use is a dequantize with its parameters is rewritten. graph-opt then
// folds the dequantization of the constant int8 weight into a float32 literal (scale 0.5 /
// 0.25 per output row) that keeps its row scales.

// CHECK-LABEL: func.func @pair
// CHECK-NEXT:    %[[W:.*]] = torch.literal
// CHECK:         %[[Q0:.*]] = torch.aten.mul.Scalar %x {other = 2.000000e+01 : f64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[Q1:.*]] = torch.aten.round %[[Q0]]
// CHECK-NEXT:    %[[Q2:.*]] = torch.aten.add.Scalar %[[Q1]] {other = 3 : i64, alpha = 1 : i64}
// CHECK-NEXT:    %[[Q3:.*]] = torch.aten.clamp %[[Q2]] {min = 0 : i64, max = 255 : i64}
// CHECK-NEXT:    %[[OK:.*]] = torch.aten.eq.Tensor %x, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
// CHECK-NEXT:    %[[Q4:.*]] = torch.aten.where.ScalarOther %[[OK]], %[[Q3]] {other = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[Y0:.*]] = torch.aten.sub.Scalar %[[Q4]] {other = 3 : i64, alpha = 1 : i64}
// CHECK-NEXT:    %[[Y:.*]] = torch.aten.mul.Scalar %[[Y0]] {other = 5.000000e-02 : f64}
// CHECK-NOT:     quantized_decomposed::quantize_per_tensor
// CHECK-NOT:     quantized_decomposed::dequantize_per_tensor
// CHECK:         torch.operator "quantized_decomposed::dequantize_per_channel"
// CHECK:         torch.aten.linear %[[Y]]

// GRAPH-LABEL: func.func @pair
// GRAPH-NOT:     torch.operator
// GRAPH:         %[[W:.*]] = torch.literal dense<{{\[\[}}1.500000e+00, -3.500000e+00, 5.000000e-01], [-3.200000e+01, 3.175000e+01, 0.000000e+00]]> : tensor<2x3xf32> {ziggurat.row_scales = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>}
// GRAPH-NOT:     torch.operator
// GRAPH:         fused.linear %{{.*}}, %[[W]]
func.func @pair(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[3, -7, 1], [-128, 127, 0]]> : tensor<2x3xi8>
  %s = torch.literal dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  %z = torch.literal dense<0> : tensor<2xi64>
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %wd = torch.operator "quantized_decomposed::dequantize_per_channel"(%w, %s, %z) {args = {axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64, dtype = i8}, operand_names = ["input", "scales", "zero_points"], schema = "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %y = torch.aten.linear %dq, %wd : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// A quantized value that leaves the function, or a dequantize with other parameters, keeps
// the ops torch runs.
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %[[Q:.*]] = torch.operator "quantized_decomposed::quantize_per_tensor"(%x)
// CHECK-NEXT:    %[[D:.*]] = torch.operator "quantized_decomposed::dequantize_per_tensor"(%[[Q]])
// CHECK-NEXT:    %[[Q2:.*]] = torch.operator "quantized_decomposed::quantize_per_tensor"(%x)
// CHECK-NEXT:    %[[D2:.*]] = torch.operator "quantized_decomposed::dequantize_per_tensor"(%[[Q2]]) {args = {scale = 1.000000e-01
// CHECK-NEXT:    func.return %[[D]], %[[Q]], %[[D2]]
func.func @kept(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xui8>, tensor<4x3xf32>) {
  %q = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  %q2 = torch.operator "quantized_decomposed::quantize_per_tensor"(%x) {args = {scale = 5.000000e-02 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"} : (tensor<4x3xf32>) -> tensor<4x3xui8>
  %dq2 = torch.operator "quantized_decomposed::dequantize_per_tensor"(%q2) {args = {scale = 1.000000e-01 : f64, zero_point = 3 : i64, quant_min = 0 : i64, quant_max = 255 : i64, dtype = ui8}, operand_names = ["input"], schema = "quantized_decomposed::dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"} : (tensor<4x3xui8>) -> tensor<4x3xf32>
  func.return %dq, %q, %dq2 : tensor<4x3xf32>, tensor<4x3xui8>, tensor<4x3xf32>
}
