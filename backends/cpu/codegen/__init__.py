"""Loop IR -> LLVM IR (llvmlite): one LLVM module per graph, one native entry per segment."""
