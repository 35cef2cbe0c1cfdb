// REQUIRES: avx512bf16
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A bf16 convolution of a small image computes pixel rows: out^T[N*OH*OW, Cout] = im2col(x) @ W^T.
// As channel rows a 7x7 image would use 49 of the 64 lanes of its two 32-pixel panels (and an
// implicit GEMM's columns run to the padded width).  The im2col rows are copied once; W^T is
// packed like a linear layer's weight (KN32n2k); the bias is one per column.  The NCHW input is
// copied channels-last first, so the rows are (tap, channel) with each tap's channels contiguous
// (in (channel, tap) order a pixel's rows were vectors of 3 lanes).  The second
// convolution reads the first's channels-last result with each tap's channels contiguous (K as
// tap, channel); only the last result is transposed back to NCHW.

func.func @forward(%x: tensor<1x16x7x7xbf16>) -> tensor<1x32x7x7xbf16> {
  %w = torch.literal dense<0.125> : tensor<32x16x3x3xbf16>
  %b = torch.literal dense<0.5> : tensor<32xbf16>
  %c = fused.conv2d %x, %w bias(%b : tensor<32xbf16>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x7x7xbf16>, tensor<32x16x3x3xbf16>) -> tensor<1x32x7x7xbf16>
  %w2 = torch.literal dense<0.25> : tensor<32x32x3x3xbf16>
  %d = fused.conv2d %c, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x32x7x7xbf16>, tensor<32x32x3x3xbf16>) -> tensor<1x32x7x7xbf16>
  func.return %d : tensor<1x32x7x7xbf16>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %[[CL:.*]] = loop.alloc : memref<1x7x7x16xbf16>
// CHECK-NEXT:  loop.kernel @conv2d_0 ins(%x : memref<1x16x7x7xbf16>) outs(%[[CL]] : memref<1x7x7x16xbf16>)
// The copy reads 3 tiles of 16 pixels as 16 contiguous rows transposed in registers, then the last pixel:
// CHECK:         loop.for %{{.*}} = 0 to 3 step 1 {
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 16 step 1 {
// CHECK:         loop.for %{{.*}} = 0 to 1 step 1 {
// CHECK:           loop.offset 49 * %{{.*}} + %{{.*}} + 48
// CHECK:       %[[COLS:.*]] = loop.alloc : memref<1x7x7x3x3x16xbf16>
// CHECK-NEXT:  loop.kernel @conv2d_1 ins(%[[CL]] : memref<1x7x7x16xbf16>) outs(%[[COLS]] : memref<1x7x7x3x3x16xbf16>)
// CHECK:       %[[MM:.*]] = loop.alloc : memref<49x32xbf16>
// CHECK-NEXT:  loop.gemm @gemm_conv2d_0 a(%[[COLS]] : memref<1x7x7x3x3x16xbf16>) b(%w_KN32n2k : memref<5120xbf16>) c(%[[MM]] : memref<49x32xbf16>) bias(%{{.*}} : memref<32xf32>) spec {{{.*}}m = 49 : i64, n = 32 : i64, k = 144 : i64
// CHECK-NOT:   b_conv
// CHECK:       %[[COLS2:.*]] = loop.alloc : memref<1x7x7x3x3x32xbf16>
// CHECK-NEXT:  loop.kernel @conv2d_2 ins(%[[MM]] : memref<49x32xbf16>) outs(%[[COLS2]] : memref<1x7x7x3x3x32xbf16>)
// CHECK:       %[[MM2:.*]] = loop.alloc : memref<49x32xbf16>
// CHECK-NEXT:  loop.gemm @gemm_conv2d_1 a(%[[COLS2]] : memref<1x7x7x3x3x32xbf16>) b(%w2_KN32n2k : memref<9216xbf16>) c(%[[MM2]] : memref<49x32xbf16>) spec {{{.*}}m = 49 : i64, n = 32 : i64, k = 288 : i64
// CHECK:       %[[OUT:.*]] = loop.alloc : memref<1x32x7x7xbf16>
// CHECK-NEXT:  loop.kernel @conv2d_3 ins(%[[MM2]] : memref<49x32xbf16>) outs(%[[OUT]] : memref<1x32x7x7xbf16>)
