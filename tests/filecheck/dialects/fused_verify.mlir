// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// The fused ops' verifiers check attributes and types against eager semantics (torch's
// shape functions on meta tensors, conv attribute ranges, bias/other broadcasting, the
// packed weight's shape), so that malformed IR is a diagnostic at the op.

// The mutation harness's case: groups = 2**31 verified and convert-torch-to-loop ran for minutes.
func.func @groups_huge(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2147483648 : i64, post_ops = [#fused.unary<relu>]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: groups = 2147483648 does not fit 8 input channels and a weight of shape [8, 8, 3, 3]

// -----
// groups = 3 with 8 channels lowered without any error.
func.func @groups_not_dividing(%x: tensor<1x9x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x9x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: groups = 3 does not fit 9 input channels and a weight of shape [8, 3, 3, 3]

// -----
func.func @groups_zero(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 0 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: groups = 0 does not fit

// -----
func.func @stride_zero(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: stride must be two positive integers, got [0, 1]

// -----
// torch's meta kernel takes a negative padding; eager does not.
func.func @padding_negative(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x6xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: -1, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x6xf32>
  func.return %0 : tensor<1x8x4x6xf32>
}
// CHECK: fused.conv2d: padding must be two non-negative integers, got [-1, 0]

// -----
func.func @dilation_zero(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x10x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 0, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x8xf32>
  func.return %0 : tensor<1x8x10x8xf32>
}
// CHECK: fused.conv2d: dilation must be two positive integers, got [0, 1]

// -----
func.func @stride_three_values(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: stride must be two positive integers, got [1, 1, 1]

// -----
// The declared result type is checked against torch's: stride 2 halves the image.
func.func @conv_result_shape(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: result is declared tensor<1x8x8x8xf32>, but the op computes tensor<1x8x4x4xf32> for these operands and attributes

// -----
// torch's meta kernel takes any bias; eager wants one per output channel.
func.func @conv_bias_shape(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w bias(%b : tensor<3xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: bias must have one element per output channel, [8], got tensor<3xf32>

// -----
func.func @conv_rank(%x: tensor<8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<8x8x8xf32>
  func.return %0 : tensor<8x8x8xf32>
}
// CHECK: fused.conv2d: input must be NCHW (rank 4), got tensor<8x8x8xf32>

// -----
// Operands torch refuses: the inner dimensions of a linear disagree.
func.func @linear_inner(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.linear: torch refuses these operands and attributes: mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)

// -----
// A bias that widens the result instead of broadcasting to it.
func.func @linear_bias_widens(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  %0 = fused.linear %x, %w bias(%b : tensor<3x2x4xf32>) : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<3x2x4xf32>
  func.return %0 : tensor<3x2x4xf32>
}
// CHECK: fused.linear: bias of type tensor<3x2x4xf32> does not broadcast to the result shape [2, 4]: it widens it to [3, 2, 4]

// -----
func.func @linear_bias_dtype(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf64>) -> tensor<2x4xf64> {
  %0 = fused.linear %x, %w bias(%b : tensor<4xf64>) : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf64>
  func.return %0 : tensor<2x4xf64>
}
// CHECK: fused.linear: input, weight, bias must share one element type, got f32, f32, f64

// -----
// An other that widens the result.
func.func @matmul_other_widens(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %o: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  %0 = fused.matmul %a, %b other(%o : tensor<3x2x4xf32>) {alpha = 1.0 : f64, beta = 1.0 : f64, post_ops = [#fused.binary<add, 1.0>]} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<3x2x4xf32>
  func.return %0 : tensor<3x2x4xf32>
}
// CHECK: fused.matmul: other of type tensor<3x2x4xf32> does not broadcast to the result shape [2, 4]: it widens it to [3, 2, 4]

// -----
// f32 + alpha * f64 is f64 in eager.
func.func @matmul_other_promotes(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %o: tensor<4xf64>) -> tensor<2x4xf32> {
  %0 = fused.matmul %a, %b other(%o : tensor<4xf64>) {alpha = 1.0 : f64, beta = 1.0 : f64, post_ops = [#fused.binary<sub, 1.0>]} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.matmul: result is declared tensor<2x4xf32>, but the op computes tensor<2x4xf64>

// -----
func.func @matmul_batch(%a: tensor<2x3x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x3x4xf32> {
  %0 = fused.matmul %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<2x3x8xf32>, tensor<3x8x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: fused.matmul: torch refuses these operands and attributes: The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0

// -----
func.func @binary_alpha_inf(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %o: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = fused.matmul %a, %b other(%o : tensor<2x4xf32>) {alpha = 1.0 : f64, beta = 1.0 : f64, post_ops = [#fused.binary<add, inf>]} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.matmul: the binary post-op's alpha must be finite, got inf

// -----
func.func @binary_without_other(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %0 = fused.matmul %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64, post_ops = [#fused.binary<add, 1.0>]} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.matmul: a binary post-op needs exactly one 'other' operand

// -----
// Eager's hardtanh refuses min_val > max_val.
func.func @hardtanh_bounds(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<hardtanh, 6.0, 0.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: hardtanh: min_val 6.0 is greater than max_val 0.0

// -----
func.func @integer_result(%x: tensor<2x8xi64>, %w: tensor<4x8xi64>) -> tensor<2x4xi64> {
  %0 = fused.linear %x, %w : (tensor<2x8xi64>, tensor<4x8xi64>) -> tensor<2x4xi64>
  func.return %0 : tensor<2x4xi64>
}
// CHECK: fused.linear: fused ops compute in floating point; the result is tensor<2x4xi64>

// -----
func.func @dynamic(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fused.linear %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
// CHECK: fused.linear: operand 0 has a dynamic dimension (tensor<?x8xf32>); Ziggurat compiles static shapes (a function input has no data-dependent shape)

// -----
// Packed weights: the packed operand must have the shape of weight_shape in weight_layout.
// A [40, 8] linear weight in 32-column panels is [2, 8, 32].
func.func @packed_linear_shape(%x: tensor<3x8xf32>, %p: tensor<1x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "KN32n", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<1x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: the weight packed as KN32n from weight_shape [40, 8] has shape [2, 8, 32], the operand is tensor<1x8x32xf32>

// -----
// The logical shape is then checked against the other operands as an unpacked weight.
func.func @packed_linear_inner(%x: tensor<3x7xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "KN32n", weight_shape = array<i64: 40, 8>} : (tensor<3x7xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: torch refuses these operands and attributes: mat1 and mat2 shapes cannot be multiplied (3x7 and 8x40)

// -----
func.func @layout_without_shape(%x: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "KN32n"} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: weight_layout and weight_shape describe a packed weight together; one is missing

// -----
func.func @layout_unknown(%x: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "OIhw8i8o", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: unknown weight layout 'OIhw8i8o' for linear (known: KN{nr}n, KN32n4k)

// -----
func.func @layout_zero_panel(%x: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "KN0n", weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: unknown weight layout 'KN0n' for linear

// -----
// A matmul's B[K, N] = [8, 40] packs to [2, 8, 32]; a weight_shape of another rank has no layout.
func.func @packed_matmul_rank(%a: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.matmul %a, %p {alpha = 1.0 : f64, beta = 1.0 : f64, weight_layout = "KN32n", weight_shape = array<i64: 1, 8, 40>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.matmul: weight_shape of a packed matmul weight must have 2 dimensions, got [1, 8, 40]

// -----
// A conv weight [16, 3, 3, 3] in 32-column panels per group is [1, 1, 27, 32]; with groups = 1, not [1, 1, 9, 32].
func.func @packed_conv_shape(%x: tensor<1x3x8x8xf32>, %p: tensor<1x1x9x32xf32>) -> tensor<1x16x6x6xf32> {
  %0 = fused.conv2d %x, %p {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight_layout = "KN32n", weight_shape = array<i64: 16, 3, 3, 3>} : (tensor<1x3x8x8xf32>, tensor<1x1x9x32xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}
// CHECK: fused.conv2d: the weight packed as KN32n from weight_shape [16, 3, 3, 3] has shape [1, 1, 27, 32], the operand is tensor<1x1x9x32xf32>

// -----
// Blocked conv weights [16, 3, 3, 3] in OIhw8i8o are [2, 1, 3, 3, 8, 8].
func.func @packed_conv_blocked(%x: tensor<1x3x8x8xf32>, %p: tensor<2x1x3x3x8x4xf32>) -> tensor<1x16x6x6xf32> {
  %0 = fused.conv2d %x, %p {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, weight_layout = "OIhw8i8o", weight_shape = array<i64: 16, 3, 3, 3>} : (tensor<1x3x8x8xf32>, tensor<2x1x3x3x8x4xf32>) -> tensor<1x16x6x6xf32>
  func.return %0 : tensor<1x16x6x6xf32>
}
// CHECK: fused.conv2d: the weight packed as OIhw8i8o from weight_shape [16, 3, 3, 3] has shape [2, 1, 3, 3, 8, 8], the operand is tensor<2x1x3x3x8x4xf32>

// -----
func.func @packed_conv_groups(%x: tensor<1x4x8x8xf32>, %p: tensor<3x1x18x32xf32>) -> tensor<1x6x6x6xf32> {
  %0 = fused.conv2d %x, %p {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 4 : i64, weight_layout = "KN32n", weight_shape = array<i64: 6, 1, 3, 3>} : (tensor<1x4x8x8xf32>, tensor<3x1x18x32xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: fused.conv2d: KN32n: 6 output channels are not divisible by groups = 4

// -----
// Post-ops: at most one of each kind, in the order they apply.
func.func @two_unary(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<relu>, #fused.unary<tanh>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.linear: at most one unary and one binary post-op

// -----
func.func @two_binary(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %o: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = fused.matmul %a, %b other(%o : tensor<2x4xf32>) {alpha = 1.0 : f64, beta = 1.0 : f64, post_ops = [#fused.binary<add, 1.0>, #fused.binary<sub, 1.0>]} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: fused.matmul: at most one unary and one binary post-op

// -----
// An 'other' operand without a binary post-op to read it.
func.func @other_without_binary(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w other(%o : tensor<1x8x8x8xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.unary<relu>]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: the 'other' operand needs a binary post-op to combine it

// -----
// Post-op names and parameter counts are checked when the attribute is built.
func.func @unknown_unary(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<swish>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: unknown unary post-op 'swish'; known: relu, relu6, gelu_erf, gelu_tanh, silu, sigmoid, tanh, hardtanh, hardswish, hardsigmoid, leaky_relu, clamp

// -----
func.func @unary_params(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<clamp, 0.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: unary post-op clamp takes 2 parameter(s) (min, max), got 1

// -----
func.func @unknown_binary(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %o: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = fused.linear %x, %w other(%o : tensor<2x4xf32>) {post_ops = [#fused.binary<mul, 1.0>]} : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: unknown binary post-op 'mul'; known: add, sub

// -----
func.func @stride_float(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<f32: 1.0, 1.0>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: stride must be an integer array, got array<f32: 1.000000e+00, 1.000000e+00>

// -----
func.func @conv_weight_rank(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: the weight must be [O, I/groups, kh, kw], got shape [8, 8, 3]

// -----
// The result type against the operands', for each op.
func.func @linear_result_shape(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x5xf32> {
  %0 = fused.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
// CHECK: fused.linear: result is declared tensor<2x5xf32>, but the op computes tensor<2x4xf32> for these operands and attributes

// -----
func.func @matmul_result_shape(%a: tensor<2x3x8xf32>, %b: tensor<8x4xf32>) -> tensor<3x4xf32> {
  %0 = fused.matmul %a, %b {alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
// CHECK: fused.matmul: result is declared tensor<3x4xf32>, but the op computes tensor<2x3x4xf32> for these operands and attributes

// -----
func.func @matmul_bias_widens(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %c: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  %0 = fused.matmul %a, %b bias(%c : tensor<3x2x4xf32>) {alpha = 1.0 : f64, beta = 1.0 : f64} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<3x2x4xf32>
  func.return %0 : tensor<3x2x4xf32>
}
// CHECK: fused.matmul: bias of type tensor<3x2x4xf32> does not broadcast to the result shape [2, 4]: it widens it to [3, 2, 4]

// -----
func.func @conv_other_widens(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %o: tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32> {
  %0 = fused.conv2d %x, %w other(%o : tensor<2x8x8x8xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.binary<add, 1.0>]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x8x8xf32>
  func.return %0 : tensor<2x8x8x8xf32>
}
// CHECK: fused.conv2d: other of type tensor<2x8x8x8xf32> does not broadcast to the result shape [1, 8, 8, 8]: it widens it to [2, 8, 8, 8]

// -----
func.func @conv_dtype(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf64>) -> tensor<1x8x8x8xf32> {
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf64>) -> tensor<1x8x8x8xf32>
  func.return %0 : tensor<1x8x8x8xf32>
}
// CHECK: fused.conv2d: input, weight must share one element type, got f32, f64

// -----
// Packed weights: weight_shape alone, a non-positive one, a blocked layout on a GEMM.
func.func @shape_without_layout(%x: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_shape = array<i64: 40, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: weight_layout and weight_shape describe a packed weight together; one is missing

// -----
func.func @weight_shape_zero(%x: tensor<3x8xf32>, %p: tensor<2x8x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.linear %x, %p {weight_layout = "KN32n", weight_shape = array<i64: 0, 8>} : (tensor<3x8xf32>, tensor<2x8x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.linear: weight_shape must be positive, got [0, 8]

// -----
func.func @blocked_matmul(%a: tensor<3x8xf32>, %p: tensor<1x5x1x1x8x8xf32>) -> tensor<3x40xf32> {
  %0 = fused.matmul %a, %p {alpha = 1.0 : f64, beta = 1.0 : f64, weight_layout = "OIhw8i8o", weight_shape = array<i64: 8, 40>} : (tensor<3x8xf32>, tensor<1x5x1x1x8x8xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.matmul: unknown weight layout 'OIhw8i8o' for matmul (known: KN{nr}n)

// -----
// A packed matmul's B[K, N] = [8, 40] is [2, 8, 32] in KN32n.
func.func @packed_matmul_shape(%a: tensor<3x8xf32>, %p: tensor<2x40x32xf32>) -> tensor<3x40xf32> {
  %0 = fused.matmul %a, %p {alpha = 1.0 : f64, beta = 1.0 : f64, weight_layout = "KN32n", weight_shape = array<i64: 8, 40>} : (tensor<3x8xf32>, tensor<2x40x32xf32>) -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
// CHECK: fused.matmul: the weight packed as KN32n from weight_shape [8, 40] has shape [2, 8, 32], the operand is tensor<2x40x32xf32>

// -----
// #fused.requantize is the last post-op, once, on a float32 result, with a positive finite
// scale and quant_min <= zero_point <= quant_max.
func.func @requantize_not_last(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.requantize<0.125, 0, 0, 255>, #fused.unary<relu>]} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: fused.linear: a requantize or quantize post-op comes last, once

// -----
func.func @requantize_bf16(%x: tensor<4x3xbf16>, %w: tensor<2x3xbf16>) -> tensor<4x2xbf16> {
  %0 = fused.linear %x, %w {post_ops = [#fused.requantize<0.125, 0, 0, 255>]} : (tensor<4x3xbf16>, tensor<2x3xbf16>) -> tensor<4x2xbf16>
  func.return %0 : tensor<4x2xbf16>
}
// CHECK: fused.linear: a requantize post-op needs a float32 result, got tensor<4x2xbf16>

// -----
func.func @requantize_zero_point_outside(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.requantize<0.125, -1, 0, 255>]} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: requantize: the zero point -1 is outside [0, 255]

// -----
func.func @requantize_scale_zero(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.requantize<0.0, 0, -128, 127>]} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: requantize: the scale must be a positive finite float, got 0.0

// -----
// #fused.quantize stores the integers: a ui8 result and a range of uint8 values.
func.func @quantize_float_result(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = fused.linear %x, %w {post_ops = [#fused.quantize<0.125, 0, 0, 255>]} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: fused.linear: a quantize post-op needs a ui8 result and a range of uint8 values, got tensor<4x2xf32> and [0, 255]

// -----
// A ui8 input is read through its ziggurat.input_quantization; without it the op means nothing.
func.func @ui8_input_unquantized(%x: tensor<4x3xui8>, %w: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = fused.linear %x, %w : (tensor<4x3xui8>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK: fused.linear: an integer input must be ui8 with ziggurat.input_quantization = [scale, zero_point]
