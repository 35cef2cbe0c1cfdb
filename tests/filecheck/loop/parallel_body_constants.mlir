// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=2}' -t llvm-ir | filecheck %s
// A parallel loop's body is outlined into a function that gets the values it uses through a
// capture struct.  Constants are not captured: they stay constants inside the body, so LLVM
// still strength-reduces a lane division by 3 (the NCHW -> padded-NHWC copy of a 3-channel
// image); a captured divisor arrives as a load and costs one scalar `div` per lane.

builtin.module {
  func.func @forward(%x: tensor<1x3x224x224xf32>) -> tensor<1x8x112x112xf32> {
    %w = torch.literal dense<0.5> : tensor<8x3x3x3xf32>
    %0 = torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x112x112xf32>
    func.return %0 : tensor<1x8x112x112xf32>
  }
}

// CHECK:       define internal void @"zk_conv2d_0.par.body"({float*, float*, i64*, i64}* %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// CHECK-NOT:   define
// CHECK:         udiv <16 x i32> %{{.*}}, <i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3, i32 3>
// CHECK-NOT:   define
// CHECK:         urem <16 x i32> %{{.*}}, <i32 3,
