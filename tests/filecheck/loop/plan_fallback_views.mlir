// RUN: ziggurat-opt %s -p 'convert-torch-to-loop{isa=avx2 threads=1},plan-loop-buffers' | filecheck %s
// A torch op's result may be a view of its operand's buffer (int16 runs through torch; t()
// of a buffer is a view of it): the operand stays live until the result is copied out, so
// the copy never lands on the memory it reads (it did: overlapping copy_, a raw RuntimeError).

builtin.module {
  func.func @forward(%x: tensor<4x3xi16>) -> tensor<3x4xi16> {
    %0 = torch.aten.add.Scalar %x {other = 1 : i64, alpha = 1 : i64} : (tensor<4x3xi16>) -> tensor<4x3xi16>
    %1 = torch.aten.t %0 : (tensor<4x3xi16>) -> tensor<3x4xi16>
    %2 = torch.aten.mul.Scalar %1 {other = 2 : i64} : (tensor<3x4xi16>) -> tensor<3x4xi16>
    func.return %2 : tensor<3x4xi16>
  }
}

// CHECK:      %[[A:.*]] = loop.to_buffer %{{.*}} offset 0 : tensor<4x3xi16> to memref<4x3xi16>
// CHECK-NEXT: %[[TA:.*]] = loop.to_tensor %[[A]]
// CHECK-NEXT: %[[V:.*]] = torch.aten.t %[[TA]]
// CHECK-NEXT: %{{.*}} = loop.to_buffer %[[V]] offset 64 : tensor<3x4xi16> to memref<3x4xi16>
