# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<3x4xf32>' | filecheck %s
# An aten op the dialect does not define still imports, generically, with its schema.
graph(%x : Tensor):
  %y : Tensor = aten::special_i0e(%x)
  return (%y)
# CHECK: torch.operator "aten::special_i0e"(%x) {args = {}, operand_names = ["self"], schema = "aten::special_i0e(Tensor self) -> Tensor"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
