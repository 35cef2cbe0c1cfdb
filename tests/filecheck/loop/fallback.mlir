// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' | filecheck %s
// RUN: not ziggurat-opt %s -p 'convert-torch-to-loop{fallback=false}' 2>&1 | filecheck %s --check-prefix=STRICT
// An op without a native lowering stays a torch op between native kernels: its operands
// are buffers seen as tensors, its result is copied into a buffer.

builtin.module {
  func.func @forward(%x: tensor<3x10xf32>) -> tensor<3x10xf32> {
    %0 = torch.aten.relu %x : (tensor<3x10xf32>) -> tensor<3x10xf32>
    %1 = torch.operator "aten::special_bessel_j0"(%0) {args = {}, operand_names = ["self"], schema = "aten::special_bessel_j0(Tensor self) -> Tensor"} : (tensor<3x10xf32>) -> tensor<3x10xf32>
    %2 = torch.aten.neg %1 : (tensor<3x10xf32>) -> tensor<3x10xf32>
    func.return %2 : tensor<3x10xf32>
  }
}

// CHECK:      loop.fallback_ops = {"aten::special_bessel_j0" = ["no native lowering of aten::special_bessel_j0"]}
// CHECK:      loop.kernel @relu_0
// CHECK:      %[[T:.*]] = loop.to_tensor %{{.*}} : memref<3x10xf32> to tensor<3x10xf32>
// CHECK-NEXT: %[[V:.*]] = torch.operator "aten::special_bessel_j0"(%[[T]])
// CHECK-NEXT: %[[B:.*]] = loop.to_buffer %[[V]] : tensor<3x10xf32> to memref<3x10xf32>
// CHECK:      loop.kernel @neg_0 ins(%[[B]] : memref<3x10xf32>)

// STRICT: backend 'cpu' cannot take 1 op(s):
// STRICT: aten::special_bessel_j0: no native lowering of aten::special_bessel_j0
// STRICT: schema: aten::special_bessel_j0(Tensor self) -> Tensor
