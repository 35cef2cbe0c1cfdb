// RUN: ziggurat-opt %s -p 'widen-half-floats{bf16_kernels=true},convert-fused-to-kernel,kernel-fuse,kernel-layout' | filecheck %s
// A bf16 convolution runs on the bf16 GEMM kernels as W @ im2col(x) per image: it writes
// [N, C, H, W], so its result is contiguous, not channels-last as a float32 one's.  The pool
// that reads it twice is then stored contiguous too (its loads move along the columns); taken
// for channels-last, it was vectorized over the channels with a gather one plane apart per lane
// (ResNet-50's max pool in bf16: 1.1 ms, 0.39 ms after).

func.func @forward(%x: tensor<1x4x6x6xbf16>) -> (tensor<1x8x3x3xbf16>, tensor<1x8x3x3xbf16>) {
  %w = torch.literal dense<0.125> : tensor<8x4x3x3xbf16>
  %c = fused.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x6x6xbf16>, tensor<8x4x3x3xbf16>) -> tensor<1x8x6x6xbf16>
  %p = torch.aten.max_pool2d %c {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x8x6x6xbf16>) -> tensor<1x8x3x3xbf16>
  %s = torch.aten.sigmoid %p : (tensor<1x8x3x3xbf16>) -> tensor<1x8x3x3xbf16>
  %a = torch.aten.mul.Tensor %s, %p : (tensor<1x8x3x3xbf16>, tensor<1x8x3x3xbf16>) -> tensor<1x8x3x3xbf16>
  %n = torch.aten.neg %p : (tensor<1x8x3x3xbf16>) -> tensor<1x8x3x3xbf16>
  func.return %a, %n : tensor<1x8x3x3xbf16>, tensor<1x8x3x3xbf16>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %c = kernel.conv {{.*}}realize = ["written by a library call"], layout = ["contiguous"]}
// CHECK:       %p = kernel.composite {{.*}}family = "pooling", {{.*}}layout = ["contiguous"]}
