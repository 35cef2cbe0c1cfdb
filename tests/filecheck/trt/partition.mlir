// RUN: ziggurat-opt %s -p 'convert-torch-to-trt{min_block_size=1}' | filecheck %s
// RUN: ziggurat-opt %s -p 'convert-torch-to-trt{min_block_size=3 torch_executed_ops="aten::sigmoid"}' | filecheck %s --check-prefix=BLOCK
// The partitioner: runs of convertible ops become private trt functions called from torch;
// what stays in torch is listed with its reason on the function (ziggurat.trt_fallback).

// cumprod has no converter: two segments around it.  Segment outputs keep the torch names.
// CHECK:       func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x4xf32> attributes {ziggurat.trt_fallback = [{op = "aten::cumprod", reason = "no TensorRT converter is registered for aten::cumprod", schema = "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", location = "model.py:7 [%c (block)]"}]} {
// CHECK-NEXT:    %r = func.call @forward_trt_0(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %c = torch.operator "aten::cumprod"(%r)
// CHECK-NEXT:    %t = func.call @forward_trt_1(%c) : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %t
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @forward_trt_0(%x: tensor<3x4xf32>) -> tensor<3x4xf32> attributes {ziggurat.backend = "tensorrt", ziggurat.trt_ops = {"aten::add.Tensor" = 1 : i64, "aten::mul.Tensor" = 1 : i64, "aten::relu" = 1 : i64}} {
// CHECK-NEXT:    %[[S:.*]] = trt.constant {name = "aten::mul.Tensor (scalar)"} dense<2.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %m = trt.elementwise kPROD %x, %[[S]]
// CHECK-NEXT:    %a = trt.elementwise kSUM %m, %x
// CHECK-NEXT:    %r = trt.activation kRELU %a
// CHECK-NEXT:    func.return %r
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func private @forward_trt_1(%c: tensor<3x4xf32>) -> tensor<3x4xf32> attributes {ziggurat.backend = "tensorrt", ziggurat.trt_ops = {"aten::sigmoid" = 1 : i64, "aten::tanh" = 1 : i64}} {
// CHECK-NEXT:    %g = trt.activation kSIGMOID %c
// CHECK-NEXT:    %t = trt.activation kTANH %g
// CHECK-NEXT:    func.return %t
// CHECK-NOT:   torch.literal

// min_block_size=3 keeps the one-op run (tanh) in torch; torch_executed_ops keeps sigmoid.
// BLOCK:       func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x4xf32> attributes {ziggurat.trt_fallback = [{op = "aten::cumprod", {{[^}]*}}}, {op = "aten::sigmoid", reason = "listed in torch_executed_ops", schema = "aten::sigmoid(Tensor self) -> Tensor"}, {op = "aten::tanh", reason = "its TensorRT block has 1 op(s), fewer than min_block_size=3", schema = "aten::tanh(Tensor self) -> Tensor"}]} {
// BLOCK-NEXT:    %r = func.call @forward_trt_0(%x)
// BLOCK-NEXT:    %c = torch.operator "aten::cumprod"(%r)
// BLOCK-NEXT:    %g = torch.aten.sigmoid %c
// BLOCK-NEXT:    %t = torch.aten.tanh %g
// BLOCK-NEXT:    func.return %t
// BLOCK-NEXT:  }
// BLOCK-NEXT:  func.func private @forward_trt_0(
// BLOCK-NOT:   func.func
func.func @forward(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %s = torch.literal dense<2.000000e+00> : tensor<f32>
  %m = torch.aten.mul.Tensor %x, %s : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %a = torch.aten.add.Tensor %m, %x {alpha = 1 : i64} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = torch.aten.relu %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %c = torch.operator "aten::cumprod"(%r) {args = {dim = 1 : i64}, operand_names = ["self"], schema = "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"} : (tensor<3x4xf32>) -> tensor<3x4xf32> loc("%c (block)"("model.py":7:0))
  %g = torch.aten.sigmoid %c : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %t = torch.aten.tanh %g : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %t : tensor<3x4xf32>
}
