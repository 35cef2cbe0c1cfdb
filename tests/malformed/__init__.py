"""Malformed input: mutated .mlir, TorchScript IR, .pt and saved modules must all end in a
clean diagnostic (see ``harness.py``)."""
