// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512},torch-canonicalize' --print-between-passes | filecheck %s

// graph-opt runs a pipeline of passes: --print-between-passes shows the IR after each of
// them, named graph-opt/<pass>, then after prepack-weights; the IR after the last pass is
// the output.
// CHECK:      IR after graph-opt/torch-canonicalize:
// CHECK:        torch.aten.conv2d
// CHECK:      IR after graph-opt/decompose-torch-ops:
// CHECK:      IR after graph-opt/decompose-rnn:
// CHECK:      IR after graph-opt/decompose-quantize:
// CHECK:        torch.aten.batch_norm
// CHECK:      IR after graph-opt/fold-batchnorm:
// CHECK-NOT:    torch.aten.batch_norm
// CHECK:        torch.aten.relu
// CHECK:      IR after graph-opt/constant-fold:
// CHECK:      IR after graph-opt/fold-batchnorm:
// CHECK:      IR after graph-opt/fuse-post-ops:
// CHECK-NOT:    torch.aten.relu
// CHECK:        fused.conv2d
// CHECK-NOT:    weight_layout
// CHECK:      IR after graph-opt/fuse-sibling-linears:
// CHECK-NOT:    weight_layout
// CHECK:      IR after graph-opt/torch-canonicalize:
// CHECK-NOT:    weight_layout
// CHECK:      IR after prepack-weights:
// CHECK:        weight_layout = "KN32n"
// CHECK-NOT:  IR after
// CHECK:      builtin.module
// CHECK:        fused.linear
func.func @forward(%x: tensor<1x2x3x3xf32>) -> tensor<1x4xf32> {
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
