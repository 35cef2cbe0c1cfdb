// RUN: ziggurat-opt %s -p fold-batchnorm | filecheck %s
// w = [1, 2], gamma = [2, 4], var = [3, 0], eps = 1 -> scale = [1, 4]: w' = [1, 8];
// b = 0, mean = [0, 1], beta = [0.5, 0.5] -> b' = [0.5, -3.5].

// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG:     %[[W:.*]] = torch.literal dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG:     %[[B:.*]] = torch.literal dense<[5.000000e-01, -3.500000e+00]> : tensor<2xf32>
// CHECK:         %[[Y:.*]] = torch.aten.conv2d %x, %[[W]] bias(%[[B]]) {{.*}} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     batch_norm
func.func @conv_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %gamma = torch.literal dense<[2.0, 4.0]> : tensor<2xf32>
  %beta = torch.literal dense<[0.5, 0.5]> : tensor<2xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = torch.aten.batch_norm %c weight(%gamma : tensor<2xf32>) bias(%beta : tensor<2xf32>) running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// linear -> batch_norm1d on [N, C].
// CHECK-LABEL: func.func @linear_bn
// CHECK:         torch.aten.linear %x, %{{.*}} bias(%{{.*}})
// CHECK-NOT:     batch_norm
func.func @linear_bn(%x: tensor<4x1xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.linear %x, %w : (tensor<4x1xf32>, tensor<2x1xf32>) -> tensor<4x2xf32>
  %y = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// Negative: batch norm in training mode is not folded.
// CHECK-LABEL: func.func @training
// CHECK:         torch.aten.conv2d
// CHECK:         torch.aten.batch_norm {{.*}}training = true
func.func @training(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = true, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Negative: the conv result has another user, so it is not folded.
// CHECK-LABEL: func.func @shared
// CHECK:         torch.aten.conv2d
// CHECK:         torch.aten.batch_norm
func.func @shared(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Negative: statistics that are run-time values are not folded.
// CHECK-LABEL: func.func @dynamic_stats
// CHECK:         torch.aten.batch_norm
func.func @dynamic_stats(%x: tensor<1x1x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Negative: var + eps = 0 in channel 1 makes eager's scale infinite (y * inf + ...): the
// folded conv would multiply inside its sums (0 * inf), so the batch norm stays.
// CHECK-LABEL: func.func @nonfinite_scale
// CHECK:         torch.aten.conv2d %x, %{{.*}} {
// CHECK-NEXT:    torch.aten.batch_norm
func.func @nonfinite_scale(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, -1.0]> : tensor<2xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// Negative: a folded weight that overflows float32 (3e38 * 4) is not folded either.
// CHECK-LABEL: func.func @overflowing_weight
// CHECK:         torch.aten.linear
// CHECK-NEXT:    torch.aten.batch_norm
func.func @overflowing_weight(%x: tensor<4x1xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[1.0], [3.0e+38]]> : tensor<2x1xf32>
  %gamma = torch.literal dense<[1.0, 4.0]> : tensor<2xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[0.0, 0.0]> : tensor<2xf32>
  %c = torch.aten.linear %x, %w : (tensor<4x1xf32>, tensor<2x1xf32>) -> tensor<4x2xf32>
  %y = torch.aten.batch_norm %c weight(%gamma : tensor<2xf32>) running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// precision= casts a float32 weight to float16 (a _to_copy of the literal, before constant-fold
// rounds it): the fold reads the float32 weight and rounds the folded one once. w = 1.0004,
// scale 3: 3.0012 rounds to the float16 3.00195; folding the float16 weight (1.0) would give 3.0.
// (float16 literals print as resources: 0x4201 is 3.00195, 0x3800 is 0.5, after the 4-byte alignment.)
// CHECK-LABEL: func.func @float16_cast_weight
// CHECK:         %[[W:.*]] = torch.literal dense_resource<w.weight_bn> : tensor<1x1x1x1xf16>
// CHECK-NEXT:    %[[B:.*]] = torch.literal dense_resource<w.bias_bn> : tensor<1xf16>
// CHECK-NEXT:    %[[Y:.*]] = torch.aten.conv2d %x, %[[W]] bias(%[[B]]) {{.*}} -> tensor<1x1x3x3xf16>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:         w.bias_bn: "0x400000000038",w.weight_bn: "0x400000000142"
func.func @float16_cast_weight(%x: tensor<1x1x3x3xf16>) -> tensor<1x1x3x3xf16> {
  %w32 = torch.literal dense<[[[[1.0004]]]]> : tensor<1x1x1x1xf32>
  %w = torch.aten._to_copy %w32 {dtype = f16, non_blocking = false} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf16>
  %gamma = torch.literal dense<[3.0]> : tensor<1xf32>
  %beta = torch.literal dense<[0.5]> : tensor<1xf32>
  %mean = torch.literal dense<[0.0]> : tensor<1xf32>
  %var = torch.literal dense<[0.0]> : tensor<1xf32>
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x3x3xf16>, tensor<1x1x1x1xf16>) -> tensor<1x1x3x3xf16>
  %y = torch.aten.batch_norm %c weight(%gamma : tensor<1xf32>) bias(%beta : tensor<1xf32>) running_mean(%mean : tensor<1xf32>) running_var(%var : tensor<1xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x1x3x3xf16>) -> tensor<1x1x3x3xf16>
  func.return %y : tensor<1x1x3x3xf16>
}
