// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1},plan-loop-buffers' | filecheck %s
// Intermediate buffers share the arena once dead: a chain of four realized values (each read
// twice, so none is inlined) needs two 4 KiB slots, not four; outputs are not in the arena.

builtin.module {
  func.func @forward(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = torch.aten.exp %x : (tensor<1024xf32>) -> tensor<1024xf32>
    %1 = torch.aten.mul.Tensor %0, %0 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    %2 = torch.aten.sin %1 : (tensor<1024xf32>) -> tensor<1024xf32>
    %3 = torch.aten.mul.Tensor %2, %2 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    %4 = torch.aten.cos %3 : (tensor<1024xf32>) -> tensor<1024xf32>
    %5 = torch.aten.mul.Tensor %4, %4 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    %6 = torch.aten.tanh %5 : (tensor<1024xf32>) -> tensor<1024xf32>
    %7 = torch.aten.mul.Tensor %6, %6 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    func.return %7 : tensor<1024xf32>
  }
}

// CHECK:      loop.arena_bytes = 8192 : i64
// CHECK:      loop.alloc offset 0 : memref<1024xf32>
// CHECK:      loop.alloc offset 4096 : memref<1024xf32>
// CHECK:      loop.alloc offset 0 : memref<1024xf32>
// CHECK:      loop.alloc offset 4096 : memref<1024xf32>
// CHECK:      loop.alloc : memref<1024xf32>
// CHECK-NEXT: loop.kernel
// CHECK:      func.return
