// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop{isa=avx512}' 2>&1 | filecheck %s

// #fused.requantize runs in the int8 and native depthwise kernels' epilogues only (where
// fuse-requantize puts it); on a linear with a float32 weight (written by hand) the op runs in
// torch, where the reference semantics apply it, with the reason in the report.
// CHECK: ops running through torch (no native lowering): fused.linear x1
// CHECK: loop.fallback_ops = {fused.linear = ["a #fused.requantize/quantize post-op or a ui8 operand runs on the int8 or depthwise kernels only"]}
// CHECK: fused.linear %{{.*}}, %{{.*}} {loop.fallback_reason = {{.*}}post_ops = [#fused.unary<relu>, #fused.requantize<0.125, 3, 0, 255>]}
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = torch.literal dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = fused.linear %x, %w {post_ops = [#fused.unary<relu>, #fused.requantize<0.125, 3, 0, 255>]} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
