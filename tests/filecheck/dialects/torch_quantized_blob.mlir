// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// A quantized tensor has no byte image (its scale and zero point are not bytes): a blob of
// that type is an error at the literal, never a tensor with made-up quantization parameters.

func.func @f() -> tensor<2x!torch.quantized<quint8>> {
  %c = torch.literal dense_resource<qb> : tensor<2x!torch.quantized<quint8>>
  func.return %c : tensor<2x!torch.quantized<quint8>>
}
{-#
  dialect_resources: {
    builtin: {
      qb: "0x400000000102"
    }
  }
#-}
// CHECK: error: torch.literal: dense_resource<qb>: a tensor<2x!torch.quantized<quint8>> tensor has no byte image
