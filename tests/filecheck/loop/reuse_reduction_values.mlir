// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1},reuse-reduction-values' | filecheck %s
// softmax's sum loop stores each exp(x - max) vector into a row scratch; the output loop
// loads it back instead of loading x, subtracting and computing exp again.  log_softmax's
// output loop computes no transcendental of the element: it keeps no row.

builtin.module {
  func.func @forward(%x: tensor<8x100xf32>) -> (tensor<8x100xf32>, tensor<8x100xf32>) {
    %0 = torch.aten.softmax.int %x {dim = -1 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
    %1 = torch.aten.log_softmax.int %x {dim = -1 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
    func.return %0, %1 : tensor<8x100xf32>, tensor<8x100xf32>
  }
}

// CHECK:          loop.kernel @softmax_0
// CHECK:            loop.for %i0 = 0 to 8 step 1 {
// CHECK:              %[[MAX:.*]] = loop.reduce "max_nonan"
// CHECK:              %[[ROW:.*]] = loop.scratch : memref<100xf32>
// CHECK-NEXT:         %{{.*}} = loop.vfor %[[R:.*]], %[[RL:.*]] = 0 to 100 step 16 iter_args
// CHECK:                %[[E:.*]] = loop.unary "exp"
// CHECK-NEXT:           %[[AT:.*]] = loop.offset %[[R]]
// CHECK-NEXT:           loop.vstore %[[E]], %[[ROW]][%[[AT]]] lanes(%[[RL]]) : vector<16xf32>, memref<100xf32>
// CHECK:              loop.reduce "add"
// CHECK:              loop.vfor %[[I:.*]], %[[IL:.*]] = 0 to 100 step 16 {
// CHECK-NEXT:           %[[AT2:.*]] = loop.offset %[[I]]
// CHECK-NEXT:           %[[KEPT:.*]] = loop.vload %[[ROW]][%[[AT2]]] lanes(%[[IL]]) : memref<100xf32> -> vector<16xf32>
// CHECK-NOT:            loop.unary "exp"
// CHECK:                arith.mulf %[[KEPT]]
// CHECK-NEXT:           loop.vstore
// CHECK:          loop.kernel @log_softmax_0
// CHECK-NOT:        loop.scratch
// CHECK:          func.return
