// RUN: ziggurat-opt %s -p 'convert-torch-to-trt{min_block_size=1}' | filecheck %s
// A bf16 op whose converter builds several layers (selu: two activations scaled) is converted
// in float32 between casts, as eager computes it and rounds once; a single layer (sigmoid)
// stays bf16.  A float16 erf, whose eager kernel is not float32's rounded once, stays in torch
// with its reason.

// CHECK:       func.func @forward({{.*}} attributes {ziggurat.trt_fallback = [{op = "aten::erf", reason = "aten::erf of bf16/float16: eager's 16-bit kernel does not compute it in float32 and round once
// CHECK:         %e = torch.aten.erf
// CHECK:       func.func private @forward_trt_0
// CHECK:         %[[W:.*]] = trt.cast %x {name = "{{.*}}(widened)"} : tensor<3x40xbf16> -> tensor<3x40xf32>
// CHECK-NEXT:    trt.unary kEXP %[[W]] {{.*}} : tensor<3x40xf32> -> tensor<3x40xf32>
// CHECK:         trt.select {{.*}} -> tensor<3x40xf32>
// CHECK:         %s = trt.cast %{{.*}} {name = "{{.*}}(rounded)"} : tensor<3x40xf32> -> tensor<3x40xbf16>
// CHECK-NEXT:    %g = trt.activation kSIGMOID %s {{.*}} : tensor<3x40xbf16> -> tensor<3x40xbf16>
func.func @forward(%x: tensor<3x40xbf16>, %h: tensor<3x40xf16>) -> (tensor<3x40xbf16>, tensor<3x40xf16>) {
  %s = torch.aten.selu %x : (tensor<3x40xbf16>) -> tensor<3x40xbf16>
  %g = torch.aten.sigmoid %s : (tensor<3x40xbf16>) -> tensor<3x40xbf16>
  %e = torch.aten.erf %h : (tensor<3x40xf16>) -> tensor<3x40xf16>
  func.return %g, %e : tensor<3x40xbf16>, tensor<3x40xf16>
}
