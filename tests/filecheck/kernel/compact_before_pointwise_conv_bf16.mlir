// REQUIRES: avx512bf16
// RUN: ziggurat-opt %s -p 'widen-half-floats{bf16_kernels=true},convert-fused-to-kernel,kernel-fuse,kernel-layout,convert-kernel-to-loop' | filecheck %s
// A bf16 KxK convolution writes its rows Wq = W + 2 wide (the implicit GEMM computes the
// padded-width columns and drops them).  A 1x1 convolution that reads it needs the pixels back
// to back: they are copied as [N, C, OH, OW], one contiguous vector load per row piece.  Copied
// as the flat [N, C, OH*OW] the GEMM reads, each lane divided its index by OW and gathered:
// ResNet-50 in bf16, 1 thread: its padding and compaction kernels took 0.95 ms, 0.28 ms after.

func.func @forward(%x: tensor<1x4x6x20xbf16>) -> tensor<1x16x6x20xbf16> {
  %w = torch.literal dense<0.125> : tensor<8x4x3x3xbf16>
  %c = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x6x20xbf16>, tensor<8x4x3x3xbf16>) -> tensor<1x8x6x20xbf16>
  %v = torch.literal dense<0.25> : tensor<16x8x1x1xbf16>
  %d = fused.conv2d %c, %v {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x6x20xbf16>, tensor<16x8x1x1xbf16>) -> tensor<1x16x6x20xbf16>
  func.return %d : tensor<1x16x6x20xbf16>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %[[MM:.*]] = loop.alloc : memref<1x8x6x22xbf16>
// CHECK:       loop.gemm @gemm_conv2d_0 {{.*}} c(%[[MM]] : memref<1x8x6x22xbf16>) {{.*}}b_conv = [176 : i64, 22 : i64, 3 : i64, 3 : i64
// CHECK:       %[[COMPACT:.*]] = loop.alloc : memref<1x8x6x20xbf16>
// CHECK:       loop.kernel @conv2d_1 ins(%[[MM]] : memref<1x8x6x22xbf16>) outs(%[[COMPACT]] : memref<1x8x6x20xbf16>)
// CHECK-NOT:   loop.vgather
// CHECK:       loop.vfor %{{.*}}, %{{.*}} = 0 to 20 step 16 {
// CHECK-NEXT:    %[[SRC:.*]] = loop.offset %{{.*}} + 22 * %{{.*}}
// CHECK-NEXT:    loop.vload %{{.*}}[%[[SRC]]]
// CHECK:       loop.gemm @gemm_conv2d_1 a({{.*}} : memref<16x32xbf16>) b(%[[COMPACT]] : memref<1x8x6x20xbf16>) {{.*}}ldb = 120 : i64
