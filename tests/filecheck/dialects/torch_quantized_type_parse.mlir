// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// !torch.quantized<...> names one of torch's quantized dtypes.

func.func @unknown_kind(%q: tensor<2x!torch.quantized<qint4>>) {
  func.return
}
// CHECK: error: unknown quantized dtype 'qint4'; expected one of qint8, quint8, qint32, quint4x2, quint2x4
