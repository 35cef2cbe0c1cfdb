// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// An element-wise chain is one kernel: one pass over memory, vectorized over the last
// dimension with a masked tail (1000 = 62 * 16 + 8), the broadcast operand read by %i1 alone.

builtin.module {
  func.func @forward(%x: tensor<4x1000xf32>, %b: tensor<1000xf32>) -> tensor<4x1000xf32> {
    %0 = torch.aten.add.Tensor %x, %b {alpha = 1 : i64} : (tensor<4x1000xf32>, tensor<1000xf32>) -> tensor<4x1000xf32>
    %1 = torch.aten.relu %0 : (tensor<4x1000xf32>) -> tensor<4x1000xf32>
    func.return %1 : tensor<4x1000xf32>
  }
}

// CHECK:      func.func @forward(%x: memref<4x1000xf32>, %b: memref<1000xf32>) -> memref<4x1000xf32>
// CHECK-SAME:   loop.native_ops = {"aten::add.Tensor" = 1 : i64, "aten::relu" = 1 : i64}, loop.fallback_ops = {}
// CHECK-NEXT:   %[[OUT:.*]] = loop.alloc : memref<4x1000xf32>
// CHECK-NEXT:   loop.kernel @fused_add_relu_0 ins(%x, %b : memref<4x1000xf32>, memref<1000xf32>) outs(%[[OUT]] : memref<4x1000xf32>) {isa = "avx512", vector_width = 16 : i64, vectorized = true, origins = "add,relu"} {
// CHECK-NEXT:   ^bb0(%[[X:.*]]: memref<4x1000xf32>, %[[B:.*]]: memref<1000xf32>, %[[O:.*]]: memref<4x1000xf32>):
// CHECK-NEXT:     loop.for %i0 = 0 to 4 step 1 {
// CHECK-NEXT:       loop.vfor %i1, %lanes = 0 to 1000 step 16 {
// CHECK-NEXT:         %[[OFF:.*]] = loop.offset 1000 * %i0 + %i1
// CHECK-NEXT:         %[[XV:.*]] = loop.vload %[[X]][%[[OFF]]] lanes(%lanes) : memref<4x1000xf32> -> vector<16xf32>
// CHECK-NEXT:         %[[BV:.*]] = loop.vload %[[B]][%i1] lanes(%lanes) : memref<1000xf32> -> vector<16xf32>
// CHECK-NEXT:         %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : vector<16xf32>
// CHECK-NEXT:         %[[R:.*]] = loop.unary "relu"(%[[S]]) : vector<16xf32> -> vector<16xf32>
// CHECK-NEXT:         loop.vstore %[[R]], %[[O]][%[[OFF]]] lanes(%lanes) : vector<16xf32>, memref<4x1000xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %[[OUT]] : memref<4x1000xf32>
// CHECK-NOT:  loop.kernel
