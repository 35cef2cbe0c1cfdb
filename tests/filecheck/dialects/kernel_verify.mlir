// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// The kernel ops check their specs against their types, their bodies against their inputs
// and results, and their decisions' shape.

func.func @gemm_wrong_size(%a: tensor<5x16xf32>, %b: tensor<16x4xf32>) -> tensor<5x4xf32> {
  %0 = kernel.gemm ins(%a, %b : tensor<5x16xf32>, tensor<16x4xf32>) {spec = #kernel.gemm<batch = 1, m = 5, n = 8, k = 16, b = "KN">} -> tensor<5x4xf32> {
  ^bb0(%a1: tensor<5x16xf32>, %b1: tensor<16x4xf32>):
    %m = torch.aten.mm %a1, %b1 : (tensor<5x16xf32>, tensor<16x4xf32>) -> tensor<5x4xf32>
    kernel.yield %m : tensor<5x4xf32>
  }
  func.return %0 : tensor<5x4xf32>
}
// CHECK: kernel.gemm: the result [5, 4] does not hold batch x m x n = 1 x 5 x 8 elements

// -----
func.func @gemm_layout(%a: tensor<5x16xf32>, %b: tensor<16x4xf32>) -> tensor<5x4xf32> {
  %0 = kernel.gemm ins(%a, %b : tensor<5x16xf32>, tensor<16x4xf32>) {spec = #kernel.gemm<batch = 1, m = 5, n = 4, k = 16, b = "MN">} -> tensor<5x4xf32> {
  ^bb0(%a1: tensor<5x16xf32>, %b1: tensor<16x4xf32>):
    %m = torch.aten.mm %a1, %b1 : (tensor<5x16xf32>, tensor<16x4xf32>) -> tensor<5x4xf32>
    kernel.yield %m : tensor<5x4xf32>
  }
  func.return %0 : tensor<5x4xf32>
}
// CHECK: kernel.gemm: unknown B layout 'MN'; known: KN, NK, KN{nr}n

// -----
func.func @conv_output_size(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32> {
  %0 = kernel.conv ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) {spec = #kernel.conv<n = 1, c = 3, h = 10, w = 10, o = 8, kh = 3, kw = 3, stride = [1, 1], padding = [0, 0], dilation = [1, 1], groups = 1, oh = 10, ow = 10, weight = "OIhw">} -> tensor<1x8x10x10xf32> {
  ^bb0(%x1: tensor<1x3x10x10xf32>, %w1: tensor<8x3x3x3xf32>):
    %c = fused.conv2d %x1, %w1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32>
    kernel.yield %c : tensor<1x8x10x10xf32>
  }
  func.return %0 : tensor<1x8x10x10xf32>
}
// CHECK: kernel.conv: output h = 10, but stride 1, padding 0, dilation 1 and a 3-tap kernel over 10 give 8

// -----
func.func @conv_groups(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32> {
  %0 = kernel.conv ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) {spec = #kernel.conv<n = 1, c = 3, h = 10, w = 10, o = 8, kh = 3, kw = 3, stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 2, oh = 10, ow = 10, weight = "OIhw">} -> tensor<1x8x10x10xf32> {
  ^bb0(%x1: tensor<1x3x10x10xf32>, %w1: tensor<8x3x3x3xf32>):
    %c = fused.conv2d %x1, %w1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x10x10xf32>
    kernel.yield %c : tensor<1x8x10x10xf32>
  }
  func.return %0 : tensor<1x8x10x10xf32>
}
// CHECK: kernel.conv: groups = 2 does not divide c = 3 and o = 8

// -----
func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.pointwise ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x1: tensor<4xf32>):
    %s = torch.aten.sum %x1 : (tensor<4xf32>) -> tensor<f32>
    kernel.yield %s : tensor<f32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: kernel.pointwise: kernel.yield gives (tensor<f32>), the op returns (tensor<4xf32>)

// -----
func.func @maps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.pointwise ins(%x : tensor<4x8xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]} -> tensor<4x8xf32> {
  ^bb0(%x1: tensor<4x8xf32>):
    %r = torch.aten.relu %x1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    kernel.yield %r : tensor<4x8xf32>
  }
  func.return %0 : tensor<4x8xf32>
}
// CHECK: kernel.pointwise: indexing map 0 is (d0) -> (d0), which maps 1 loops to 1 indices; operand 0 needs 2 to 2

// -----
func.func @realize_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.pointwise ins(%x : tensor<4xf32>) {realize = ["graph output", "read twice"]} -> tensor<4xf32> {
  ^bb0(%x1: tensor<4xf32>):
    %r = torch.aten.relu %x1 : (tensor<4xf32>) -> tensor<4xf32>
    kernel.yield %r : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: kernel.pointwise: realize has 2 entries for 1 results

// -----
func.func @gather_indices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.gather ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x1: tensor<4xf32>):
    kernel.yield %x1 : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: kernel.gather: no input holds integer indices

// -----
func.func @captured(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.pointwise ins() -> tensor<4xf32> {
    %r = torch.aten.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    kernel.yield %r : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: Operation using value defined out of its IsolatedFromAbove parent

// -----
func.func @layout_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.pointwise ins(%x : tensor<4xf32>) {layout = ["contiguous", "contiguous"]} -> tensor<4xf32> {
  ^bb0(%x1: tensor<4xf32>):
    %r = torch.aten.relu %x1 : (tensor<4xf32>) -> tensor<4xf32>
    kernel.yield %r : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: kernel.pointwise: layout has 2 entries for 1 results

// -----
func.func @layout_unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.pointwise ins(%x : tensor<4xf32>) {layout = ["nhwc"]} -> tensor<4xf32> {
  ^bb0(%x1: tensor<4xf32>):
    %r = torch.aten.relu %x1 : (tensor<4xf32>) -> tensor<4xf32>
    kernel.yield %r : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
// CHECK: kernel.pointwise: unknown layout 'nhwc'; known: 'contiguous', 'channels_last', ''
