// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s
// Every torch op's verifier derives its result types with torch's own shape functions (on
// meta tensors of the operand types) and compares them with the declared ones.

// The issue's case: topk's result types ignore k (it used to verify, then fail in lowering).
func.func @topk_ignores_k(%x: tensor<5x10xf32>) -> tensor<5x10xf32> {
  %v, %i = torch.aten.topk %x {k = 3 : i64, dim = -1 : i64, largest = true, sorted = true} : (tensor<5x10xf32>) -> (tensor<5x10xf32>, tensor<5x10xi64>)
  func.return %v : tensor<5x10xf32>
}
// CHECK: torch.aten.topk: result 0 is declared tensor<5x10xf32>, but torch computes tensor<5x3xf32> for these operands and arguments (schema: aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices))

// -----
// The second result is checked too.
func.func @topk_indices_dtype(%x: tensor<5x10xf32>) -> tensor<5x3xi32> {
  %v, %i = torch.aten.topk %x {k = 3 : i64, dim = -1 : i64, largest = true, sorted = true} : (tensor<5x10xf32>) -> (tensor<5x3xf32>, tensor<5x3xi32>)
  func.return %i : tensor<5x3xi32>
}
// CHECK: torch.aten.topk: result 1 is declared tensor<5x3xi32>, but torch computes tensor<5x3xi64>

// -----
// A wrong result dtype (f32 + f32 is f32).
func.func @add_dtype(%x: tensor<4xf32>) -> tensor<4xi64> {
  %0 = torch.aten.add.Tensor %x, %x {alpha = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}
// CHECK: torch.aten.add.Tensor: result 0 is declared tensor<4xi64>, but torch computes tensor<4xf32>

// -----
// A broadcast whose declared shape is not the broadcast shape.
func.func @add_broadcast(%x: tensor<4x1xf32>, %y: tensor<3xf32>) -> tensor<4x1xf32> {
  %0 = torch.aten.add.Tensor %x, %y {alpha = 1 : i64} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x1xf32>
  func.return %0 : tensor<4x1xf32>
}
// CHECK: torch.aten.add.Tensor: result 0 is declared tensor<4x1xf32>, but torch computes tensor<4x3xf32>

// -----
// Static arguments count: conv2d's output size follows stride and padding.
func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = torch.aten.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}
// CHECK: torch.aten.conv2d: result 0 is declared tensor<1x4x8x8xf32>, but torch computes tensor<1x4x4x4xf32>

// -----
// Operands torch refuses: the channels of input and weight disagree.
func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = torch.aten.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x5x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}
// CHECK: torch.aten.conv2d: torch refuses these operands and arguments: {{.*}}channel{{.*}} (schema: aten::conv2d(

// -----
// A stride of 0: the meta kernel divides by it (ZeroDivisionError was an internal error).
func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = torch.aten.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}
// CHECK: torch.aten.conv2d: torch refuses these operands and arguments: non-positive stride is not supported

// -----
func.func @mm_inner(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %0 = torch.aten.mm %x, %y : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
// CHECK: torch.aten.mm: torch refuses these operands and arguments: {{.*}}(2x3 and 4x5)

// -----
// A view to a size with another number of elements.
func.func @view_numel(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  %0 = torch.aten.view %x {size = array<i64: 7>} : (tensor<2x3xf32>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}
// CHECK: torch.aten.view: torch refuses these operands and arguments: shape '[7]' is invalid for input of size 6

// -----
// torch.operator is checked the same way when its schema is known.
func.func @operator_type(%x: tensor<4x4xf32>) -> tensor<4x4xi64> {
  %0 = torch.operator "aten::special_i0e"(%x) {args = {}, operand_names = ["self"], schema = "aten::special_i0e(Tensor self) -> Tensor"} : (tensor<4x4xf32>) -> tensor<4x4xi64>
  func.return %0 : tensor<4x4xi64>
}
// CHECK: torch.operator: result 0 is declared tensor<4x4xi64>, but torch computes tensor<4x4xf32>

// -----
func.func @operator_results(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0, %1 = torch.operator "aten::special_i0e"(%x) {args = {}, operand_names = ["self"], schema = "aten::special_i0e(Tensor self) -> Tensor"} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  func.return %0 : tensor<4x4xf32>
}
// CHECK: torch.operator: declares 2 result(s), torch computes 1

// -----
// Shapes are static.
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = torch.aten.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
// CHECK: torch.aten.relu: operand 0 has a dynamic dimension (tensor<?x4xf32>); Ziggurat compiles static shapes (a function input has no data-dependent shape)

// -----
// A static argument whose attribute does not decode.
func.func @bad_property(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = torch.aten.contiguous %x {memory_format = "sideways"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: torch.aten.contiguous: its static arguments do not decode: argument 'memory_format' (MemoryFormat): 'sideways' is not a torch memory_format

// -----
// A factory op: its size property decides the result.
func.func @zeros_size() -> tensor<2x3xf32> {
  %0 = torch.aten.zeros {size = array<i64: 3, 2>, dtype = f32} : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: torch.aten.zeros: result 0 is declared tensor<2x3xf32>, but torch computes tensor<3x2xf32>

// -----
// What torch cannot tell without the data is not an error: masked_select's element count.
func.func @data_dependent(%x: tensor<4x4xf32>, %m: tensor<4x4xi1>) -> tensor<7xf32> {
  %0 = torch.aten.masked_select %x, %m : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}
// CHECK: func.func @data_dependent
// CHECK-NEXT: torch.aten.masked_select
