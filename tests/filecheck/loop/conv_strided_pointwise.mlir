// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A 1x1 stride-2 convolution over 512 channels takes every second pixel once (one copy
// kernel writing a channels-last [1, 3x4, 512] buffer) and runs the plain GEMM on it; with
// 256 channels it stays an implicit GEMM on the whole (channels-last) input.

builtin.module {
  func.func @deep(%x: tensor<1x512x5x7xf32>) -> tensor<1x8x3x4xf32> {
    %w = torch.literal dense<0.5> : tensor<8x512x1x1xf32>
    %0 = torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x512x5x7xf32>, tensor<8x512x1x1xf32>) -> tensor<1x8x3x4xf32>
    func.return %0 : tensor<1x8x3x4xf32>
  }
  func.func @shallow(%x: tensor<1x256x5x7xf32>) -> tensor<1x8x3x4xf32> {
    %w = torch.literal dense<0.5> : tensor<8x256x1x1xf32>
    %0 = torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x256x5x7xf32>, tensor<8x256x1x1xf32>) -> tensor<1x8x3x4xf32>
    func.return %0 : tensor<1x8x3x4xf32>
  }
}

// CHECK-LABEL: func.func @deep
// CHECK:         loop.kernel @{{.*}} ins(%x : memref<1x512x5x7xf32>) outs(%[[SUB:.*]] : memref<1x12x512xf32>)
// CHECK:         loop.gemm @gemm_conv2d_0 a(%[[SUB]] : memref<1x12x512xf32>)
// CHECK-SAME:      spec {m = 12 : i64, n = 8 : i64, k = 512 : i64, lda = 512 : i64
// CHECK-NOT:       kernel = "igemm"
// CHECK-LABEL: func.func @shallow
// CHECK:         loop.kernel @{{.*}} ins(%x : memref<1x256x5x7xf32>) outs(%[[NHWC:.*]] : memref<1x5x7x256xf32>)
// CHECK:         loop.gemm @igemm_conv2d_0 a(%[[NHWC]] : memref<1x5x7x256xf32>)
// CHECK-SAME:      kernel = "igemm"{{.*}}sh = 2 : i64, sw = 2 : i64
