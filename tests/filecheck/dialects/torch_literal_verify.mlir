// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// A weight blob whose size does not fit its literal's type, or that is missing, is a
// verifier diagnostic (both used to be internal errors wherever the weight was first read).

func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = torch.literal dense_resource<w> : tensor<4xf32>
  %0 = torch.aten.add.Tensor %x, %w {alpha = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: torch.literal: dense_resource<w> holds 3 elements, its type tensor<4xf32> needs 4

{-#
  dialect_resources: {
    builtin: {
      w: "0x400000000000803f0000004000004040"
    }
  }
#-}

// -----
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = torch.literal dense_resource<missing> : tensor<4xf32>
  %0 = torch.aten.add.Tensor %x, %w {alpha = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: torch.literal: dense_resource<missing> : tensor<4xf32> has no data (its blob is missing from the file's dialect_resources, or the IR was printed with --elide-resources)
