// RUN: ziggurat-opt %s -p 'convert-fused-to-kernel,kernel-fuse,kernel-layout' | filecheck %s
// kernel-layout gives each kernel result the order it is stored in.  The convolution writes
// channels-last; the pool that reads it, realized because two ops read it, is stored
// channels-last too (its loads move by one element per channel).  exp(x), realized for the
// same reason, reads the contiguous graph input and stays contiguous.  A result the kernel
// does not store (a graph output written straight to the caller's buffer) has no layout ("").

func.func @forward(%x: tensor<1x4x6x6xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x4x6x6xf32>) {
  %w = torch.literal dense<0.125> : tensor<8x4x3x3xf32>
  %bias = torch.literal dense<0.5> : tensor<8xf32>
  %c = fused.conv2d %x, %w bias(%bias : tensor<8xf32>) {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %p = torch.aten.max_pool2d %c {kernel_size = array<i64: 2, 2>, stride = array<i64>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
  %s = torch.aten.sigmoid %p : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %a = torch.aten.mul.Tensor %s, %p : (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %e = torch.aten.exp %x : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %sum = torch.aten.sum %e : (tensor<1x4x6x6xf32>) -> tensor<f32>
  %b = torch.aten.mul.Tensor %e, %sum : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %v = torch.aten.permute %a {dims = array<i64: 0, 2, 3, 1>} : (tensor<1x8x3x3xf32>) -> tensor<1x3x3x8xf32>
  %t = torch.aten.tanh %v : (tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  func.return %t, %b : tensor<1x3x3x8xf32>, tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @forward
// CHECK:       %c = kernel.conv {{.*}}realize = ["written by a library call"], layout = ["channels_last"]}
// CHECK:       %p = kernel.composite {{.*}}family = "pooling", {{.*}}realize = ["read twice"], layout = ["channels_last"]}
// CHECK:       %e = kernel.pointwise {{.*}}realize = ["read twice"], layout = ["contiguous"]}
// CHECK:       %b = kernel.reduction {{.*}}realize = ["graph output"], layout = [""]}
// CHECK:       %t = kernel.pointwise {{.*}}realize = ["graph output"], layout = [""]}
