graph(%x : Float(2)):
  %y : Tensor = aten::relu(%x
