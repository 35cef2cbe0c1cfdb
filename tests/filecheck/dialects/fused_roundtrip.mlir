// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Valid fused ops verify and print back: post-op parameters inf/-inf/nan (eager accepts a NaN
// slope or bound), packed weights in each layout, broadcasting bias and other, every unary and
// binary post-op kind, and each op with and without its optional operands and post-ops.

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

// CHECK-LABEL: func.func @unary_kinds
// CHECK:       %0 = fused.linear %x, %w {post_ops = [#fused.unary<relu>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %1 = fused.linear %x, %w {post_ops = [#fused.unary<relu6>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %2 = fused.linear %x, %w {post_ops = [#fused.unary<gelu_erf>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %3 = fused.linear %x, %w {post_ops = [#fused.unary<gelu_tanh>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %4 = fused.linear %x, %w {post_ops = [#fused.unary<silu>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %5 = fused.linear %x, %w {post_ops = [#fused.unary<sigmoid>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %6 = fused.linear %x, %w {post_ops = [#fused.unary<tanh>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %7 = fused.linear %x, %w {post_ops = [#fused.unary<hardtanh, -2.0, 3.5>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %8 = fused.linear %x, %w {post_ops = [#fused.unary<hardswish>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %9 = fused.linear %x, %w {post_ops = [#fused.unary<hardsigmoid>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %10 = fused.linear %x, %w {post_ops = [#fused.unary<leaky_relu, 0.125>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  %11 = fused.linear %x, %w {post_ops = [#fused.unary<clamp, 0.0, 6.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
func.func @unary_kinds(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<relu>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %1 = fused.linear %x, %w {post_ops = [#fused.unary<relu6>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %2 = fused.linear %x, %w {post_ops = [#fused.unary<gelu_erf>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %3 = fused.linear %x, %w {post_ops = [#fused.unary<gelu_tanh>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %4 = fused.linear %x, %w {post_ops = [#fused.unary<silu>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %5 = fused.linear %x, %w {post_ops = [#fused.unary<sigmoid>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %6 = fused.linear %x, %w {post_ops = [#fused.unary<tanh>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %7 = fused.linear %x, %w {post_ops = [#fused.unary<hardtanh, -2.0, 3.5>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %8 = fused.linear %x, %w {post_ops = [#fused.unary<hardswish>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %9 = fused.linear %x, %w {post_ops = [#fused.unary<hardsigmoid>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %10 = fused.linear %x, %w {post_ops = [#fused.unary<leaky_relu, 0.125>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %11 = fused.linear %x, %w {post_ops = [#fused.unary<clamp, 0.0, 6.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @operands
// CHECK:       %0 = fused.conv2d %img, %cw bias(%cb : tensor<6xf32>) other(%res : tensor<1x6x4x4xf32>) {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NEXT:  %1 = fused.conv2d %img, %cw {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 2, 2>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT:  %2 = fused.linear %x, %lw bias(%lb : tensor<5xf32>) : (tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:  %3 = fused.linear %x, %lw bias(%lb : tensor<5xf32>) other(%lo : tensor<3x1xf32>) {post_ops = [#fused.unary<silu>, #fused.binary<sub, 0.5>]} : (tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:  %4 = fused.matmul %a, %b {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:  %5 = fused.matmul %a, %b bias(%mb : tensor<5xf32>) other(%mo : tensor<2x3x5xf32>) {alpha = 1.250000e-01 : f64, beta = -1.000000e+00 : f64, post_ops = [#fused.binary<add, 2.0>]} : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:  func.return %0, %1, %2, %3, %4, %5 : tensor<1x6x4x4xf32>, tensor<1x6x8x8xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
func.func @operands(%img: tensor<1x4x8x8xf32>, %cw: tensor<6x4x3x3xf32>, %cb: tensor<6xf32>, %res: tensor<1x6x4x4xf32>,
                    %x: tensor<3x8xf32>, %lw: tensor<5x8xf32>, %lb: tensor<5xf32>, %lo: tensor<3x1xf32>,
                    %a: tensor<2x3x8xf32>, %b: tensor<8x5xf32>, %mb: tensor<5xf32>, %mo: tensor<2x3x5xf32>)
    -> (tensor<1x6x4x4xf32>, tensor<1x6x8x8xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %0 = fused.conv2d %img, %cw bias(%cb : tensor<6xf32>) other(%res : tensor<1x6x4x4xf32>) {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  %1 = fused.conv2d %img, %cw {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 2, 2>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  %2 = fused.linear %x, %lw bias(%lb : tensor<5xf32>) : (tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<3x5xf32>
  %3 = fused.linear %x, %lw bias(%lb : tensor<5xf32>) other(%lo : tensor<3x1xf32>) {post_ops = [#fused.unary<silu>, #fused.binary<sub, 0.5>]} : (tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<3x5xf32>
  %4 = fused.matmul %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  %5 = fused.matmul %a, %b bias(%mb : tensor<5xf32>) other(%mo : tensor<2x3x5xf32>) {alpha = 0.125 : f64, beta = -1.0 : f64, post_ops = [#fused.binary<add, 2.0>]} : (tensor<2x3x8xf32>, tensor<8x5xf32>) -> tensor<2x3x5xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x6x4x4xf32>, tensor<1x6x8x8xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
