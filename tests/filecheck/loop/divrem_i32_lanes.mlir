// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A lane index divided by a constant that is not a multiple of the vector width (a
// 3-channel NCHW image copied to padded channels-last for the stem convolution: output
// column j reads channel j % 3 of pixel j // 3) is divided in i32 lanes, since x86 has no
// vector 64-bit multiply-high and an i64 division by 3 becomes 16 scalar multiplies.

builtin.module {
  func.func @forward(%x: tensor<1x3x9x10xf32>) -> tensor<1x8x5x5xf32> {
    %w = torch.literal dense<0.5> : tensor<8x3x3x3xf32>
    %0 = torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x9x10xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x5x5xf32>
    func.return %0 : tensor<1x8x5x5xf32>
  }
}

// CHECK:       loop.kernel @conv2d_0 ins(%x : memref<1x3x9x10xf32>) outs(%{{.*}} : memref<1x11x36xf32>)
// CHECK:         loop.vfor %{{.*}}, %{{.*}} = 0 to 36 step 16 {
// CHECK:           %[[J:.*]] = loop.vindex
// CHECK-NEXT:      %[[J32:.*]] = loop.cast "trunci" %[[J]] : vector<16xi64> -> vector<16xi32>
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[J32]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:      %{{.*}} = loop.cast "extui" %[[Q]] : vector<16xi32> -> vector<16xi64>
// CHECK:           %[[R:.*]] = arith.remui %[[J32]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:      %{{.*}} = loop.cast "extui" %[[R]] : vector<16xi32> -> vector<16xi64>
// CHECK-NOT:       arith.divui %{{.*}} : vector<16xi64>
// CHECK:           loop.vgather %x_1
// CHECK:       loop.gemm @igemm_conv2d_0
