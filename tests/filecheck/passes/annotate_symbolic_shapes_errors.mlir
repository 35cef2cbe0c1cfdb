// RUN: ziggurat-opt %s -p annotate-symbolic-shapes --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// An op that holds for one size only, or needs a condition the declared ranges do not imply,
// is an error naming the op; a data-dependent size is a symbol of its own (u0, as torch names
// sizes known only at run time).

// A batch size baked into a reshape: the model was traced at batch 17.
// CHECK: torch.aten.reshape: holds only for batch = 17: a size of this op is baked in, while batch ranges over [1, 64]
func.func @baked(%x: tensor<?x4xf32>) -> tensor<17x4xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %0 = torch.aten.reshape %x {shape = array<i64: 17, -1>} : (tensor<?x4xf32>) -> tensor<17x4xf32>
  func.return %0 : tensor<17x4xf32>
}

// -----

// A static size in the IR where the op computes batch x 4.
// CHECK: torch.aten.relu: computed (batch, 4) torch.float32 but the IR declares tensor<5x4xf32>
func.func @static_result(%x: tensor<?x4xf32>) -> tensor<5x4xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %0 = torch.aten.relu %x : (tensor<?x4xf32>) -> tensor<5x4xf32>
  func.return %0 : tensor<5x4xf32>
}

// -----

// x[5:] has 0 rows below batch 5: its sizes differ between the ends of the range [2, 64].
// CHECK: torch.aten.slice.Tensor: does not hold over the declared ranges: its sizes are batch - 5 x 4 at batch = 17 but 0 x 4 at batch = 2 (it needs batch >= 5); the ranges: batch in [2, 64]: x dim 0
func.func @condition(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 2, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %0 = torch.aten.slice.Tensor %x {dim = 0 : i64, start = 5 : i64, end = 9223372036854775807 : i64, step = 1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @data_dependent
// CHECK:         torch.aten.relu %x {ziggurat.shapes = ["batch x 4"]}
// CHECK:         torch.operator "aten::nonzero"(%r) {ziggurat.shapes = ["u0 x 2"]
func.func @data_dependent(%x: tensor<?x4xf32>) -> tensor<?x2xi64> attributes {ziggurat.shape_symbols = "{\22symbols\22: [[\22batch\22, 1, 64]], \22dims\22: [[0, \22x\22, 0, \22batch\22]]}"} {
  %r = torch.aten.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %0 = torch.operator "aten::nonzero"(%r) {args = {}, operand_names = ["self"], schema = "aten::nonzero(Tensor self) -> Tensor"} : (tensor<?x4xf32>) -> tensor<?x2xi64>
  func.return %0 : tensor<?x2xi64>
}
