// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' | filecheck %s
// RUN: not ziggurat-opt %s -p 'convert-torch-to-loop{fallback=false}' 2>&1 | filecheck %s --check-prefix=STRICT
// An op without a native lowering stays a torch op between native kernels: its operands
// are buffers seen as tensors, its result is copied into a buffer.

builtin.module {
  func.func @forward(%x: tensor<3x10xf32>) -> tensor<3x2xf32> {
    %0 = torch.aten.relu %x : (tensor<3x10xf32>) -> tensor<3x10xf32>
    %1:2 = torch.aten.topk %0 {k = 2 : i64, dim = -1 : i64, largest = true, sorted = true} : (tensor<3x10xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
    %2 = torch.aten.neg %1#0 : (tensor<3x2xf32>) -> tensor<3x2xf32>
    func.return %2 : tensor<3x2xf32>
  }
}

// CHECK:      loop.fallback_ops = {"aten::topk" = ["no native lowering of aten::topk"]}
// CHECK:      loop.kernel @relu_0
// CHECK:      %[[T:.*]] = loop.to_tensor %{{.*}} : memref<3x10xf32> to tensor<3x10xf32>
// CHECK-NEXT: %[[V:.*]], %{{.*}} = torch.aten.topk %[[T]]
// CHECK-NEXT: %[[B:.*]] = loop.to_buffer %[[V]] : tensor<3x2xf32> to memref<3x2xf32>
// CHECK:      loop.kernel @neg_0 ins(%[[B]] : memref<3x2xf32>)

// STRICT: backend 'cpu' cannot take 1 op(s):
// STRICT: aten::topk: no native lowering of aten::topk
// STRICT: schema: aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
