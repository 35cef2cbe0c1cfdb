// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512},torch-canonicalize' --time-passes -o %t 2>&1 | filecheck %s
// RUN: filecheck %s --check-prefix=IR < %t
// RUN: ziggurat-opt %s -p 'graph-opt,prepack-weights{isa=avx512}' --time-passes 2>/dev/null | filecheck %s --check-prefix=IR

// --time-passes prints a table on stderr: one row per pass, graph-opt's passes indented under
// it (its row is their sum), the verifier's runs, the total. The IR goes to the output alone.
// CHECK:      ... Pass execution timing report ...
// CHECK:        Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK:        ----Wall Time----  ----Name----
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}  graph-opt
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)}}    torch-canonicalize
// CHECK-NEXT:   {{.*%\)}}    decompose-torch-ops
// CHECK-NEXT:   {{.*%\)}}    decompose-rnn
// CHECK-NEXT:   {{.*%\)}}    decompose-quantize
// CHECK-NEXT:   {{.*%\)}}    fold-batchnorm
// CHECK-NEXT:   {{.*%\)}}    constant-fold
// CHECK-NEXT:   {{.*%\)}}    fold-batchnorm
// CHECK-NEXT:   {{.*%\)}}    fuse-post-ops
// CHECK-NEXT:   {{.*%\)}}    fuse-sibling-linears
// CHECK-NEXT:   {{.*%\)}}    torch-canonicalize
// CHECK-NEXT:   {{.*%\)}}  prepack-weights
// CHECK-NEXT:   {{.*%\)}}  torch-canonicalize
// CHECK-NEXT:   {{.*%\)}}  (verifier)
// CHECK-NEXT:   {{ *[0-9]+\.[0-9]+}} (100.0%)  Total
// CHECK-NOT:    builtin.module

// IR:         builtin.module
// IR:           fused.conv2d
// IR-NOT:       Wall Time
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
