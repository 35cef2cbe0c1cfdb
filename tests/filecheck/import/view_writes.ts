# RUN: ziggurat-opt %s -f torchscript-ir --input-types 'tensor<4x4xf32>' | filecheck %s
# In-place writes through views are functionalized (as torch's functionalization does): the
# write becomes its functional op, the base is rebuilt with the inverse of each view op, from
# the innermost out (select_scatter, slice_scatter, the inverse permutation), and a view taken
# before the write (%v) is re-derived from the final base when it is read (its first select,
# never read, is dropped).
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %end : int = prim::Constant[value=9223372036854775807]()
  %three : float = prim::Constant[value=3.]()
  %y : Tensor = aten::clone(%x, %none)
  %v : Tensor = aten::select(%y, %0, %1)
  %rows : Tensor = aten::slice(%y, %0, %1, %end, %1)
  %cols : Tensor = aten::slice(%rows, %1, %0, %end, %2)
  %row : Tensor = aten::select(%cols, %0, %0)
  %m : Tensor = aten::mul_(%row, %three)
  %t : Tensor = aten::t(%y)
  %col : Tensor = aten::select(%t, %0, %2)
  %f : Tensor = aten::fill_(%col, %three)
  return (%y, %v)

# CHECK:      %[[Y:.*]] = torch.aten.clone %x
# CHECK-NEXT: %[[ROWS:.*]] = torch.aten.slice.Tensor %[[Y]] {dim = 0 : i64, start = 1 : i64, end = 9223372036854775807 : i64, step = 1 : i64}
# CHECK-NEXT: %[[COLS:.*]] = torch.aten.slice.Tensor %[[ROWS]] {dim = 1 : i64, start = 0 : i64, end = 9223372036854775807 : i64, step = 2 : i64}
# CHECK-NEXT: %[[ROW:.*]] = torch.aten.select.int %[[COLS]] {dim = 0 : i64, index = 0 : i64}
# CHECK-NEXT: %[[MUL:.*]] = torch.aten.mul.Scalar %[[ROW]] {other = 3.000000e+00 : f64}
# CHECK-NEXT: %[[COLS2:.*]] = torch.operator "aten::select_scatter"(%[[COLS]], %[[MUL]]) {args = {dim = 0 : i64, index = 0 : i64}
# CHECK-NEXT: %[[ROWS2:.*]] = torch.aten.slice_scatter %[[ROWS]], %[[COLS2]] {dim = 1 : i64, start = 0 : i64, end = 9223372036854775807 : i64, step = 2 : i64}
# CHECK-NEXT: %[[Y2:.*]] = torch.aten.slice_scatter %[[Y]], %[[ROWS2]] {dim = 0 : i64, start = 1 : i64, end = 9223372036854775807 : i64, step = 1 : i64}
# CHECK-NEXT: %[[T:.*]] = torch.aten.t %[[Y2]]
# CHECK-NEXT: %[[COL:.*]] = torch.aten.select.int %[[T]] {dim = 0 : i64, index = 2 : i64}
# CHECK-NEXT: %[[FILL:.*]] = torch.operator "aten::fill.Scalar"(%[[COL]])
# CHECK-NEXT: %[[T2:.*]] = torch.operator "aten::select_scatter"(%[[T]], %[[FILL]]) {args = {dim = 0 : i64, index = 2 : i64}
# CHECK-NEXT: %[[Y3:.*]] = torch.aten.permute %[[T2]] {dims = array<i64: 1, 0>}
# CHECK-NEXT: %[[V2:.*]] = torch.aten.select.int %[[Y3]] {dim = 0 : i64, index = 1 : i64}
# CHECK-NEXT: func.return %[[Y3]], %[[V2]]
