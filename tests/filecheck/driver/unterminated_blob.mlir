// RUN: not timeout 120 ziggurat-opt %s 2>&1 | filecheck %s
// A string literal that does not close (here a truncated weight blob) is a parse error at
// once; xDSL's lexer used to backtrack exponentially on it.
// CHECK: ziggurat-opt: {{.*}}unterminated_blob.mlir:17:10: error: End of file reached before closing string literal.

func.func @forward(%x: tensor<64xf32>) -> tensor<64xf32> {
  %w = torch.literal dense_resource<w> : tensor<64xf32>
  %0 = torch.aten.add.Tensor %x, %w {alpha = 1 : i64} : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}

{-#
  dialect_resources: {
    builtin: {


      w: "0x400000000000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f0000803f
