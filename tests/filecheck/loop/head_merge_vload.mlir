// RUN: ziggurat-opt %s --split-input-file -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// Attention's head merge [heads, seq, dh] -> [seq, heads * dh] reads x[j // dh, i, j % dh]
// along j.  With 16 | dh a vector of 16 lanes stays inside one head, so the quotient is
// uniform and the remainder moves by one: a plain vector load, not a gather.

builtin.module {
  func.func @forward(%x: tensor<12x8x64xf32>) -> tensor<8x768xf32> {
    %0 = torch.aten.transpose.int %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<12x8x64xf32>) -> tensor<8x12x64xf32>
    %1 = torch.aten.view %0 {size = array<i64: 8, 768>} : (tensor<8x12x64xf32>) -> tensor<8x768xf32>
    func.return %1 : tensor<8x768xf32>
  }
}

// CHECK:        loop.vfor %i1, %lanes = 0 to 768 step 16 {
// CHECK-NEXT:     %[[Q:.*]] = arith.divui %i1, %{{.*}} : index
// CHECK-NEXT:     %[[R:.*]] = arith.remui %i1, %{{.*}} : index
// CHECK-NEXT:     %[[OFF:.*]] = loop.offset 64 * %i0 + 512 * %[[Q]] + %[[R]]
// CHECK-NEXT:     %{{.*}} = loop.vload %x_1[%[[OFF]]] : memref<12x8x64xf32> -> vector<16xf32>
// CHECK-NOT:      loop.vgather

// -----

// dh = 8 < 16: a vector spans two heads, so the load stays a gather.

builtin.module {
  func.func @forward(%x: tensor<4x8x8xf32>) -> tensor<8x32xf32> {
    %0 = torch.aten.transpose.int %x {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<4x8x8xf32>) -> tensor<8x4x8xf32>
    %1 = torch.aten.view %0 {size = array<i64: 8, 32>} : (tensor<8x4x8xf32>) -> tensor<8x32xf32>
    func.return %1 : tensor<8x32xf32>
  }
}

// CHECK:        loop.vfor %i1, %lanes = 0 to 32 step 16 {
// CHECK:          loop.vgather %x_1[%{{.*}}] : memref<4x8x8xf32>, vector<16xi64> -> vector<16xf32>
