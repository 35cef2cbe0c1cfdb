// RUN: ziggurat-opt %s -p decompose-torch-ops | filecheck %s

// scaled_dot_product_attention -> matmul(q * f, k^T * f) -> (+ causal mask) -> softmax -> matmul.
// Shapes eager's flash kernel does not take (3-D here) follow its math path, which scales q and
// k by the root f of the scale (here 1/2) before their product (the flash shapes scale the
// product: @sdpa_causal_flash). As torch's _safe_softmax, a row whose scores are all -inf gives
// 0 (softmax alone gives NaN).
// CHECK-LABEL: func.func @sdpa
// CHECK:         %[[KT:.*]] = torch.aten.transpose.int %k {dim0 = -2 : i64, dim1 = -1 : i64}
// CHECK-NEXT:    %[[QS:.*]] = torch.aten.mul.Scalar %q {other = 0.70710678118654757 : f64}
// CHECK-NEXT:    %[[KS:.*]] = torch.aten.mul.Scalar %[[KT]] {other = 0.70710678118654757 : f64}
// CHECK-NEXT:    %[[SS:.*]] = torch.aten.matmul %[[QS]], %[[KS]]
// CHECK-NEXT:    %[[M:.*]] = torch.literal dense<{{\[\[}}0.000000e+00, 0xff800000, 0xff800000], [0.000000e+00, 0.000000e+00, 0xff800000], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
// CHECK-NEXT:    %[[SM:.*]] = torch.aten.add.Tensor %[[SS]], %[[M]]
// CHECK-NEXT:    %[[P:.*]] = torch.aten.softmax.int %[[SM]] {dim = -1 : i64}
// CHECK-NEXT:    %[[INF:.*]] = torch.aten.eq.Scalar %[[SM]] {other = 0xfff0000000000000 : f64}
// CHECK-NEXT:    %[[ROWS:.*]] = torch.aten.all.dim %[[INF]] {dim = -1 : i64, keepdim = true} : (tensor<2x3x3xi1>) -> tensor<2x3x1xi1>
// CHECK-NEXT:    %[[SAFE:.*]] = torch.aten.masked_fill.Scalar %[[P]], %[[ROWS]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[O:.*]] = torch.aten.matmul %[[SAFE]], %v
// CHECK-NEXT:    func.return %[[O]]
// CHECK-NOT:     scaled_dot_product_attention
func.func @sdpa(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.0 : f64, is_causal = true, enable_gqa = false} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// A boolean mask is added as torch adds it, 0 where True and -inf where False (a NaN score it
// hides stays NaN, masked_fill would make it -inf); a row it masks entirely comes out 0.
// CHECK-LABEL: func.func @sdpa_bool_mask
// CHECK:         %[[S:.*]] = torch.aten.matmul
// CHECK-NEXT:    %[[BIAS:.*]] = torch.aten.where.Scalar %m {self_ = 0.000000e+00 : f64, other = 0xfff0000000000000 : f64} : (tensor<3x5xi1>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[SM:.*]] = torch.aten.add.Tensor %[[S]], %[[BIAS]] {alpha = 1 : i64}
// CHECK-NOT:     masked_fill
// CHECK:         %[[P:.*]] = torch.aten.softmax.int %[[SM]] {dim = -1 : i64}
// CHECK-NEXT:    %[[INF:.*]] = torch.aten.eq.Scalar %[[SM]] {other = 0xfff0000000000000 : f64}
// CHECK-NEXT:    %[[ROWS:.*]] = torch.aten.all.dim %[[INF]] {dim = -1 : i64, keepdim = true}
// CHECK-NEXT:    %[[SAFE:.*]] = torch.aten.masked_fill.Scalar %[[P]], %[[ROWS]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    torch.aten.matmul %[[SAFE]], %v
func.func @sdpa_bool_mask(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %m: tensor<3x5xi1>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v attn_mask(%m) {dropout_p = 0.0 : f64, is_causal = false, enable_gqa = false} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<3x5xi1>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// The causal mask of 4-D operands of equal batch, heads and head dims (eager's flash kernel)
// replaces the hidden scores instead: that kernel never computes them, so a NaN key beyond
// the diagonal is ignored.
// CHECK-LABEL: func.func @sdpa_causal_flash
// CHECK:         %[[S:.*]] = torch.aten.matmul %q
// CHECK-NEXT:    %[[SS:.*]] = torch.aten.mul.Scalar %[[S]] {other = 5.000000e-01 : f64}
// CHECK-NEXT:    %[[H:.*]] = torch.literal dense<{{\[\[}}false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
// CHECK-NEXT:    %[[SM:.*]] = torch.aten.masked_fill.Scalar %[[SS]], %[[H]] {value = 0xfff0000000000000 : f64}
// CHECK-NEXT:    %[[P:.*]] = torch.aten.softmax.int %[[SM]] {dim = -1 : i64}
// CHECK-NOT:     torch.aten.add.Tensor
// CHECK:         func.return
func.func @sdpa_causal_flash(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.0 : f64, is_causal = true, enable_gqa = false} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// A bf16 attention computes its scores and softmax in float32, as eager's does. Shapes eager's
// flash kernel does not take (3-D here) follow its math path: q, k, v widened, q and k scaled in
// float32, the boolean mask added in float32, the output rounded once.
// CHECK-LABEL: func.func @sdpa_bf16_masks
// CHECK:         %[[Q:.*]] = torch.aten._to_copy %q {dtype = f32, non_blocking = false} : (tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[K:.*]] = torch.aten._to_copy %k {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[KT:.*]] = torch.aten.transpose.int %[[K]]
// CHECK-NEXT:    %[[QS:.*]] = torch.aten.mul.Scalar %[[Q]] {other = 0.70710678118654757 : f64} : (tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[KS:.*]] = torch.aten.mul.Scalar %[[KT]] {other = 0.70710678118654757 : f64} : (tensor<2x4x5xf32>)
// CHECK-NEXT:    torch.aten.matmul %[[QS]], %[[KS]] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK:         %[[BIAS:.*]] = torch.aten.where.Scalar %m {{.*}} -> tensor<3x5xf32>
// CHECK-NEXT:    torch.aten.add.Tensor %{{.*}}, %[[BIAS]] {alpha = 1 : i64} : (tensor<2x3x5xf32>, tensor<3x5xf32>) -> tensor<2x3x5xf32>
// CHECK:         %[[V:.*]] = torch.aten._to_copy %v {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[O:.*]] = torch.aten.matmul %{{.*}}, %[[V]] : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten._to_copy %[[O]] {dtype = bf16, non_blocking = false} : (tensor<2x3x4xf32>) -> tensor<2x3x4xbf16>
// CHECK-NEXT:    func.return %[[R]]
// CHECK-LABEL: func.func @sdpa_bf16_causal
// CHECK:         torch.literal {{.*}} : tensor<3x3xf32>
// CHECK-NEXT:    torch.aten.add.Tensor {{.*}} -> tensor<2x3x3xf32>
func.func @sdpa_bf16_masks(%q: tensor<2x3x4xbf16>, %k: tensor<2x5x4xbf16>, %v: tensor<2x5x4xbf16>, %m: tensor<3x5xi1>) -> tensor<2x3x4xbf16> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v attn_mask(%m) {dropout_p = 0.0 : f64, is_causal = false, enable_gqa = false} : (tensor<2x3x4xbf16>, tensor<2x5x4xbf16>, tensor<2x5x4xbf16>, tensor<3x5xi1>) -> tensor<2x3x4xbf16>
  func.return %0 : tensor<2x3x4xbf16>
}
func.func @sdpa_bf16_causal(%q: tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = torch.aten.scaled_dot_product_attention %q, %q, %q {dropout_p = 0.0 : f64, is_causal = true, enable_gqa = false} : (tensor<2x3x4xbf16>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16>
  func.return %0 : tensor<2x3x4xbf16>
}

// The shapes of eager's flash kernel: float32 scores, p = exp(s - max) rounded to bf16 for the
// product with v (float32 sums), divided by the float32 sum of p, rounded once; a fully masked
// row (max -inf) gives 0.
// CHECK-LABEL: func.func @sdpa_bf16_flash
// CHECK:         %[[S:.*]] = torch.aten.mul.Scalar {{.*}} -> tensor<1x2x3x5xf32>
// CHECK-NEXT:    %[[INF:.*]] = torch.aten.eq.Scalar %[[S]]
// CHECK-NEXT:    %[[ROWS:.*]] = torch.aten.all.dim %[[INF]]
// CHECK-NEXT:    %[[MAX:.*]] = torch.aten.amax %[[S]] {dim = array<i64: -1>, keepdim = true}
// CHECK-NEXT:    %[[TOP:.*]] = torch.aten.masked_fill.Scalar %[[MAX]], %[[ROWS]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[D:.*]] = torch.aten.sub.Tensor %[[S]], %[[TOP]]
// CHECK-NEXT:    %[[P:.*]] = torch.aten.exp %[[D]]
// CHECK-NEXT:    %[[L:.*]] = torch.aten.sum.dim_IntList %[[P]] {dim = array<i64: -1>, keepdim = true}
// CHECK-NEXT:    %[[P16:.*]] = torch.aten._to_copy %[[P]] {dtype = bf16, non_blocking = false} : (tensor<1x2x3x5xf32>) -> tensor<1x2x3x5xbf16>
// CHECK-NEXT:    %[[PW:.*]] = torch.aten._to_copy %[[P16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[V:.*]] = torch.aten._to_copy %v {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[O:.*]] = torch.aten.matmul %[[PW]], %[[V]]
// CHECK-NEXT:    %[[N:.*]] = torch.aten.div.Tensor %[[O]], %[[L]]
// CHECK-NEXT:    %[[Z:.*]] = torch.aten.masked_fill.Scalar %[[N]], %[[ROWS]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[R:.*]] = torch.aten._to_copy %[[Z]] {dtype = bf16, non_blocking = false} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xbf16>
// CHECK-NEXT:    func.return %[[R]]
func.func @sdpa_bf16_flash(%q: tensor<1x2x3x4xbf16>, %k: tensor<1x2x5x4xbf16>, %v: tensor<1x2x5x4xbf16>) -> tensor<1x2x3x4xbf16> {
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v {dropout_p = 0.0 : f64, is_causal = false, enable_gqa = false} : (tensor<1x2x3x4xbf16>, tensor<1x2x5x4xbf16>, tensor<1x2x5x4xbf16>) -> tensor<1x2x3x4xbf16>
  func.return %0 : tensor<1x2x3x4xbf16>
}

// Negative: with dropout the op is random and stays.
// CHECK-LABEL: func.func @sdpa_dropout
// CHECK:         torch.aten.scaled_dot_product_attention
func.func @sdpa_dropout(%q: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = torch.aten.scaled_dot_product_attention %q, %q, %q {dropout_p = 0.1 : f64, is_causal = false, enable_gqa = false} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
