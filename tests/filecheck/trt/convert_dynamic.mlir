// RUN: ziggurat-opt %s -p 'graph-opt,convert-torch-to-trt{min_block_size=1}' --split-input-file | filecheck %s
// A function with shape symbols converts with its ? dims: the layers whose rules are modelled on
// dynamic dims keep them, each segment carries its optimization profile (each input's sizes at
// the ranges' lows, a point inside and the highs, from its size expressions), and an op whose
// converter would compute with a run-time size as a number stays in torch, saying so.

// CHECK-LABEL: func.func @mlp
// CHECK:         func.call @mlp_trt_0(%x) : (tensor<?x4xf32>) -> tensor<?x3xf32>
// CHECK-LABEL: func.func private @mlp_trt_0
// CHECK-SAME:    ziggurat.trt_profile = [{min = array<i64: 1, 4>, opt = array<i64: {{[0-9]+}}, 4>, max = array<i64: 64, 4>}]
// CHECK:         trt.matrix_multiply %x kNONE, %{{.*}} kTRANSPOSE {{.*}} : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
// CHECK:         trt.elementwise kSUM {{.*}} : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
// CHECK:         trt.activation kRELU {{.*}} : tensor<?x3xf32> -> tensor<?x3xf32>
// CHECK:         trt.softmax {{.*}} : tensor<?x3xf32> -> tensor<?x3xf32>
func.func @mlp(%x: tensor<?x4xf32>) -> tensor<?x3xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %w = torch.literal dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 0.0, 1.0, 0.0]]> : tensor<3x4xf32>
  %b = torch.literal dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = torch.aten.linear %x, %w bias(%b) : (tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = torch.aten.relu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = torch.aten.softmax.int %1 {dim = -1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %2 : tensor<?x3xf32>
}

// -----

// A derived size: the profile of a segment input evaluates its expression (2*batch).
// The variance over the dynamic dim divides by its size, which the converter would read as a
// number: it stays in torch with the reason.
// CHECK-LABEL: func.func @derived
// CHECK-SAME:    ziggurat.trt_fallback = [{op = "aten::var.correction", reason = "converter {{.*}} failed: the converter reads the sizes of tensor<?x4xf32> as numbers, and a dynamic dim is known only at run time"
// CHECK:         %[[C:.*]] = func.call @derived_trt_{{[0-9_]+}}(%x, %y)
// CHECK:         torch.aten.var.correction
// CHECK-LABEL: func.func private @derived_trt_{{[0-9_]+}}
// CHECK-SAME:    ziggurat.trt_profile = [{min = array<i64: 1, 4>, opt = array<i64: {{[0-9]+}}, 4>, max = array<i64: 8, 4>}, {min = array<i64: 2, 4>, opt = array<i64: {{[0-9]+}}, 4>, max = array<i64: 16, 4>}]
// CHECK:         trt.concatenation {{.*}} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @derived(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>) attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 8]], \22dims\22: [[0, \22x\22, 0, \22batch\22], [1, \22y\22, 0, \222*batch\22]]}"} {
  %0 = torch.aten.cat [%x, %y] {dim = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = torch.aten.tanh %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = torch.aten.var.correction %1 {dim = array<i64: 0>, keepdim = false} : (tensor<?x4xf32>) -> tensor<4xf32>
  func.return %1, %2 : tensor<?x4xf32>, tensor<4xf32>
}
