// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512}' --elide-resources | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-opt' --elide-resources | filecheck %s --check-prefix=NOPACK
// RUN: not ziggurat-opt %s -p 'graph-opt{prepack=false}' 2>&1 | filecheck %s --check-prefix=MOVED
// RUN: not ziggurat-opt %s -p 'graph-opt{isa=avx2}' 2>&1 | filecheck %s --check-prefix=MOVED-ISA

// The whole pipeline on conv -> bn -> (+ residual) -> relu -> dropout -> linear -> gelu:
// one fused conv with folded batch norm and the post-ops, one fused linear; the CPU
// backend's prepack-weights then packs their weights (graph-opt alone leaves them).
// CHECK-LABEL: func.func @block
// CHECK:         %[[C:.*]] = fused.conv2d %x, %{{.*}} bias(%{{.*}} : tensor<2xf32>) other(%x : tensor<1x2x3x3xf32>) {{{.*}}post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>], weight_layout = "KN32n", weight_shape = array<i64: 2, 2, 1, 1>}
// CHECK:         %[[F:.*]] = torch.aten.flatten.using_ints %[[C]]
// CHECK:         fused.linear %[[F]], %{{.*}} {post_ops = [#fused.unary<gelu_erf>], weight_layout = "KN32n", weight_shape = array<i64: 4, 18>}
// CHECK-NOT:     batch_norm
// CHECK-NOT:     dropout
// CHECK-NOT:     torch.aten.relu
// NOPACK:        fused.conv2d %x, %{{.*}} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>)
// NOPACK-NOT:    weight_layout
// graph-opt's old prepack/isa options (prepacking is now the CPU backend's pass):
// MOVED:         ziggurat-opt: error: graph-opt has no option 'prepack' any more: weight prepacking moved to the prepack-weights pass of the CPU backend; write 'graph-opt,prepack-weights{isa=...}' to prepack, plain 'graph-opt' not to
// MOVED-ISA:     ziggurat-opt: error: graph-opt has no option 'isa' any more
func.func @block(%x: tensor<1x2x3x3xf32>) -> tensor<1x4xf32> {
  %w = torch.literal dense<[[[[1.0]], [[0.5]]], [[[2.0]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %mean = torch.literal dense<[0.0, 1.0]> : tensor<2xf32>
  %var = torch.literal dense<[3.0, 0.0]> : tensor<2xf32>
  %lw = torch.literal dense<0.25> : tensor<4x18xf32>
  %c = torch.aten._convolution %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %b = torch.aten.batch_norm %c running_mean(%mean : tensor<2xf32>) running_var(%var : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0 : f64, cudnn_enabled = true} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %a = torch.aten.add.Tensor %b, %x {alpha = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = torch.aten.relu %a : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %d = torch.aten.dropout %r {p = 0.5 : f64, train = false} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %f = torch.aten.flatten.using_ints %d {start_dim = 1 : i64, end_dim = -1 : i64} : (tensor<1x2x3x3xf32>) -> tensor<1x18xf32>
  %l = torch.aten.linear %f, %lw : (tensor<1x18xf32>, tensor<4x18xf32>) -> tensor<1x4xf32>
  %g = torch.aten.gelu %l {approximate = "none"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %g : tensor<1x4xf32>
}
