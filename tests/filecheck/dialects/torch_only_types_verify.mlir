// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// An op's result types are checked against torch's also where only a CPU run types them
// (quantized tensors have no meta form, and meta kernels type quantized results as float).

func.func @wrong_result(%q: tensor<2x!torch.quantized<quint8>>) -> tensor<2x!torch.quantized<quint8>> {
  %0 = torch.aten.dequantize.self %q : (tensor<2x!torch.quantized<quint8>>) -> tensor<2x!torch.quantized<quint8>>
  func.return %0 : tensor<2x!torch.quantized<quint8>>
}
// CHECK: torch.aten.dequantize.self: result 0 is declared tensor<2x!torch.quantized<quint8>>, but torch computes tensor<2xf32>
