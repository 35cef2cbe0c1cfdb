// RUN: ziggurat-opt %s -p decompose-torch-ops | filecheck %s

// scaled_dot_product_attention -> matmul(q, k^T) * scale -> (+ causal mask) -> softmax -> matmul.
// CHECK-LABEL: func.func @sdpa
// CHECK:         %[[KT:.*]] = torch.aten.transpose.int %k {dim0 = -2 : i64, dim1 = -1 : i64}
// CHECK-NEXT:    %[[S:.*]] = torch.aten.matmul %q, %[[KT]]
// CHECK-NEXT:    %[[SS:.*]] = torch.aten.mul.Scalar %[[S]] {other = 5.000000e-01 : f64}
// CHECK-NEXT:    %[[M:.*]] = torch.literal dense<{{\[\[}}0.000000e+00, 0xff800000, 0xff800000], [0.000000e+00, 0.000000e+00, 0xff800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
// CHECK-NEXT:    %[[SM:.*]] = torch.aten.add.Tensor %[[SS]], %[[M]]
// CHECK-NEXT:    %[[P:.*]] = torch.aten.softmax.int %[[SM]] {dim = -1 : i64}
// CHECK-NEXT:    %[[O:.*]] = torch.aten.matmul %[[P]], %v
// CHECK-NEXT:    func.return %[[O]]
// CHECK-NOT:     scaled_dot_product_attention
func.func @sdpa(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.0 : f64, is_causal = true, enable_gqa = false} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// Negative: with dropout the op is random and stays.
// CHECK-LABEL: func.func @sdpa_dropout
// CHECK:         torch.aten.scaled_dot_product_attention
func.func @sdpa_dropout(%q: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %q, %q {dropout_p = 0.1 : f64, is_causal = false, enable_gqa = false} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
