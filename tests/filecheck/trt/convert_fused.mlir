// RUN: ziggurat-opt %s -p 'graph-opt' --split-input-file --elide-resources | filecheck %s --check-prefix=FUSED
// RUN: ziggurat-opt %s -p 'graph-opt,convert-torch-to-trt{min_block_size=1}' --split-input-file --elide-resources | filecheck %s
// graph-opt first (batch norm folded into the conv, post-ops fused; it never prepacks weights),
// then each fused op -> its base layer followed by one layer per post-op.

// conv + batch_norm + relu: one fused.conv2d with the folded weights and a relu post-op ...
// FUSED-LABEL: func.func @conv_bn_relu(
// FUSED:         %w_bias_bn = torch.literal dense<[1.100000e+00, 2.000000e-01, -7.000000e-01]> : tensor<3xf32>
// FUSED-NEXT:    %r = fused.conv2d %x, %w_weight_bn bias(%w_bias_bn : tensor<3xf32>) {{.*}}post_ops = [#fused.unary<relu>]}
// FUSED-NEXT:    func.return %r
// ... which becomes an IConvolutionLayer (explicit padding) and an IActivationLayer kRELU.
// CHECK-LABEL: func.func private @conv_bn_relu_trt_0(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> attributes {ziggurat.backend = "tensorrt", ziggurat.trt_ops = {fused.conv2d = 1 : i64}} {
// CHECK-NEXT:    %w_weight_bn = trt.constant {name = "w_weight_bn"} dense_resource<w.weight_bn> : tensor<3x2x3x3xf32>
// CHECK-NEXT:    %w_bias_bn = trt.constant {name = "w_bias_bn"} dense<[1.100000e+00, 2.000000e-01, -7.000000e-01]> : tensor<3xf32>
// CHECK-NEXT:    %[[C:.*]] = trt.convolution %x, %w_weight_bn, %w_bias_bn {name = "fused.conv2d", num_output_maps = 3 : i64, kernel_size = array<i64: 3, 3>, pre_padding = array<i64: 1, 1>, post_padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %r = trt.activation kRELU %[[C]] {name = "fused.conv2d (post-op relu)"} : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    func.return %r
// CHECK-NOT:   torch.aten.batch_norm
func.func @conv_bn_relu(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = torch.literal dense<5.000000e-01> : tensor<3x2x3x3xf32>
  %b = torch.literal dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
  %gamma = torch.literal dense<2.000000e+00> : tensor<3xf32>
  %beta = torch.literal dense<1.000000e+00> : tensor<3xf32>
  %mean = torch.literal dense<[0.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>
  %var = torch.literal dense<4.000000e+00> : tensor<3xf32>
  %c = torch.aten.conv2d %x, %w bias(%b) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %n = torch.aten.batch_norm %c weight(%gamma : tensor<3xf32>) bias(%beta : tensor<3xf32>) running_mean(%mean : tensor<3xf32>) running_var(%var : tensor<3xf32>) {training = false, momentum = 1.000000e-01 : f64, eps = 0.000000e+00 : f64, cudnn_enabled = true} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %r = torch.aten.relu %n : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %r : tensor<1x3x4x4xf32>
}

// -----

// linear + gelu: fused.linear with a gelu_erf post-op ...
// FUSED-LABEL: func.func @linear_gelu(
// FUSED:         %g = fused.linear %x, %w bias(%b : tensor<3xf32>) {post_ops = [#fused.unary<gelu_erf>]}
// ... -> matrix multiply (weight transposed), bias as a rank-aligned constant, kGELU_ERF.
// CHECK-LABEL: func.func private @linear_gelu_trt_0(
// CHECK-NEXT:    %w = trt.constant {name = "w"} dense<2.500000e-01> : tensor<3x4xf32>
// CHECK-NEXT:    %[[M:.*]] = trt.matrix_multiply %x kNONE, %w kTRANSPOSE {name = "fused.linear (matmul)"} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = trt.constant {name = "fused.linear (bias constant)"} dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = trt.elementwise kSUM %[[M]], %[[B]] {name = "fused.linear (bias)"}
// CHECK-NEXT:    %g = trt.activation kGELU_ERF %[[Y]] {name = "fused.linear (post-op gelu_erf)"} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %g
func.func @linear_gelu(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = torch.literal dense<2.500000e-01> : tensor<3x4xf32>
  %b = torch.literal dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  %l = torch.aten.linear %x, %w bias(%b) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %g = torch.aten.gelu %l {approximate = "none"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}
