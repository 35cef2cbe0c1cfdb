// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx512 threads=1}' | filecheck %s
// The kernel realizing a cat/stack along an outer dim runs one loop nest per part, which
// copies that part alone (plain vector loads and stores at the part's offset); one nest
// choosing the source per element read every part, masked, for every vector (an unrolled
// 256-step LSTM's output stack read 256 buffers per vector). Along the last dim with parts
// one element wide the nest per part would not be the unit-stride one: one nest as before.

builtin.module {
  func.func @forward(%a: tensor<2x20xf32>, %b: tensor<2x20xf32>, %c: tensor<2x20xf32>) -> (tensor<3x2x20xf32>, tensor<2x3x20xf32>, tensor<2x20x3xf32>) {
    %0 = torch.aten.stack [%a, %b, %c] {dim = 0 : i64} : (tensor<2x20xf32>, tensor<2x20xf32>, tensor<2x20xf32>) -> tensor<3x2x20xf32>
    %1 = torch.aten.stack [%a, %b, %c] {dim = 1 : i64} : (tensor<2x20xf32>, tensor<2x20xf32>, tensor<2x20xf32>) -> tensor<2x3x20xf32>
    %2 = torch.aten.stack [%a, %b, %c] {dim = 2 : i64} : (tensor<2x20xf32>, tensor<2x20xf32>, tensor<2x20xf32>) -> tensor<2x20x3xf32>
    func.return %0, %1, %2 : tensor<3x2x20xf32>, tensor<2x3x20xf32>, tensor<2x20x3xf32>
  }
}

// CHECK:      loop.kernel @stack_0 ins(%a, %b, %c : {{.*}}) outs(%{{.*}} : memref<3x2x20xf32>)
// CHECK:        loop.vfor %[[I:.*]], %[[L:.*]] = 0 to 40 step 16 {
// CHECK-NEXT:     %[[V:.*]] = loop.vload %a_1[%[[I]]] lanes(%[[L]]) : memref<2x20xf32> -> vector<16xf32>
// CHECK-NEXT:     loop.vstore %[[V]], %out[%[[I]]] lanes(%[[L]])
// CHECK-NEXT:   }
// CHECK-NEXT:   loop.vfor %[[I:.*]], %[[L:.*]] = 0 to 40 step 16 {
// CHECK-NEXT:     %[[V:.*]] = loop.vload %b_1[%[[I]]] lanes(%[[L]]) : memref<2x20xf32> -> vector<16xf32>
// CHECK-NEXT:     %[[O:.*]] = loop.offset %[[I]] + 40
// CHECK-NEXT:     loop.vstore %[[V]], %out[%[[O]]] lanes(%[[L]])
// CHECK-NEXT:   }
// CHECK-NEXT:   loop.vfor %[[I:.*]], %[[L:.*]] = 0 to 40 step 16 {
// CHECK-NEXT:     %[[V:.*]] = loop.vload %c_1[%[[I]]] lanes(%[[L]]) : memref<2x20xf32> -> vector<16xf32>
// CHECK-NEXT:     %[[O:.*]] = loop.offset %[[I]] + 80
// CHECK-NEXT:     loop.vstore %[[V]], %out[%[[O]]] lanes(%[[L]])
// CHECK-NEXT:   }
// CHECK-NEXT: }

// Along dim 1: one nest over the rows per part, each storing at its part's column offset.
// CHECK:      loop.kernel @stack_1
// CHECK:        loop.for %[[R:.*]] = 0 to 2 step 1 {
// CHECK:          loop.vload %a_1
// CHECK-NOT:      mask
// CHECK:          loop.offset 60 * %[[R]] + %{{.*}}
// CHECK-NOT:      loop.vload
// CHECK:        loop.for %[[R:.*]] = 0 to 2 step 1 {
// CHECK:          loop.vload %b_1
// CHECK:          loop.offset 60 * %[[R]] + %{{.*}} + 20
// CHECK:        loop.for %[[R:.*]] = 0 to 2 step 1 {
// CHECK:          loop.vload %c_1
// CHECK:          loop.offset 60 * %[[R]] + %{{.*}} + 40

// Along the last dim (parts one element wide): one nest choosing among the parts.
// CHECK:      loop.kernel @stack_2
// CHECK-COUNT-1: loop.vfor
// CHECK:        loop.vgather %a_1
// CHECK:        loop.vgather %b_1
// CHECK:        loop.vgather %c_1
// CHECK-NOT:    loop.vfor
