// REQUIRES: avx512bf16
// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// A bf16 1x1 convolution of channels-last values (here a cast of a permuted NHWC tensor; in a
// model, the float32 depthwise kernel's result) computes pixel rows, whatever its output
// channel count (24 here): the rows are the cast itself, read and written contiguously
// (vload/vstore, no gather), and the result stays channels-last ([pixels, Cout]).  Channel rows
// would first copy the image to NCHW, a transposing gather per element.

func.func @forward(%x: tensor<1x9x9x48xf32>) -> tensor<1x24x9x9xbf16> {
  %p = torch.aten.permute %x {dims = array<i64: 0, 3, 1, 2>} : (tensor<1x9x9x48xf32>) -> tensor<1x48x9x9xf32>
  %h = torch.aten._to_copy %p {dtype = bf16, non_blocking = false} : (tensor<1x48x9x9xf32>) -> tensor<1x48x9x9xbf16>
  %w = torch.literal dense<0.125> : tensor<24x48x1x1xbf16>
  %b = torch.literal dense<0.5> : tensor<24xbf16>
  %c = fused.conv2d %h, %w bias(%b : tensor<24xbf16>) {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x48x9x9xbf16>, tensor<24x48x1x1xbf16>) -> tensor<1x24x9x9xbf16>
  func.return %c : tensor<1x24x9x9xbf16>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %[[ROWS:.*]] = loop.alloc : memref<1x9x9x48x1x1xbf16>
// CHECK-NEXT:  loop.kernel @{{.*}} ins(%x : memref<1x9x9x48xf32>) outs(%[[ROWS]] : memref<1x9x9x48x1x1xbf16>)
// CHECK-NOT:   loop.vgather
// CHECK:       loop.vload %{{.*}} : memref<1x9x9x48xf32> -> vector<16xf32>
// CHECK-NOT:   loop.vgather
// CHECK:       loop.vstore %{{.*}} : vector<16xbf16>, memref<1x9x9x48x1x1xbf16>
// CHECK:       %[[MM:.*]] = loop.alloc : memref<81x24xbf16>
// CHECK-NEXT:  loop.gemm @gemm_conv2d_0 a(%[[ROWS]] : memref<1x9x9x48x1x1xbf16>) b(%w_KN32n2k : memref<2048xbf16>) c(%[[MM]] : memref<81x24xbf16>) bias(%{{.*}} : memref<24xf32>) spec {{{.*}}m = 81 : i64, n = 24 : i64, k = 48 : i64
// CHECK-NOT:   compact
