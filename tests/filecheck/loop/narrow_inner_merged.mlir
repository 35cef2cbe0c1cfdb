// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// An output whose innermost dim is narrower than a quarter vector (a 3-channel image made
// channels-last) has that dim merged with the one around it although the read is not affine in
// the merged variable: 16-lane gathers whose lanes take `m // 3` and `m % 3`, not a 3-lane
// vector per pixel.  A contiguous operand is one vector load of the merged variable.

builtin.module {
  func.func @forward(%x: tensor<3x8x16xf32>, %y: tensor<128x3xf32>, %b: tensor<3xf32>) -> (tensor<8x16x3xf32>, tensor<128x3xf32>) {
    %0 = torch.aten.permute %x {dims = array<i64: 1, 2, 0>} : (tensor<3x8x16xf32>) -> tensor<8x16x3xf32>
    %1 = torch.aten.add.Tensor %y, %b {alpha = 1 : i64} : (tensor<128x3xf32>, tensor<3xf32>) -> tensor<128x3xf32>
    func.return %0, %1 : tensor<8x16x3xf32>, tensor<128x3xf32>
  }
}

// CHECK:        loop.kernel @{{.*}}permute{{.*}} ins(%x : memref<3x8x16xf32>)
// CHECK:          loop.vfor %i0, %lanes = 0 to 384 step 16 {
// CHECK:            arith.divui %{{.*}} : vector<16xi32>
// CHECK:            arith.remui %{{.*}} : vector<16xi32>
// CHECK:            loop.vgather %x_1[%{{.*}}] : memref<3x8x16xf32>, vector<16xi64> -> vector<16xf32>
// CHECK:            loop.vstore %{{.*}}, %out[%{{.*}}] : vector<16xf32>, memref<8x16x3xf32>
// CHECK:        loop.kernel @{{.*}}add{{.*}} ins(%y, %b : memref<128x3xf32>, memref<3xf32>)
// CHECK:          loop.vfor %i0, %lanes = 0 to 384 step 16 {
// CHECK:            loop.vload %y_1[%i0] : memref<128x3xf32> -> vector<16xf32>
// CHECK:            loop.vgather %b_1[%{{.*}}] : memref<3xf32>, vector<16xi64> -> vector<16xf32>
