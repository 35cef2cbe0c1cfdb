// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1}' 2>/dev/null | filecheck %s
// Ops reading or writing complex (or float8, quantized) tensors run through torch, with the
// reason; such values never enter a buffer: a complex input is read as the caller's tensor
// (loop.to_tensor of the argument, which no kernel reads), a complex result of a torch op stays
// a tensor (no loop.to_buffer) and is returned as one; a float result is copied into a buffer
// for the native add.

builtin.module {
  func.func @forward(%z: tensor<3xcomplex<f32>>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xcomplex<f32>>) {
    %a = torch.aten.abs %z : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
    %b = torch.aten.add.Tensor %a, %x {alpha = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %c = torch.aten.mul.Tensor %z, %z : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    func.return %b, %c : tensor<3xf32>, tensor<3xcomplex<f32>>
  }
}

// CHECK:      func.func @forward(%z: memref<3xcomplex<f32>>, %x: memref<3xf32>) -> (memref<3xf32>, tensor<3xcomplex<f32>>)
// CHECK-SAME: loop.native_ops = {"aten::add.Tensor" = 1 : i64}
// CHECK-SAME: loop.fallback_ops = {"aten::abs" = ["complex64 tensors have no native lowering"], "aten::mul.Tensor" = ["complex64 tensors have no native lowering"]}
// CHECK-NEXT: %[[Z:.*]] = loop.to_tensor %z : memref<3xcomplex<f32>> to tensor<3xcomplex<f32>>
// CHECK-NEXT: %[[A:.*]] = torch.aten.abs %[[Z]] {loop.fallback_reason = "complex64 tensors have no native lowering"} : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK-NEXT: %[[AB:.*]] = loop.to_buffer %[[A]] : tensor<3xf32> to memref<3xf32>
// CHECK-NEXT: %[[C:.*]] = torch.aten.mul.Tensor %[[Z]], %[[Z]] {loop.fallback_reason = "complex64 tensors have no native lowering"} : (tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
// CHECK-NOT:  loop.to_buffer %[[C]]
// CHECK:      loop.kernel @add_0 ins(%[[AB]], %x : memref<3xf32>, memref<3xf32>)
// CHECK-NOT:  complex
// CHECK:      loop.vstore
// CHECK:      func.return %{{.*}}, %[[C]] : memref<3xf32>, tensor<3xcomplex<f32>>
