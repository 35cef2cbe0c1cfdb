// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// softmax over the last dim is ONE kernel: per row a vector max loop, a vector sum-of-exp
// loop (each with a horizontal reduce), one divide for the row's reciprocal sum, then the
// output loop multiplying by it.  The row max is only a shift (a NaN element makes the exp
// sum NaN anyway), so it is a NaN-skipping compare+select (one vmaxps) reduced by
// "max_nonan", not the NaN-propagating arith.maximumf.

builtin.module {
  func.func @forward(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
    %0 = torch.aten.softmax.int %x {dim = -1 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
    func.return %0 : tensor<8x100xf32>
  }
}

// CHECK:          loop.kernel @softmax_0 ins(%x : memref<8x100xf32>) outs(%{{.*}} : memref<8x100xf32>) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "softmax"}
// CHECK:            loop.for %i0 = 0 to 8 step 1 {
// CHECK-NEXT:         %[[MAXV:.*]] = loop.vfor %r0, %lanes = 0 to 100 step 16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>) {
// CHECK-NOT:            arith.maximumf
// CHECK:                %[[GT:.*]] = loop.cmp "ogt"
// CHECK-NEXT:           %[[PICK:.*]] = loop.select %[[GT]]
// CHECK-NEXT:           loop.yield %[[PICK]] : vector<16xf32>
// CHECK:              %[[MAX:.*]] = loop.reduce "max_nonan" %[[MAXV]] : vector<16xf32> -> f32
// CHECK:              %[[SUMV:.*]] = loop.vfor %{{.*}}, %{{.*}} = 0 to 100 step 16 iter_args
// CHECK:                loop.unary "exp"
// CHECK:              %[[SUM:.*]] = loop.reduce "add" %[[SUMV]] : vector<16xf32> -> f32
// CHECK-NEXT:         %[[RCP:.*]] = arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT:         %[[RCPV:.*]] = vector.broadcast %[[RCP]] : f32 to vector<16xf32>
// CHECK-NEXT:         loop.vfor %i1, %{{.*}} = 0 to 100 step 16 {
// CHECK-NOT:            arith.divf
// CHECK:                arith.mulf %{{.*}}, %[[RCPV]] : vector<16xf32>
// CHECK-NEXT:           loop.vstore
// CHECK-NOT:      loop.kernel
