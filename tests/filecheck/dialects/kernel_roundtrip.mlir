// RUN: ziggurat-opt %s | filecheck %s
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// Every kernel op and both spec attributes print as they parse.

builtin.module {
  func.func @forward(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %a: tensor<5x16xf32>, %b: tensor<16x4xf32>, %i: tensor<2xi64>) -> tensor<1x8x10x10xf32> {
    %0 = kernel.conv ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) {spec = #kernel.conv<n = 1, c = 3, h = 10, w = 10, o = 8, kh = 3, kw = 3, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1, oh = 10, ow = 10, weight = "OIhw">, realize = ["graph output"], layout = ["channels_last"], isa = "avx512"} -> tensor<1x8x10x10xf32> {
    ^bb0(%x1: tensor<1x3x10x10xf32>, %w1: tensor<8x3x3x3xf32>):
      %c = fused.conv2d %x1, %w1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32>
      kernel.yield %c : tensor<1x8x10x10xf32>
    }
    %1 = kernel.gemm ins(%a, %b : tensor<5x16xf32>, tensor<16x4xf32>) {spec = #kernel.gemm<batch = 1, m = 5, n = 4, k = 16, b = "KN">} -> tensor<5x4xf32> {
    ^bb0(%a1: tensor<5x16xf32>, %b1: tensor<16x4xf32>):
      %m = torch.aten.mm %a1, %b1 : (tensor<5x16xf32>, tensor<16x4xf32>) -> tensor<5x4xf32>
      kernel.yield %m : tensor<5x4xf32>
    }
    %2 = kernel.scan ins(%1 : tensor<5x4xf32>) {dim = 1 : i64} -> tensor<5x4xf32> {
    ^bb0(%s1: tensor<5x4xf32>):
      %s = torch.aten.cumsum %s1 {dim = 1 : i64} : (tensor<5x4xf32>) -> tensor<5x4xf32>
      kernel.yield %s : tensor<5x4xf32>
    }
    %3 = kernel.gather ins(%2, %i : tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32> {
    ^bb0(%g1: tensor<5x4xf32>, %g2: tensor<2xi64>):
      %g = torch.aten.index_select %g1, %g2 {dim = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
      kernel.yield %g : tensor<2x4xf32>
    }
    %4 = kernel.composite ins(%3 : tensor<2x4xf32>) {family = "normalization", window = 4 : i64} -> tensor<2x4xf32> {
    ^bb0(%n1: tensor<2x4xf32>):
      %n = torch.aten.softmax.int %n1 {dim = -1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
      kernel.yield %n : tensor<2x4xf32>
    }
    %5 = kernel.reduction ins(%4 : tensor<2x4xf32>) {window = 4 : i64} -> tensor<2xf32> {
    ^bb0(%r1: tensor<2x4xf32>):
      %r = torch.aten.amax %r1 {dim = array<i64: 1>, keepdim = false} : (tensor<2x4xf32>) -> tensor<2xf32>
      kernel.yield %r : tensor<2xf32>
    }
    %6 = kernel.pointwise ins(%5 : tensor<2xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], realize = [""]} -> tensor<2xf32> {
    ^bb0(%p1: tensor<2xf32>):
      %p = torch.aten.relu %p1 : (tensor<2xf32>) -> tensor<2xf32>
      kernel.yield %p : tensor<2xf32>
    }
    %7 = kernel.fallback ins() {reason = "no native lowering"} -> tensor<2x3xf32> {
      %z = torch.aten.zeros {size = array<i64: 2, 3>} : tensor<2x3xf32>
      kernel.yield %z : tensor<2x3xf32>
    }
    func.return %0 : tensor<1x8x10x10xf32>
  }
}

// CHECK:      %0 = kernel.conv ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) {spec = #kernel.conv<n = 1, c = 3, h = 10, w = 10, o = 8, kh = 3, kw = 3, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1, oh = 10, ow = 10, weight = "OIhw">, realize = ["graph output"], layout = ["channels_last"], isa = "avx512"} -> tensor<1x8x10x10xf32> {
// CHECK-NEXT: ^bb0(%x1: tensor<1x3x10x10xf32>, %w1: tensor<8x3x3x3xf32>):
// CHECK-NEXT:   %c = fused.conv2d %x1, %w1
// CHECK-NEXT:   kernel.yield %c : tensor<1x8x10x10xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %1 = kernel.gemm ins(%a, %b : tensor<5x16xf32>, tensor<16x4xf32>) {spec = #kernel.gemm<batch = 1, m = 5, n = 4, k = 16, b = "KN">} -> tensor<5x4xf32> {
// CHECK:      %2 = kernel.scan ins(%1 : tensor<5x4xf32>) {dim = 1 : i64} -> tensor<5x4xf32> {
// CHECK:      %3 = kernel.gather ins(%2, %i : tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32> {
// CHECK:      %4 = kernel.composite ins(%3 : tensor<2x4xf32>) {family = "normalization", window = 4 : i64} -> tensor<2x4xf32> {
// CHECK:      %5 = kernel.reduction ins(%4 : tensor<2x4xf32>) {window = 4 : i64} -> tensor<2xf32> {
// CHECK:      %6 = kernel.pointwise ins(%5 : tensor<2xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], realize = [""]} -> tensor<2xf32> {
// CHECK:      %7 = kernel.fallback ins() {reason = "no native lowering"} -> tensor<2x3xf32> {
// CHECK-NEXT:   %z = torch.aten.zeros
