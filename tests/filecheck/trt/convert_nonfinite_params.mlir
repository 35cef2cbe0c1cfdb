// RUN: ziggurat-opt %s -p 'convert-torch-to-trt{min_block_size=1}' --split-input-file | filecheck %s
// Converters whose parameters may be infinite or NaN compute eager's formula, not one that
// agrees with it on finite values only (fuzz program trtref_prelu_inf).

// prelu is x > 0 ? x : weight * x (max(x, 0) + weight * min(x, 0) was NaN for a positive x
// and an infinite weight).
// CHECK-LABEL: func.func private @prelu_trt_0(
// CHECK:         %[[S:.*]] = trt.elementwise kPROD %x, %{{.*}} {name = "aten::prelu (slope)"}
// CHECK:         %[[P:.*]] = trt.elementwise kGREATER %x, %{{.*}} {name = "aten::prelu (positive)"}
// CHECK-NEXT:    %[[Y:.*]] = trt.select %[[P]], %x, %[[S]] {name = "aten::prelu"}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     kMIN
func.func @prelu(%x: tensor<2x3xf32>, %w: tensor<1xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.prelu %x, %w : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// An infinite slope: kLEAKY_RELU (x >= 0 ? x : slope * x) would keep a zero, eager gives NaN.
// CHECK-LABEL: func.func private @leaky_relu_inf_trt_0(
// CHECK-NOT:     kLEAKY_RELU
// CHECK:         trt.elementwise kPROD %x, %{{.*}} {name = "aten::leaky_relu (slope)"}
// CHECK:         trt.select
func.func @leaky_relu_inf(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.leaky_relu %x {negative_slope = 0x7ff0000000000000 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// A finite slope >= 0 stays one kLEAKY_RELU layer.
// CHECK-LABEL: func.func private @leaky_relu_trt_0(
// CHECK-NEXT:    %0 = trt.activation kLEAKY_RELU %x {name = "aten::leaky_relu", alpha = 1.000000e-02 : f32}
// CHECK-NEXT:    func.return %0
func.func @leaky_relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.leaky_relu %x {negative_slope = 1.000000e-02 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// softplus returns x where x * beta > threshold (x > threshold / beta flips for beta < 0).
// CHECK-LABEL: func.func private @softplus_trt_0(
// CHECK:         %[[SOFT:.*]] = trt.activation kSOFTPLUS %x {{.*}}alpha = -5.000000e-01 : f32, beta = -2.000000e+00 : f32}
// CHECK:         %[[BX:.*]] = trt.elementwise kPROD %x, %{{.*}} {name = "aten::softplus (beta * x)"}
// CHECK:         %[[ABOVE:.*]] = trt.elementwise kGREATER %[[BX]], %{{.*}} {name = "aten::softplus (above threshold)"}
// CHECK-NEXT:    trt.select %[[ABOVE]], %x, %[[SOFT]]
func.func @softplus(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = torch.aten.softplus %x {beta = -2.000000e+00 : f64, threshold = 2.000000e+01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// instance_norm with a weight that is not a finite constant: eager's x * a + (0 - mean * a),
// a = rstd * weight, from reduce layers over [N, G, C/G, spatial] (not INormalizationLayer,
// whose (x - mean) * rstd * weight differs for an infinite weight).  The mean sums x * (1/n):
// finite for any finite x, as eager's (a float32 sum of values near the limit overflows).
// CHECK-LABEL: func.func private @instance_norm_trt_0(
// CHECK-NOT:     trt.normalization
// CHECK:         %[[X4:.*]] = trt.shuffle %y {name = "aten::instance_norm (grouped)", {{.*}}reshape_dims = array<i64: 1, 2, 1, 3>}
// CHECK-NEXT:    %[[N:.*]] = trt.constant {name = "aten::instance_norm (x / n scalar)"} dense<0.333333343>
// CHECK-NEXT:    %[[XN:.*]] = trt.elementwise kPROD %[[X4]], %[[N]] {name = "aten::instance_norm (x / n)"}
// CHECK-NEXT:    %[[MEAN:.*]] = trt.reduce kSUM %[[XN]] {name = "aten::instance_norm (mean)", axes = 12 : i32, keep_dims = true}
// CHECK:         %[[RSTD:.*]] = trt.elementwise kDIV %{{.*}} {name = "aten::instance_norm (rstd)"}
// CHECK:         %[[A:.*]] = trt.elementwise kPROD %[[RSTD]], %{{.*}} {name = "aten::instance_norm (alpha)"}
// CHECK-NEXT:    %[[MA:.*]] = trt.elementwise kPROD %[[MEAN]], %[[A]] {name = "aten::instance_norm (mean * alpha)"}
// CHECK:         %[[B:.*]] = trt.elementwise kSUB %{{.*}}, %[[MA]] {name = "aten::instance_norm (beta)"}
// CHECK-NEXT:    %[[XA:.*]] = trt.elementwise kPROD %[[X4]], %[[A]] {name = "aten::instance_norm (x * alpha)"}
// CHECK-NEXT:    %[[Y:.*]] = trt.elementwise kSUM %[[XA]], %[[B]]
// CHECK-NEXT:    trt.shuffle %[[Y]] {name = "aten::instance_norm (result shape)"
func.func @instance_norm(%y: tensor<1x2x3xf32>, %g: tensor<2xf32>) -> tensor<1x2x3xf32> {
  %0 = torch.aten.instance_norm %y weight(%g : tensor<2xf32>) {use_input_stats = true, momentum = 1.000000e-01 : f64, eps = 1.000000e-05 : f64, cudnn_enabled = true} : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// -----

// A constant, finite weight builds the same form (INormalizationLayer's statistics of values
// near the float32 limit are not eager's: fuzz seed 111, program 107).
// CHECK-LABEL: func.func private @instance_norm_finite_trt_0(
// CHECK-NOT:     trt.normalization
// CHECK:         trt.reduce kSUM
// CHECK:         trt.elementwise kPROD %{{.*}}, %{{.*}} {name = "aten::instance_norm (x * alpha)"}
func.func @instance_norm_finite(%y: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %g = torch.literal dense<[2.000000e+00, 1.000000e+00]> : tensor<2xf32>
  %0 = torch.aten.instance_norm %y weight(%g : tensor<2xf32>) {use_input_stats = true, momentum = 1.000000e-01 : f64, eps = 1.000000e-05 : f64, cudnn_enabled = true} : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// -----

// A float16 layer norm computes in float32 (its squares overflow float16 from 256 on) and
// rounds once, as eager's: (x * rstd - rstd * mean), then the cast back.
// CHECK-LABEL: func.func private @layer_norm_f16_trt_0(
// CHECK-NEXT:    %[[X:.*]] = trt.cast %y {name = "aten::layer_norm (to float32)"} : tensor<2x3xf16> -> tensor<2x3xf32>
// CHECK:         trt.reduce kSUM
// CHECK:         %[[XR:.*]] = trt.elementwise kPROD %[[X]], %{{.*}} {name = "aten::layer_norm (x * rstd)"}
// CHECK-NEXT:    %[[Y:.*]] = trt.elementwise kSUM %[[XR]], %{{.*}} {name = "aten::layer_norm (normalized)"}
// CHECK-NEXT:    %[[H:.*]] = trt.cast %[[Y]] {name = "aten::layer_norm (to input dtype)"} : tensor<2x3xf32> -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %[[H]]
func.func @layer_norm_f16(%y: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = torch.aten.layer_norm %y {normalized_shape = array<i64: 3>, eps = 1.000000e-05 : f64, cudnn_enable = true} : (tensor<2x3xf16>) -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}
