// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Valid fused ops verify and print back: post-op parameters inf/-inf/nan (eager accepts a NaN
// slope or bound), packed weights in each layout, broadcasting bias and other.

// CHECK-LABEL: func.func @params
// CHECK:         post_ops = [#fused.unary<leaky_relu, nan>]
// CHECK:         post_ops = [#fused.unary<clamp, -inf, inf>]
// CHECK:         post_ops = [#fused.binary<sub, -2.5>, #fused.unary<hardtanh, -1.0, 1.0>]
func.func @params(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %o: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<leaky_relu, nan>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = fused.linear %x, %w {post_ops = [#fused.unary<clamp, -inf, inf>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %2 = fused.linear %x, %w other(%o : tensor<1x4xf32>) {post_ops = [#fused.binary<sub, -2.5>, #fused.unary<hardtanh, -1.0, 1.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @packed
// CHECK:         fused.linear %x, %pl {weight_layout = "KN32n", weight_shape = array<i64: 40, 8>}
// CHECK:         fused.matmul %x, %pm {{.*}}weight_layout = "KN16n", weight_shape = array<i64: 8, 40>}
// CHECK:         fused.conv2d %img, %pc {{.*}}groups = 2 : i64, weight_layout = "KN32n", weight_shape = array<i64: 6, 2, 3, 3>}
// CHECK:         fused.conv2d %img, %pb {{.*}}weight_layout = "OIhw8i8o", weight_shape = array<i64: 6, 4, 3, 3>}
func.func @packed(%x: tensor<3x8xf32>, %pl: tensor<2x8x32xf32>, %pm: tensor<3x8x16xf32>, %bias: tensor<40xf32>,
                  %img: tensor<1x4x8x8xf32>, %pc: tensor<2x1x18x32xf32>, %pb: tensor<1x1x3x3x8x8xf32>, %cb: tensor<6xf32>)
    -> (tensor<3x40xf32>, tensor<3x40xf32>, tensor<1x6x6x6xf32>, tensor<1x6x6x6xf32>) {
  %0 = fused.linear %x, %pl {weight_layout = "KN32n", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  %1 = fused.matmul %x, %pm bias(%bias : tensor<40xf32>) {alpha = 0.5 : f64, beta = 2.0 : f64, weight_layout = "KN16n", weight_shape = array<i64: 8, 40>} : (tensor<3x8xf32>, tensor<3x8x16xf32>) -> tensor<3x40xf32>
  %2 = fused.conv2d %img, %pc bias(%cb : tensor<6xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64, weight_layout = "KN32n", weight_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x4x8x8xf32>, tensor<2x1x18x32xf32>) -> tensor<1x6x6x6xf32>
  %3 = fused.conv2d %img, %pb {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight_layout = "OIhw8i8o", weight_shape = array<i64: 6, 4, 3, 3>} : (tensor<1x4x8x8xf32>, tensor<1x1x3x3x8x8xf32>) -> tensor<1x6x6x6xf32>
  func.return %0, %1, %2, %3 : tensor<3x40xf32>, tensor<3x40xf32>, tensor<1x6x6x6xf32>, tensor<1x6x6x6xf32>
}
