func.func @forward(%x: tensor<?x?x4xf32>, %m: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %j = torch.aten.cat [%x, %m] {dim = 1 : i64} : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  func.return %j : tensor<?x?x4xf32>
}
