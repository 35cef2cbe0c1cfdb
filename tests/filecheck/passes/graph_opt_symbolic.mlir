// RUN: ziggurat-opt %s -p graph-opt,annotate-symbolic-shapes | filecheck %s
// graph-opt on a dynamic-shape level: fusions and batch-norm folding apply to ? sizes that are
// declared symbols. A residual joins its GEMM when the symbolic analysis shows it broadcasts to
// the GEMM's sizes (batch x 3, or 1 x 3), as static sizes are compared on a static level.

// CHECK-LABEL: func.func @residual
// CHECK:         %{{.*}} = fused.linear %x, %w bias(%b : tensor<3xf32>) other(%r : tensor<?x3xf32>) {ziggurat.shapes = ["batch x 3"], post_ops = [#fused.binary<add, 1.0>, #fused.unary<relu>]}
func.func @residual(%x: tensor<?x4xf32>, %r: tensor<?x3xf32>) -> tensor<?x3xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22], [1, \22r\22, 0, \22batch\22]]}"} {
  %w = torch.literal dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 0.0, 1.0, 0.0]]> : tensor<3x4xf32>
  %b = torch.literal dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = torch.aten.linear %x, %w bias(%b) : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = torch.aten.add.Tensor %0, %r {alpha = 1 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = torch.aten.relu %1 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %2 : tensor<?x3xf32>
}

// A residual that broadcasts over the batch (1 x 3) joins too.
// CHECK-LABEL: func.func @broadcast_residual
// CHECK:         fused.linear %x, %w bias(%b : tensor<3xf32>) other(%r : tensor<1x3xf32>) {ziggurat.shapes = ["batch x 3"], post_ops = [#fused.binary<sub, 2.0>]}
func.func @broadcast_residual(%x: tensor<?x4xf32>, %r: tensor<1x3xf32>) -> tensor<?x3xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %w = torch.literal dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 0.0, 1.0, 0.0]]> : tensor<3x4xf32>
  %b = torch.literal dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = torch.aten.linear %x, %w bias(%b) : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = torch.aten.sub.Tensor %0, %r {alpha = 2 : i64} : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  func.return %1 : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @conv_bn
// CHECK:         fused.conv2d %x, %{{.*}}bn bias(%{{.*}}bn : tensor<2xf32>) {ziggurat.shapes = ["batch x 2 x 3 x 3"], {{.*}} post_ops = [#fused.unary<relu>]}
// CHECK-NOT:     batch_norm
func.func @conv_bn(%x: tensor<?x1x3x3xf32>) -> tensor<?x2x3x3xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %w = torch.literal dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %m = torch.literal dense<[0.5, -0.5]> : tensor<2xf32>
  %v = torch.literal dense<[4.0, 0.25]> : tensor<2xf32>
  %0 = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<?x2x3x3xf32>
  %1 = torch.aten.batch_norm %0 running_mean(%m : tensor<2xf32>) running_var(%v : tensor<2xf32>) {training = false, momentum = 0.1 : f64, eps = 1.0e-05 : f64, cudnn_enabled = false} : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
  %2 = torch.aten.relu %1 : (tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
  func.return %2 : tensor<?x2x3x3xf32>
}
