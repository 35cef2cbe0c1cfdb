// RUN: ziggurat-opt %s -p fuse-post-ops --split-input-file | filecheck %s
// RUN: ziggurat-opt %s -p 'fuse-post-ops{duplicate=true}' --split-input-file | filecheck %s --check-prefix=DUP

// conv -> add(residual) -> relu is one fused op with the post-ops in order.
// CHECK-LABEL: func.func @conv_add_relu
// CHECK-NEXT:    %[[Y:.*]] = fused.conv2d %x, %w bias(%b : tensor<4xf32>) other(%r : tensor<1x4x5x5xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64, post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     torch.aten
func.func @conv_add_relu(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %r: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %c = torch.aten.conv2d %x, %w bias(%b) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %a = torch.aten.add.Tensor %r, %c {alpha = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %y = torch.aten.relu %a : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %y : tensor<1x4x5x5xf32>
}

// -----

// conv -> silu -> add(residual): the binary post-op follows the unary one (a SiLU residual block).
// CHECK-LABEL: func.func @conv_silu_add
// CHECK-NEXT:    %[[Y:.*]] = fused.conv2d %x, %w other(%x : tensor<1x4x5x5xf32>) {{.*}}post_ops = [#fused.unary<silu>, #fused.binary<add, 1.0>]}
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     torch.aten
func.func @conv_silu_add(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %s = torch.aten.silu %c : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %a = torch.aten.add.Tensor %x, %s {alpha = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %a : tensor<1x4x5x5xf32>
}

// -----

// linear + gelu(tanh); matmul + broadcast sub; addmm carries alpha/beta; each unary kind.
// CHECK-LABEL: func.func @gemms
// CHECK:         fused.linear %x, %w {post_ops = [#fused.unary<gelu_tanh>]}
// CHECK:         fused.matmul %x, %m other(%row : tensor<6xf32>) {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64, post_ops = [#fused.binary<sub, 2.0>]}
// CHECK:         fused.matmul %x, %m bias(%row : tensor<6xf32>) {alpha = 3.000000e+00 : f64, beta = 5.000000e-01 : f64, post_ops = [#fused.unary<hardtanh, -2.0, 2.0>]}
// CHECK:         fused.linear %x, %w {post_ops = [#fused.unary<relu6>]}
// CHECK:         fused.linear %x, %w {post_ops = [#fused.unary<leaky_relu, 0.2>]}
// CHECK:         fused.linear %x, %w {post_ops = [#fused.unary<clamp, -inf, 1.0>]}
// CHECK:         fused.linear %x, %w {post_ops = [#fused.unary<hardswish>]}
func.func @gemms(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %m: tensor<8x6xf32>, %row: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %l = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %g = torch.aten.gelu %l {approximate = "tanh"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = torch.aten.matmul %x, %m : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %s = torch.aten.sub.Tensor %mm, %row {alpha = 2 : i64} : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %am = torch.aten.addmm %row, %x, %m {beta = 0.5 : f64, alpha = 3 : i64} : (tensor<6xf32>, tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %ht = torch.aten.hardtanh %am {min_val = -2.0 : f64, max_val = 2 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l2 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %r6 = torch.aten.relu6 %l2 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l3 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %lr = torch.aten.leaky_relu %l3 {negative_slope = 0.2 : f64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l4 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %cl = torch.aten.clamp %l4 {max = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l5 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %hs = torch.aten.hardswish %l5 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %g, %s, %ht, %r6, %lr, %cl, %hs : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// addmm with beta = 0 ignores its input (torch: its NaN and inf are not propagated): no bias,
// where beta * bias would make 0 * inf = NaN.
// CHECK-LABEL: func.func @addmm_beta_zero
// CHECK-NEXT:    fused.matmul %x, %m {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : (tensor<4x8xf32>, tensor<8x6xf32>)
// DUP-LABEL: func.func @addmm_beta_zero
func.func @addmm_beta_zero(%x: tensor<4x8xf32>, %m: tensor<8x6xf32>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %am = torch.aten.addmm %c, %x, %m {beta = 0 : i64, alpha = 1 : i64} : (tensor<4x6xf32>, tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  func.return %am : tensor<4x6xf32>
}

// -----

// Negative: the conv result has two users, so nothing is fused into it ...
// CHECK-LABEL: func.func @two_users
// CHECK-NEXT:    %[[C:.*]] = fused.conv2d %x, %w {{{.*}}} : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %[[C]]
// CHECK-NEXT:    %[[S:.*]] = torch.aten.sigmoid %[[C]]
// ... unless told to duplicate the producer.
// DUP-LABEL: func.func @two_users
// DUP-NEXT:    %[[R:.*]] = fused.conv2d %x, %w {{.*}}post_ops = [#fused.unary<relu>]
// DUP-NEXT:    %[[S:.*]] = fused.conv2d %x, %w {{.*}}post_ops = [#fused.unary<sigmoid>]
func.func @two_users(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %c = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  %r = torch.aten.relu %c : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %s = torch.aten.sigmoid %c : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %r, %s : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}

// -----

// The GEMM result as the second operand of add/sub.  add(y, gemm) is gemm + y and fuses;
// add(y, gemm, alpha=2) is y + 2 * gemm, which the post-op (gemm + alpha * other) cannot
// express, nor sub(y, gemm): they stay torch ops (the unary before them still fuses).
// The GEMM result first fuses with any alpha.  (Fused, the first form scaled y instead.)
// CHECK-LABEL: func.func @producer_second
// CHECK-NEXT:    %a1 = fused.linear %x, %w other(%y : tensor<4x6xf32>) {post_ops = [#fused.binary<add, 1.0>]}
// CHECK-NEXT:    %[[S2:.*]] = fused.linear %x, %w {post_ops = [#fused.unary<sigmoid>]}
// CHECK-NEXT:    %a2 = torch.aten.add.Tensor %y, %[[S2]] {alpha = 2 : i64}
// CHECK-NEXT:    %[[M3:.*]] = fused.matmul %x, %m {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} :
// CHECK-NEXT:    %a3 = torch.aten.add.Tensor %y, %[[M3]] {alpha = -5.000000e-01 : f64}
// CHECK-NEXT:    %[[L4:.*]] = fused.linear %x, %w :
// CHECK-NEXT:    %a4 = torch.aten.sub.Tensor %y, %[[L4]] {alpha = 1 : i64}
// CHECK-NEXT:    %a5 = fused.linear %x, %w other(%y : tensor<4x6xf32>) {post_ops = [#fused.binary<add, 2.0>]}
// CHECK-NEXT:    %[[S6:.*]] = fused.conv2d %cx, %cw {{{.*}}post_ops = [#fused.unary<sigmoid>]}
// CHECK-NEXT:    %a6 = torch.aten.add.Tensor %r, %[[S6]] {alpha = 2 : i64}
func.func @producer_second(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %m: tensor<8x6xf32>, %y: tensor<4x6xf32>, %cx: tensor<1x3x5x5xf32>, %cw: tensor<4x3x3x3xf32>, %r: tensor<1x4x3x3xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<1x4x3x3xf32>) {
  %l1 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %a1 = torch.aten.add.Tensor %y, %l1 {alpha = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l2 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %s2 = torch.aten.sigmoid %l2 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %a2 = torch.aten.add.Tensor %y, %s2 {alpha = 2 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %m3 = torch.aten.matmul %x, %m : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %a3 = torch.aten.add.Tensor %y, %m3 {alpha = -0.5 : f64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l4 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %a4 = torch.aten.sub.Tensor %y, %l4 {alpha = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l5 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %a5 = torch.aten.add.Tensor %l5, %y {alpha = 2 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %c6 = torch.aten.conv2d %cx, %cw {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  %s6 = torch.aten.sigmoid %c6 : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %a6 = torch.aten.add.Tensor %r, %s6 {alpha = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %a1, %a2, %a3, %a4, %a5, %a6 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<1x4x3x3xf32>
}

// -----

// A binary after a unary fuses in that order; negative: an add that broadcasts the GEMM
// result itself (other is bigger) is not fused.
// CHECK-LABEL: func.func @not_fusable
// CHECK:         fused.linear %x, %w other(%y : tensor<4x6xf32>) {post_ops = [#fused.unary<relu>, #fused.binary<add, 1.0>]}
// CHECK:         %[[L:.*]] = fused.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    torch.aten.add.Tensor %[[L]], %big
func.func @not_fusable(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %y: tensor<4x6xf32>, %big: tensor<2x4x6xf32>) -> (tensor<4x6xf32>, tensor<2x4x6xf32>) {
  %l = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %r = torch.aten.relu %l : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %a = torch.aten.add.Tensor %r, %y {alpha = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %l2 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %b = torch.aten.add.Tensor %l2, %big {alpha = 1 : i64} : (tensor<4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  func.return %a, %b : tensor<4x6xf32>, tensor<2x4x6xf32>
}

// -----
// Negative: an add with an infinite alpha stays an add (a fused op's alpha must be finite,
// as the GEMM epilogue's; fused, the model failed to compile).
// CHECK-LABEL: func.func @infinite_alpha
// CHECK:         %[[L:.*]] = fused.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    torch.aten.add.Tensor %[[L]], %y {alpha = 0x7ff0000000000000 : f64}
func.func @infinite_alpha(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %y: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %l = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %a = torch.aten.add.Tensor %l, %y {alpha = 0x7FF0000000000000 : f64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %a : tensor<4x6xf32>
}

// -----
// Negative: a matmul divided by a denormal constant keeps its division (1/c overflows
// float32; folded into alpha, the results differed from eager's division).
// CHECK-LABEL: func.func @divide_by_denormal
// CHECK:         %[[M:.*]] = fused.matmul %a, %b
// CHECK-NEXT:    torch.aten.div.Scalar %[[M]]
func.func @divide_by_denormal(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %m = torch.aten.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %d = torch.aten.div.Scalar %m {other = 1.0e-40 : f64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %d : tensor<3x5xf32>
}

// -----
// Negative: a post-op with a number eager raises on (past float32's range: "value cannot be
// converted to type float without overflow") stays an op of its own, which runs in torch.
// CHECK-LABEL: func.func @overflowing_numbers
// CHECK:         %[[L:.*]] = fused.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    torch.aten.clamp %[[L]] {max = 1.000000e+39 : f64}
// CHECK:         %[[L2:.*]] = fused.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    torch.aten.add.Tensor %[[L2]], %y {alpha = 1.000000e+39 : f64}
func.func @overflowing_numbers(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>, %y: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %l = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %c = torch.aten.clamp %l {max = 1.0e39 : f64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %l2 = torch.aten.linear %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %a = torch.aten.add.Tensor %l2, %y {alpha = 1.0e39 : f64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %c, %a : tensor<4x6xf32>, tensor<4x6xf32>
}
