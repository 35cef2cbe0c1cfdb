// RUN: ziggurat-opt %s -p 'widen-half-floats{bf16_kernels=true}' --pass-statistics 2>%t.stats | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: ziggurat-opt %s -p 'widen-half-floats{bf16_kernels=false}' | filecheck %s --check-prefix=NOKERNELS
// bf16 and float16 element-wise ops become float32 ops between casts (eager computes them in
// float32 and rounds each result once); the casts are native on the CPU and fuse with the ops.

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[X0:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[G:.*]] = torch.aten.gelu %[[X0]] {approximate = "none"} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[GB:.*]] = torch.aten._to_copy %[[G]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
// CHECK-NEXT:    %[[GF:.*]] = torch.aten._to_copy %[[GB]] {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[X1:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[A:.*]] = torch.aten.add.Tensor %[[GF]], %[[X1]] {alpha = 1 : i64} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[AB:.*]] = torch.aten._to_copy %[[A]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
// CHECK-NEXT:    %[[AF:.*]] = torch.aten._to_copy %[[AB]] {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[N:.*]] = torch.aten.layer_norm %[[AF]] weight(%w : tensor<33xf32>) bias(%b : tensor<33xf32>) {{.*}} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[NB:.*]] = torch.aten._to_copy %[[N]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
// CHECK-NEXT:    func.return %[[NB]] : tensor<4x33xbf16>
func.func @chain(%x: tensor<4x33xbf16>, %w: tensor<33xf32>, %b: tensor<33xf32>) -> tensor<4x33xbf16> {
  %0 = torch.aten.gelu %x {approximate = "none"} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  %1 = torch.aten.add.Tensor %0, %x {alpha = 1 : i64} : (tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  %2 = torch.aten.layer_norm %1 weight(%w : tensor<33xf32>) bias(%b : tensor<33xf32>) {normalized_shape = array<i64: 33>, eps = 1.000000e-05 : f64, cudnn_enable = false} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %2 : tensor<4x33xbf16>
}

// Not widened: an op off the list (prod: eager multiplies in the 16-bit type), an op with a dtype argument,
// bf16 with float16 (eager promotes both to float32), an int64 operand, and a softmax over another dim than the last (eager rounds inside it).
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    torch.aten.prod.dim_int %x {{.*}} : (tensor<4x33xbf16>) -> tensor<4xbf16>
// CHECK-NEXT:    torch.aten.softmax.int %x {dim = -1 : i64, dtype = bf16} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
// CHECK-NEXT:    torch.aten.add.Tensor %x, %h {{.*}} : (tensor<4x33xbf16>, tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    torch.aten.mul.Tensor %x, %i : (tensor<4x33xbf16>, tensor<4x33xi64>) -> tensor<4x33xbf16>
// CHECK-NEXT:    torch.aten.softmax.int %x {dim = 0 : i64} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
func.func @kept(%x: tensor<4x33xbf16>, %h: tensor<4x33xf16>, %i: tensor<4x33xi64>) -> (tensor<4xbf16>, tensor<4x33xbf16>, tensor<4x33xf32>, tensor<4x33xbf16>, tensor<4x33xbf16>) {
  %0 = torch.aten.prod.dim_int %x {dim = 1 : i64, keepdim = false} : (tensor<4x33xbf16>) -> tensor<4xbf16>
  %1 = torch.aten.softmax.int %x {dim = -1 : i64, dtype = bf16} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  %2 = torch.aten.add.Tensor %x, %h {alpha = 1 : i64} : (tensor<4x33xbf16>, tensor<4x33xf16>) -> tensor<4x33xf32>
  %3 = torch.aten.mul.Tensor %x, %i : (tensor<4x33xbf16>, tensor<4x33xi64>) -> tensor<4x33xbf16>
  %4 = torch.aten.softmax.int %x {dim = 0 : i64} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0, %1, %2, %3, %4 : tensor<4xbf16>, tensor<4x33xbf16>, tensor<4x33xf32>, tensor<4x33xbf16>, tensor<4x33xbf16>
}

// float16 element-wise ops are widened as bf16 ones are.
// CHECK-LABEL: func.func @float16_chain
// CHECK-NEXT:    %[[HF:.*]] = torch.aten._to_copy %h {dtype = f32, non_blocking = false} : (tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.silu %[[HF]] : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[SH:.*]] = torch.aten._to_copy %[[S]] {dtype = f16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xf16>
// CHECK-NEXT:    %[[SF:.*]] = torch.aten._to_copy %[[SH]] {dtype = f32, non_blocking = false} : (tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[M:.*]] = torch.aten.softmax.int %[[SF]] {dim = 1 : i64} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[MH:.*]] = torch.aten._to_copy %[[M]] {dtype = f16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xf16>
// CHECK-NEXT:    func.return %[[MH]]
func.func @float16_chain(%h: tensor<4x33xf16>) -> tensor<4x33xf16> {
  %0 = torch.aten.silu %h : (tensor<4x33xf16>) -> tensor<4x33xf16>
  %1 = torch.aten.softmax.int %0 {dim = 1 : i64} : (tensor<4x33xf16>) -> tensor<4x33xf16>
  func.return %1 : tensor<4x33xf16>
}

// A float16 GEMM or convolution runs on the float32 kernels (eager's float16 GEMMs accumulate
// in float32 and round once): literal weights become float32 literals at compile time, a
// computed operand is cast, each result is rounded to float16 once. A bf16 one is kept (its own kernels).
// CHECK-LABEL: func.func @float16_gemms
// CHECK-DAG:     %[[WF:.*]] = torch.literal {{.*}} : tensor<24x33xf32>
// CHECK-DAG:     %[[BF:.*]] = torch.literal {{.*}} : tensor<24xf32>
// CHECK-DAG:     %[[HF:.*]] = torch.aten._to_copy %h {dtype = f32, non_blocking = false} : (tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK:         %[[L:.*]] = fused.linear %[[HF]], %[[WF]] bias(%[[BF]] : tensor<24xf32>){{.*}} : (tensor<4x33xf32>, tensor<24x33xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[LH:.*]] = torch.aten._to_copy %[[L]] {dtype = f16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xf16>
// CHECK-DAG:     %[[AF:.*]] = torch.aten._to_copy %[[LH]] {dtype = f32, non_blocking = false} : (tensor<4x24xf16>) -> tensor<4x24xf32>
// CHECK-DAG:     %[[GF:.*]] = torch.aten._to_copy %g {dtype = f32, non_blocking = false} : (tensor<24x5xf16>) -> tensor<24x5xf32>
// CHECK:         %[[MM:.*]] = torch.aten.mm %[[AF]], %[[GF]] : (tensor<4x24xf32>, tensor<24x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %[[MMH:.*]] = torch.aten._to_copy %[[MM]] {dtype = f16, non_blocking = false} : (tensor<4x5xf32>) -> tensor<4x5xf16>
// CHECK-NEXT:    %[[KEPT:.*]] = torch.aten.mm %x, %y : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT:    func.return %[[MMH]], %[[KEPT]]
// Without a bf16 GEMM kernel (``bf16_kernels=false``: an AVX2 host, or AVX-512 without AMX-BF16
// and AVX512-BF16), the bf16 mm is widened as the float16 ones are.
// NOKERNELS-LABEL: func.func @float16_gemms
// NOKERNELS-DAG:     %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// NOKERNELS-DAG:     %[[YF:.*]] = torch.aten._to_copy %y {dtype = f32, non_blocking = false} : (tensor<8x3xbf16>) -> tensor<8x3xf32>
// NOKERNELS:         %[[MM:.*]] = torch.aten.mm %[[XF]], %[[YF]] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// NOKERNELS-NEXT:    torch.aten._to_copy %[[MM]] {dtype = bf16, non_blocking = false} : (tensor<4x3xf32>) -> tensor<4x3xbf16>
func.func @float16_gemms(%h: tensor<4x33xf16>, %g: tensor<24x5xf16>, %x: tensor<4x8xbf16>, %y: tensor<8x3xbf16>) -> (tensor<4x5xf16>, tensor<4x3xbf16>) {
  %w = torch.literal dense<0.5> : tensor<24x33xf16>
  %b = torch.literal dense<0.25> : tensor<24xf16>
  %0 = fused.linear %h, %w bias(%b : tensor<24xf16>) : (tensor<4x33xf16>, tensor<24x33xf16>) -> tensor<4x24xf16>
  %1 = torch.aten.mm %0, %g : (tensor<4x24xf16>, tensor<24x5xf16>) -> tensor<4x5xf16>
  %2 = torch.aten.mm %x, %y : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  func.return %1, %2 : tensor<4x5xf16>, tensor<4x3xbf16>
}

// A float32 op with a bf16 operand (eager promotes it exactly): only that operand is widened.
// A bf16 where (a select) is not: eager copies its bits.
// CHECK-LABEL: func.func @promoted
// CHECK-NEXT:    %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.add.Tensor %y, %[[XF]] {alpha = 1 : i64} : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[W:.*]] = torch.aten.where.self %m, %x, %x : (tensor<4x33xi1>, tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
// CHECK-NEXT:    func.return %[[S]], %[[W]]
func.func @promoted(%x: tensor<4x33xbf16>, %y: tensor<4x33xf32>, %m: tensor<4x33xi1>) -> (tensor<4x33xf32>, tensor<4x33xbf16>) {
  %0 = torch.aten.add.Tensor %y, %x {alpha = 1 : i64} : (tensor<4x33xf32>, tensor<4x33xbf16>) -> tensor<4x33xf32>
  %1 = torch.aten.where.self %m, %x, %x : (tensor<4x33xi1>, tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0, %1 : tensor<4x33xf32>, tensor<4x33xbf16>
}

// A bf16 depthwise convolution without a residual stays bf16: the lowering runs it on the float32
// depthwise kernel reading and writing bf16 (its sums in float32, rounded once: the arithmetic of
// widening it), so no casts copy the activations around it. A dense one is kept too.
// CHECK-LABEL: func.func @depthwise
// CHECK:         %[[C:.*]] = fused.conv2d %x, %w bias(%b : tensor<4xbf16>) {{.*}}groups = 4 : i64{{.*}} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:    %[[D:.*]] = fused.conv2d %[[C]], %wd {{.*}} : (tensor<1x4x8x8xbf16>, tensor<4x4x1x1xbf16>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:    func.return %[[D]]
func.func @depthwise(%x: tensor<1x4x8x8xbf16>, %wd: tensor<4x4x1x1xbf16>) -> tensor<1x4x8x8xbf16> {
  %w = torch.literal dense<1.5> : tensor<4x1x3x3xbf16>
  %b = torch.literal dense<0.25> : tensor<4xbf16>
  %0 = fused.conv2d %x, %w bias(%b : tensor<4xbf16>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
  %1 = fused.conv2d %0, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xbf16>, tensor<4x4x1x1xbf16>) -> tensor<1x4x8x8xbf16>
  func.return %1 : tensor<1x4x8x8xbf16>
}

// A grouped bf16 convolution (not depthwise) is widened the same way.
// CHECK-LABEL: func.func @grouped
// CHECK-DAG:     %[[WF:.*]] = torch.literal {{.*}} : tensor<4x2x3x3xf32>
// CHECK-DAG:     %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xf32>
// CHECK:         %[[C:.*]] = fused.conv2d %[[XF]], %[[WF]] {{.*}}groups = 2 : i64{{.*}} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %[[CB:.*]] = torch.aten._to_copy %[[C]] {dtype = bf16, non_blocking = false} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:    func.return %[[CB]]
func.func @grouped(%x: tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xbf16> {
  %w = torch.literal dense<1.5> : tensor<4x2x3x3xbf16>
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xbf16>, tensor<4x2x3x3xbf16>) -> tensor<1x4x8x8xbf16>
  func.return %0 : tensor<1x4x8x8xbf16>
}

// A 16-bit fused op on the float32 kernels gives back the post-ops eager rounds between: only
// those that commute with rounding stay (relu; a hardtanh whose bounds are bf16 values), the
// others become the 16-bit aten ops they were, each widened with its own rounding.
// CHECK-LABEL: func.func @half_float_epilogues
// CHECK:         %[[KEPT:.*]] = fused.linear %{{.*}}, %{{.*}} {post_ops = [#fused.unary<relu>]} : (tensor<4x33xf32>, tensor<24x33xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[KEPTH:.*]] = torch.aten._to_copy %[[KEPT]] {dtype = f16, non_blocking = false}
// CHECK:         %[[L:.*]] = fused.linear %{{.*}}, %{{.*}} : (tensor<4x33xf32>, tensor<24x33xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[LH:.*]] = torch.aten._to_copy %[[L]] {dtype = f16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xf16>
// CHECK-NEXT:    %[[LF:.*]] = torch.aten._to_copy %[[LH]] {dtype = f32, non_blocking = false} : (tensor<4x24xf16>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[RF:.*]] = torch.aten._to_copy %r {dtype = f32, non_blocking = false} : (tensor<4x24xf16>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[A:.*]] = torch.aten.add.Tensor %[[LF]], %[[RF]] {{.*}} : (tensor<4x24xf32>, tensor<4x24xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[AH:.*]] = torch.aten._to_copy %[[A]] {dtype = f16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xf16>
// CHECK-NEXT:    %[[AF:.*]] = torch.aten._to_copy %[[AH]] {dtype = f32, non_blocking = false} : (tensor<4x24xf16>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[G:.*]] = torch.aten.gelu %[[AF]] {approximate = "none"} : (tensor<4x24xf32>) -> tensor<4x24xf32>
// CHECK-NEXT:    %[[GH:.*]] = torch.aten._to_copy %[[G]] {dtype = f16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xf16>
// (The depthwise convolutions stay bf16, as in @depthwise: the kernel rounds their float32 sums
// once, after the post-ops kept.)
// CHECK:         %[[D1B:.*]] = fused.conv2d {{.*}}post_ops = [#fused.unary<hardtanh, 0.0, 6.5>]} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:    %[[D2B:.*]] = fused.conv2d {{.*}}groups = 4 : i64} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
// CHECK-NEXT:    %[[D2F:.*]] = torch.aten._to_copy %[[D2B]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[H:.*]] = torch.aten.hardtanh %[[D2F]] {min_val = 0.000000e+00 : f64, max_val = 6.300000e+00 : f64}
// CHECK-NEXT:    %[[HB:.*]] = torch.aten._to_copy %[[H]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    func.return %[[KEPTH]], %[[GH]], %[[D1B]], %[[HB]]
func.func @half_float_epilogues(%h: tensor<4x33xf16>, %r: tensor<4x24xf16>, %x: tensor<1x4x8x8xbf16>) -> (tensor<4x24xf16>, tensor<4x24xf16>, tensor<1x4x8x8xbf16>, tensor<1x4x8x8xbf16>) {
  %w = torch.literal dense<0.5> : tensor<24x33xf16>
  %0 = fused.linear %h, %w {post_ops = [#fused.unary<relu>]} : (tensor<4x33xf16>, tensor<24x33xf16>) -> tensor<4x24xf16>
  %1 = fused.linear %h, %w other(%r : tensor<4x24xf16>) {post_ops = [#fused.binary<add, 1.0>, #fused.unary<gelu_erf>]} : (tensor<4x33xf16>, tensor<24x33xf16>) -> tensor<4x24xf16>
  %wd = torch.literal dense<1.5> : tensor<4x1x3x3xbf16>
  %2 = fused.conv2d %x, %wd {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64, post_ops = [#fused.unary<hardtanh, 0.0, 6.5>]} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
  %3 = fused.conv2d %x, %wd {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64, post_ops = [#fused.unary<hardtanh, 0.0, 6.3>]} : (tensor<1x4x8x8xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x8x8xbf16>
  func.return %0, %1, %2, %3 : tensor<4x24xf16>, tensor<4x24xf16>, tensor<1x4x8x8xbf16>, tensor<1x4x8x8xbf16>
}

// A float16 matmul with a scale (fuse-post-ops' matmul * c) rounds the product, then eager's
// 16-bit mul by the number, then the relu after it.
// CHECK-LABEL: func.func @scaled_float16_product
// CHECK:         %[[P:.*]] = fused.matmul %{{.*}}, %{{.*}} {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[PH:.*]] = torch.aten._to_copy %[[P]] {dtype = f16, non_blocking = false}
// CHECK-NEXT:    %[[PF:.*]] = torch.aten._to_copy %[[PH]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[S:.*]] = torch.aten.mul.Scalar %[[PF]] {other = 5.000000e-01 : f64} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[SH:.*]] = torch.aten._to_copy %[[S]] {dtype = f16, non_blocking = false}
// CHECK-NEXT:    %[[SF:.*]] = torch.aten._to_copy %[[SH]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[R:.*]] = torch.aten.relu %[[SF]]
// CHECK-NEXT:    %[[RH:.*]] = torch.aten._to_copy %[[R]] {dtype = f16, non_blocking = false}
// CHECK-NEXT:    func.return %[[RH]]
func.func @scaled_float16_product(%a: tensor<2x3x4xf16>, %b: tensor<2x4x5xf16>) -> tensor<2x3x5xf16> {
  %0 = fused.matmul %a, %b {alpha = 5.000000e-01 : f64, beta = 1.000000e+00 : f64, post_ops = [#fused.unary<relu>]} : (tensor<2x3x4xf16>, tensor<2x4x5xf16>) -> tensor<2x3x5xf16>
  func.return %0 : tensor<2x3x5xf16>
}

// A bf16 sum accumulates in float32 and rounds once, as eager's.
// CHECK-LABEL: func.func @reduction
// CHECK-NEXT:    %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.sum.dim_IntList %[[XF]] {{.*}} : (tensor<4x33xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[SB:.*]] = torch.aten._to_copy %[[S]] {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
func.func @reduction(%x: tensor<4x33xbf16>) -> tensor<4xbf16> {
  %0 = torch.aten.sum.dim_IntList %x {dim = array<i64: 1>, keepdim = false} : (tensor<4x33xbf16>) -> tensor<4xbf16>
  func.return %0 : tensor<4xbf16>
}

// var and cumsum: float32 moments and a float32 running sum, each result rounded once.
// CHECK-LABEL: func.func @moments
// CHECK-NEXT:    %[[XV:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[V:.*]] = torch.aten.var.dim %[[XV]] {{.*}} : (tensor<4x33xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[VB:.*]] = torch.aten._to_copy %[[V]] {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT:    %[[XC:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[C:.*]] = torch.aten.cumsum %[[XC]] {{.*}} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[CB:.*]] = torch.aten._to_copy %[[C]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @moments(%x: tensor<4x33xbf16>) -> (tensor<4xbf16>, tensor<4x33xbf16>) {
  %0 = torch.aten.var.dim %x {dim = array<i64: 1>, unbiased = true, keepdim = false} : (tensor<4x33xbf16>) -> tensor<4xbf16>
  %1 = torch.aten.cumsum %x {dim = 1 : i64} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0, %1 : tensor<4xbf16>, tensor<4x33xbf16>
}

// max over a dim: the value widened and rounded back (exact), the indices kept.
// CHECK-LABEL: func.func @indexed
// CHECK-NEXT:    %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[V:.*]], %[[I:.*]] = torch.aten.max.dim %[[XF]] {dim = 1 : i64, keepdim = false} : (tensor<4x33xf32>) -> (tensor<4xf32>, tensor<4xi64>)
// CHECK-NEXT:    %[[VB:.*]] = torch.aten._to_copy %[[V]] {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT:    func.return %[[VB]], %[[I]]
func.func @indexed(%x: tensor<4x33xbf16>) -> (tensor<4xbf16>, tensor<4xi64>) {
  %0, %1 = torch.aten.max.dim %x {dim = 1 : i64, keepdim = false} : (tensor<4x33xbf16>) -> (tensor<4xbf16>, tensor<4xi64>)
  func.return %0, %1 : tensor<4xbf16>, tensor<4xi64>
}

// A bf16 GEMM the bf16 kernels do not take (bmm here; 1-d, 3-d, transposed convolutions) is widened as a float16 one.
// CHECK-LABEL: func.func @bf16_bmm
// CHECK-DAG:     %[[AF:.*]] = torch.aten._to_copy %a {dtype = f32, non_blocking = false} : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK-DAG:     %[[BF:.*]] = torch.aten._to_copy %b {dtype = f32, non_blocking = false} : (tensor<2x8x3xbf16>) -> tensor<2x8x3xf32>
// CHECK:         %[[P:.*]] = torch.aten.bmm %[[AF]], %[[BF]] : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[PB:.*]] = torch.aten._to_copy %[[P]] {dtype = bf16, non_blocking = false} : (tensor<2x4x3xf32>) -> tensor<2x4x3xbf16>
// CHECK-NEXT:    func.return %[[PB]]
func.func @bf16_bmm(%a: tensor<2x4x8xbf16>, %b: tensor<2x8x3xbf16>) -> tensor<2x4x3xbf16> {
  %0 = torch.aten.bmm %a, %b : (tensor<2x4x8xbf16>, tensor<2x8x3xbf16>) -> tensor<2x4x3xbf16>
  func.return %0 : tensor<2x4x3xbf16>
}

// A float16 batch norm that nothing folded: float32 in (its 16-bit parameters cast), one rounding out.
// CHECK-LABEL: func.func @lone_batch_norm
// CHECK-DAG:     %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// CHECK-DAG:     %[[WF:.*]] = torch.aten._to_copy %w {dtype = f32, non_blocking = false} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK:         %[[N:.*]] = torch.aten.batch_norm %[[XF]] weight(%[[WF]] : tensor<4xf32>) {{.*}} : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[NH:.*]] = torch.aten._to_copy %[[N]] {dtype = f16, non_blocking = false} : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf16>
// CHECK-NEXT:    func.return %[[NH]]
func.func @lone_batch_norm(%x: tensor<1x4x3x3xf16>, %w: tensor<4xf16>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x3x3xf16> {
  %0 = torch.aten.batch_norm %x weight(%w : tensor<4xf16>) running_mean(%m : tensor<4xf32>) running_var(%v : tensor<4xf32>) {training = false, momentum = 1.000000e-01 : f64, eps = 1.000000e-05 : f64, cudnn_enabled = false} : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf16>
  func.return %0 : tensor<1x4x3x3xf16>
}

// Predicates compare the widened value (exact); element functions checked over every 16-bit
// value (erfc) are widened; rsqrt is not (eager's scalar loop rounds the square root first).
// CHECK-LABEL: func.func @predicates_and_functions
// CHECK-NEXT:    %[[X0:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[N:.*]] = torch.aten.isnan %[[X0]] : (tensor<4x33xf32>) -> tensor<4x33xi1>
// CHECK-NEXT:    %[[X1:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[E:.*]] = torch.aten.erfc %[[X1]] : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[EB:.*]] = torch.aten._to_copy %[[E]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.rsqrt %x : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
// CHECK-NEXT:    func.return %[[N]], %[[EB]], %[[R]]
func.func @predicates_and_functions(%x: tensor<4x33xbf16>) -> (tensor<4x33xi1>, tensor<4x33xbf16>, tensor<4x33xbf16>) {
  %0 = torch.aten.isnan %x : (tensor<4x33xbf16>) -> tensor<4x33xi1>
  %1 = torch.aten.erfc %x : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  %2 = torch.aten.rsqrt %x : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0, %1, %2 : tensor<4x33xi1>, tensor<4x33xbf16>, tensor<4x33xbf16>
}

// An index result (argmax: exact, it compares) keeps its type; aminmax is widened whole, both
// values rounded back (exactly: each is an operand).
// CHECK-LABEL: func.func @index_results
// CHECK-NEXT:    %[[X0:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[I:.*]] = torch.aten.argmax %[[X0]] {dim = 1 : i64, keepdim = false} : (tensor<4x33xf32>) -> tensor<4xi64>
// CHECK-NEXT:    %[[X1:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[LO:.*]], %[[HI:.*]] = torch.aten.aminmax %[[X1]] {dim = 1 : i64, keepdim = false} : (tensor<4x33xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[LB:.*]] = torch.aten._to_copy %[[LO]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    %[[HB:.*]] = torch.aten._to_copy %[[HI]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    func.return %[[I]], %[[LB]], %[[HB]]
func.func @index_results(%x: tensor<4x33xbf16>) -> (tensor<4xi64>, tensor<4xbf16>, tensor<4xbf16>) {
  %0 = torch.aten.argmax %x {dim = 1 : i64, keepdim = false} : (tensor<4x33xbf16>) -> tensor<4xi64>
  %1, %2 = torch.aten.aminmax %x {dim = 1 : i64, keepdim = false} : (tensor<4x33xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>)
  func.return %0, %1, %2 : tensor<4xi64>, tensor<4xbf16>, tensor<4xbf16>
}

// A float32 product of two bf16 values widened (attention's scores, K transposed after its
// cast): the bf16 operands themselves, the float32 result kept (exact products, float32 sums;
// the bf16 kernels store it in float32). The casts nothing else reads go.
// CHECK-LABEL: func.func @bf16_products
// CHECK-NEXT:    %[[KT:.*]] = torch.aten.transpose.int %k {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x5x4xbf16>) -> tensor<2x4x5xbf16>
// CHECK-NEXT:    %[[S:.*]] = fused.matmul %q, %[[KT]] {alpha = 5.000000e-01 : f64, beta = 5.000000e-01 : f64} : (tensor<2x3x4xbf16>, tensor<2x4x5xbf16>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    func.return %[[S]]
// Without a bf16 kernel the float32 product stays, for the float32 kernels.
// NOKERNELS-LABEL: func.func @bf16_products
// NOKERNELS:         fused.matmul %{{.*}}, %{{.*}} {{.*}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
func.func @bf16_products(%q: tensor<2x3x4xbf16>, %k: tensor<2x5x4xbf16>) -> tensor<2x3x5xf32> {
  %0 = torch.aten._to_copy %q {dtype = f32, non_blocking = false} : (tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
  %1 = torch.aten._to_copy %k {dtype = f32, non_blocking = false} : (tensor<2x5x4xbf16>) -> tensor<2x5x4xf32>
  %2 = torch.aten.transpose.int %1 {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %3 = fused.matmul %0, %2 {alpha = 5.000000e-01 : f64, beta = 5.000000e-01 : f64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %3 : tensor<2x3x5xf32>
}

// Not a float16 product (its GEMMs are float32 ones already), nor one with a post-op.
// CHECK-LABEL: func.func @float16_product_kept
// CHECK:         fused.matmul {{.*}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
func.func @float16_product_kept(%q: tensor<2x3x4xf16>, %k: tensor<2x4x5xf16>) -> tensor<2x3x5xf32> {
  %0 = torch.aten._to_copy %q {dtype = f32, non_blocking = false} : (tensor<2x3x4xf16>) -> tensor<2x3x4xf32>
  %1 = torch.aten._to_copy %k {dtype = f32, non_blocking = false} : (tensor<2x4x5xf16>) -> tensor<2x4x5xf32>
  %2 = fused.matmul %0, %1 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %2 : tensor<2x3x5xf32>
}

// Powers: eager rounds the exponent to the tensor's type (2.2 is bf16's 2.203125) and multiplies
// a bf16 cube (and x ** -2) in bf16, each product rounded; casts to and from integers go through
// float32, as c10's conversions do; a bilinear resize is widened without align_corners only.
// CHECK-LABEL: func.func @powers_casts_resize
// CHECK-NEXT:    %[[C0:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<3x5xbf16>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[SQ:.*]] = torch.aten.mul.Tensor %[[C0]], %[[C0]] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[SQB:.*]] = torch.aten._to_copy %[[SQ]] {dtype = bf16, non_blocking = false} : (tensor<3x5xf32>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[SQF:.*]] = torch.aten._to_copy %[[SQB]] {dtype = f32, non_blocking = false} : (tensor<3x5xbf16>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[CU:.*]] = torch.aten.mul.Tensor %[[SQF]], %[[C0]] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[CUB:.*]] = torch.aten._to_copy %[[CU]] {dtype = bf16, non_blocking = false} : (tensor<3x5xf32>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[P0:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<3x5xbf16>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[P:.*]] = torch.aten.pow.Tensor_Scalar %[[P0]] {exponent = 2.203125 : f64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[PB:.*]] = torch.aten._to_copy %[[P]] {dtype = bf16, non_blocking = false} : (tensor<3x5xf32>) -> tensor<3x5xbf16>
// CHECK-NEXT:    torch.aten.pow.Tensor_Scalar %h {exponent = 5.000000e-01 : f64} : (tensor<3x5xf16>) -> tensor<3x5xf16>
// CHECK-NEXT:    %[[MF:.*]] = torch.aten._to_copy %m {dtype = f32, non_blocking = false} : (tensor<3x5xi64>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[MB:.*]] = torch.aten._to_copy %[[MF]] {dtype = bf16, non_blocking = false} : (tensor<3x5xf32>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<3x5xbf16>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[XH:.*]] = torch.aten._to_copy %[[XF]] {dtype = f16, non_blocking = false} : (tensor<3x5xf32>) -> tensor<3x5xf16>
// CHECK-NEXT:    %[[R0:.*]] = torch.aten._to_copy %i {dtype = f32, non_blocking = false} : (tensor<1x2x3x5xbf16>) -> tensor<1x2x3x5xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.upsample_bilinear2d.vec %[[R0]] {align_corners = false, {{.*}}} : (tensor<1x2x3x5xf32>) -> tensor<1x2x6x10xf32>
// CHECK-NEXT:    %[[RB:.*]] = torch.aten._to_copy %[[R]] {dtype = bf16, non_blocking = false} : (tensor<1x2x6x10xf32>) -> tensor<1x2x6x10xbf16>
// CHECK-NEXT:    torch.aten.upsample_bilinear2d.vec %i {align_corners = true, {{.*}}} : (tensor<1x2x3x5xbf16>) -> tensor<1x2x6x10xbf16>
func.func @powers_casts_resize(%x: tensor<3x5xbf16>, %h: tensor<3x5xf16>, %m: tensor<3x5xi64>, %i: tensor<1x2x3x5xbf16>) -> (tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xf16>, tensor<3x5xbf16>, tensor<3x5xf16>, tensor<1x2x6x10xbf16>, tensor<1x2x6x10xbf16>) {
  %0 = torch.aten.pow.Tensor_Scalar %x {exponent = 3 : i64} : (tensor<3x5xbf16>) -> tensor<3x5xbf16>
  %1 = torch.aten.pow.Tensor_Scalar %x {exponent = 2.200000e+00 : f64} : (tensor<3x5xbf16>) -> tensor<3x5xbf16>
  %2 = torch.aten.pow.Tensor_Scalar %h {exponent = 5.000000e-01 : f64} : (tensor<3x5xf16>) -> tensor<3x5xf16>
  %3 = torch.aten.to.dtype %m {dtype = bf16, non_blocking = false, copy = false} : (tensor<3x5xi64>) -> tensor<3x5xbf16>
  %4 = torch.aten._to_copy %x {dtype = f16, non_blocking = false} : (tensor<3x5xbf16>) -> tensor<3x5xf16>
  %5 = torch.aten.upsample_bilinear2d.vec %i {align_corners = false, scale_factors = array<f64: 2.000000e+00, 2.000000e+00>} : (tensor<1x2x3x5xbf16>) -> tensor<1x2x6x10xbf16>
  %6 = torch.aten.upsample_bilinear2d.vec %i {align_corners = true, scale_factors = array<f64: 2.000000e+00, 2.000000e+00>} : (tensor<1x2x3x5xbf16>) -> tensor<1x2x6x10xbf16>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<3x5xbf16>, tensor<3x5xbf16>, tensor<3x5xf16>, tensor<3x5xbf16>, tensor<3x5xf16>, tensor<1x2x6x10xbf16>, tensor<1x2x6x10xbf16>
}

// A float32 dtype argument on a bf16 operand (Bloom's softmax) is a cast of the operand; the
// multiply alias is widened as mul is.
// CHECK-LABEL: func.func @dtype_argument_and_alias
// CHECK-NEXT:    %[[XF:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[S:.*]] = torch.aten.softmax.int %[[XF]] {dim = -1 : i64, dtype = f32} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[A:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[B:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[M:.*]] = torch.aten.multiply.Tensor %[[A]], %[[B]] : (tensor<4x33xf32>, tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    torch.aten._to_copy %[[M]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @dtype_argument_and_alias(%x: tensor<4x33xbf16>) -> (tensor<4x33xf32>, tensor<4x33xbf16>) {
  %0 = torch.aten.softmax.int %x {dim = -1 : i64, dtype = f32} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
  %1 = torch.aten.multiply.Tensor %x, %x : (tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0, %1 : tensor<4x33xf32>, tensor<4x33xbf16>
}

// nan_to_num: eager's 16-bit defaults for the infinities are the type's own extremes.
// CHECK-LABEL: func.func @nan_to_num_defaults
// CHECK-NEXT:    %[[F:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[N:.*]] = torch.aten.nan_to_num %[[F]] {nan = 0.000000e+00 : f64, posinf = 3.3895313892515355e+38 : f64, neginf = -3.3895313892515355e+38 : f64} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    torch.aten._to_copy %[[N]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @nan_to_num_defaults(%x: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = torch.aten.nan_to_num %x : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0 : tensor<4x33xbf16>
}

// log_softmax over the last dim: eager rounds the row's sum of exponentials and its log to
// the 16-bit type before (x - max) - log_sum; over another dim, float32's rounded once.
// CHECK-LABEL: func.func @log_softmax_last_dim
// CHECK-NEXT:    %[[F:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[M:.*]] = torch.aten.amax %[[F]] {dim = array<i64: -1>, keepdim = true} : (tensor<4x33xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = torch.aten.sub.Tensor %[[F]], %[[M]]
// CHECK-NEXT:    %[[E:.*]] = torch.aten.exp %[[D]]
// CHECK-NEXT:    %[[S:.*]] = torch.aten.sum.dim_IntList %[[E]] {dim = array<i64: -1>, keepdim = true} : (tensor<4x33xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[S16:.*]] = torch.aten._to_copy %[[S]] {dtype = bf16, non_blocking = false} : (tensor<4x1xf32>) -> tensor<4x1xbf16>
// CHECK-NEXT:    %[[SR:.*]] = torch.aten._to_copy %[[S16]] {dtype = f32, non_blocking = false} : (tensor<4x1xbf16>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[L:.*]] = torch.aten.log %[[SR]]
// CHECK-NEXT:    %[[L16:.*]] = torch.aten._to_copy %[[L]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    %[[LR:.*]] = torch.aten._to_copy %[[L16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[Y:.*]] = torch.aten.sub.Tensor %[[D]], %[[LR]]
// CHECK-NEXT:    torch.aten._to_copy %[[Y]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @log_softmax_last_dim(%x: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = torch.aten.log_softmax.int %x {dim = -1 : i64} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0 : tensor<4x33xbf16>
}

// CHECK-LABEL: func.func @log_softmax_other_dim
// CHECK-NEXT:    %[[F:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[Y:.*]] = torch.aten.log_softmax.int %[[F]] {dim = 0 : i64} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    torch.aten._to_copy %[[Y]] {dtype = f16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xf16>
func.func @log_softmax_other_dim(%x: tensor<4x33xf16>) -> tensor<4x33xf16> {
  %0 = torch.aten.log_softmax.int %x {dim = 0 : i64} : (tensor<4x33xf16>) -> tensor<4x33xf16>
  func.return %0 : tensor<4x33xf16>
}

// logsumexp: ATen's composite of 16-bit ops, each rounded; an infinite max is made 0 first.
// CHECK-LABEL: func.func @logsumexp
// CHECK-NEXT:    %[[F:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[M:.*]] = torch.aten.amax %[[F]] {dim = array<i64: 1>, keepdim = true}
// CHECK-NEXT:    %[[A:.*]] = torch.aten.abs %[[M]]
// CHECK-NEXT:    %[[I:.*]] = torch.aten.eq.Scalar %[[A]] {other = 0x7ff0000000000000 : f64}
// CHECK-NEXT:    %[[MF:.*]] = torch.aten.masked_fill.Scalar %[[M]], %[[I]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[D:.*]] = torch.aten.sub.Tensor %[[F]], %[[MF]]
// CHECK-NEXT:    %[[D16:.*]] = torch.aten._to_copy %[[D]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    %[[DR:.*]] = torch.aten._to_copy %[[D16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[E:.*]] = torch.aten.exp %[[DR]]
// CHECK:         %[[S:.*]] = torch.aten.sum.dim_IntList %{{.*}} {dim = array<i64: 1>, keepdim = false} : (tensor<4x33xf32>) -> tensor<4xf32>
// CHECK:         %[[L:.*]] = torch.aten.log
// CHECK:         %[[MS:.*]] = torch.aten.amax %[[F]] {dim = array<i64: 1>, keepdim = false}
// CHECK:         %[[MSF:.*]] = torch.aten.masked_fill.Scalar %[[MS]]
// CHECK-NEXT:    %[[Y:.*]] = torch.aten.add.Tensor %{{.*}}, %[[MSF]]
// CHECK-NEXT:    torch.aten._to_copy %[[Y]] {dtype = bf16, non_blocking = false} : (tensor<4xf32>) -> tensor<4xbf16>
func.func @logsumexp(%x: tensor<4x33xbf16>) -> tensor<4xbf16> {
  %0 = torch.aten.logsumexp %x {dim = array<i64: 1>, keepdim = false} : (tensor<4x33xbf16>) -> tensor<4xbf16>
  func.return %0 : tensor<4xbf16>
}

// hardshrink: eager compares with lambd rounded to the tensor's type (bf16's 0.1 is 0.10009765625).
// CHECK-LABEL: func.func @hardshrink_rounded_lambd
// CHECK-NEXT:    %[[F:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xbf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[H:.*]] = torch.aten.hardshrink %[[F]] {lambd = 0.10009765625 : f64} : (tensor<4x33xf32>) -> tensor<4x33xf32>
// CHECK-NEXT:    torch.aten._to_copy %[[H]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @hardshrink_rounded_lambd(%x: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = torch.aten.hardshrink %x {lambd = 1.000000e-01 : f64} : (tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0 : tensor<4x33xbf16>
}

// xlogy, logit, trunc division: eager rounds an intermediate (log(y); 1 - x and the odds; the quotient).
// CHECK-LABEL: func.func @xlogy
// CHECK-NEXT:    %[[X:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[Y:.*]] = torch.aten._to_copy %y {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[L:.*]] = torch.aten.log %[[Y]]
// CHECK-NEXT:    %[[L16:.*]] = torch.aten._to_copy %[[L]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    %[[LR:.*]] = torch.aten._to_copy %[[L16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[P:.*]] = torch.aten.mul.Tensor %[[X]], %[[LR]]
// CHECK-NEXT:    %[[Z:.*]] = torch.aten.eq.Scalar %[[X]] {other = 0.000000e+00 : f64}
// CHECK-NEXT:    %[[N:.*]] = torch.aten.isnan %[[Y]]
// CHECK-NEXT:    %[[NN:.*]] = torch.aten.logical_not %[[N]]
// CHECK-NEXT:    %[[M:.*]] = torch.aten.logical_and %[[Z]], %[[NN]]
// CHECK-NEXT:    %[[R:.*]] = torch.aten.masked_fill.Scalar %[[P]], %[[M]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    torch.aten._to_copy %[[R]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @xlogy(%x: tensor<4x33xbf16>, %y: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = torch.aten.xlogy.Tensor %x, %y : (tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0 : tensor<4x33xbf16>
}

// CHECK-LABEL: func.func @logit
// CHECK-NEXT:    %[[X:.*]] = torch.aten._to_copy %x {dtype = f32, non_blocking = false} : (tensor<4x33xf16>) -> tensor<4x33xf32>
// CHECK-NEXT:    %[[R:.*]] = torch.aten.rsub.Scalar %[[X]] {other = 1.000000e+00 : f64, alpha = 1 : i64}
// CHECK-NEXT:    %[[R16:.*]] = torch.aten._to_copy %[[R]] {dtype = f16, non_blocking = false}
// CHECK-NEXT:    %[[RR:.*]] = torch.aten._to_copy %[[R16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[Q:.*]] = torch.aten.div.Tensor %[[X]], %[[RR]]
// CHECK-NEXT:    %[[Q16:.*]] = torch.aten._to_copy %[[Q]] {dtype = f16, non_blocking = false}
// CHECK-NEXT:    %[[QR:.*]] = torch.aten._to_copy %[[Q16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[L:.*]] = torch.aten.log %[[QR]]
// CHECK-NEXT:    torch.aten._to_copy %[[L]] {dtype = f16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xf16>
func.func @logit(%x: tensor<4x33xf16>) -> tensor<4x33xf16> {
  %0 = torch.aten.logit %x : (tensor<4x33xf16>) -> tensor<4x33xf16>
  func.return %0 : tensor<4x33xf16>
}

// CHECK-LABEL: func.func @div_trunc
// CHECK:         %[[Q:.*]] = torch.aten.div.Tensor
// CHECK-NEXT:    %[[Q16:.*]] = torch.aten._to_copy %[[Q]] {dtype = bf16, non_blocking = false}
// CHECK-NEXT:    %[[QR:.*]] = torch.aten._to_copy %[[Q16]] {dtype = f32, non_blocking = false}
// CHECK-NEXT:    %[[T:.*]] = torch.aten.trunc %[[QR]]
// CHECK-NEXT:    torch.aten._to_copy %[[T]] {dtype = bf16, non_blocking = false} : (tensor<4x33xf32>) -> tensor<4x33xbf16>
func.func @div_trunc(%x: tensor<4x33xbf16>, %y: tensor<4x33xbf16>) -> tensor<4x33xbf16> {
  %0 = torch.aten.div.Tensor_mode %x, %y {rounding_mode = "trunc"} : (tensor<4x33xbf16>, tensor<4x33xbf16>) -> tensor<4x33xbf16>
  func.return %0 : tensor<4x33xbf16>
}

// STATS: widen-half-floats:
// STATS:   16-bit epilogues given back to eager's roundings 3
// STATS:   batch norms widened 1
// STATS:   bf16 GEMMs and convolutions without a bf16 kernel widened 1
// STATS:   bf16 powers multiplied out 1
// STATS:   bf16 products of widened operands 1
// STATS:   casts through float32 2
// STATS:   comparisons and predicates widened 1
// STATS:   depthwise convolutions kept bf16 3
// STATS:   float16 GEMMs and convolutions widened 5
// STATS:   float32 dtype arguments made casts 1
// STATS:   grouped convolutions widened 1
// STATS:   index results widened 1
// STATS:   indexed ops widened 1
// STATS:   log_softmax over another dim widened 1
// STATS:   log_softmax over the last dim written out 1
// STATS:   logit written out 1
// STATS:   logsumexp written out 1
// STATS:   ops widened 18
// STATS:   promoted operands widened 1
// STATS:   trunc divisions written out 1
// STATS:   xlogy written out 1

// A float16 convolution by a constant weight holding inf stays float16: eager's float16 kernel
// skips the taps on the padding, where the widened float32 one gives 0 * inf = NaN.
// CHECK-LABEL: func.func @float16_conv_inf_weight
// CHECK:         fused.conv2d %x, %w {{.*}} : (tensor<1x2x1x1xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x3x3xf16>
func.func @float16_conv_inf_weight(%x: tensor<1x2x1x1xf16>) -> tensor<1x2x3x3xf16> {
  %w = torch.literal dense<[[[[0x7C00]], [[1.0]]], [[[2.0]], [[3.0]]]]> : tensor<2x2x1x1xf16>
  %0 = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x1x1xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x3x3xf16>
  func.return %0 : tensor<1x2x3x3xf16>
}

// A bf16 fused op keeps its post-ops where the bf16 kernels round between the steps; without
// them (bf16_kernels=false) it runs on the float32 kernels, which round once, and gives back the
// post-ops that do not commute with rounding as float16's do (a sigmoid after a bf16 linear
// on the AVX2 EPYC was a bf16 ulp off eager on 12 % of its values).
// CHECK-LABEL: func.func @bf16_epilogue
// CHECK-NEXT:    %[[W:.*]] = torch.literal
// CHECK-NEXT:    %[[L:.*]] = fused.linear %x, %[[W]] {post_ops = [#fused.unary<sigmoid>]} : (tensor<4x33xbf16>, tensor<24x33xbf16>) -> tensor<4x24xbf16>
// CHECK-NEXT:    func.return %[[L]]
// NOKERNELS-LABEL: func.func @bf16_epilogue
// NOKERNELS:         %[[L:.*]] = fused.linear %{{.*}}, %{{.*}} : (tensor<4x33xf32>, tensor<24x33xf32>) -> tensor<4x24xf32>
// NOKERNELS-NEXT:    %[[LB:.*]] = torch.aten._to_copy %[[L]] {dtype = bf16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xbf16>
// NOKERNELS-NEXT:    %[[LF:.*]] = torch.aten._to_copy %[[LB]] {dtype = f32, non_blocking = false} : (tensor<4x24xbf16>) -> tensor<4x24xf32>
// NOKERNELS-NEXT:    %[[S:.*]] = torch.aten.sigmoid %[[LF]] : (tensor<4x24xf32>) -> tensor<4x24xf32>
// NOKERNELS-NEXT:    %[[SB:.*]] = torch.aten._to_copy %[[S]] {dtype = bf16, non_blocking = false} : (tensor<4x24xf32>) -> tensor<4x24xbf16>
// NOKERNELS-NEXT:    func.return %[[SB]]
func.func @bf16_epilogue(%x: tensor<4x33xbf16>) -> tensor<4x24xbf16> {
  %w = torch.literal dense<0.5> : tensor<24x33xbf16>
  %0 = fused.linear %x, %w {post_ops = [#fused.unary<sigmoid>]} : (tensor<4x33xbf16>, tensor<24x33xbf16>) -> tensor<4x24xbf16>
  func.return %0 : tensor<4x24xbf16>
}
