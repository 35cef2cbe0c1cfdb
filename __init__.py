"""Ziggurat: a multi-level IR compiler for PyTorch models, built on xDSL.

    import ziggurat
    compiled = ziggurat.compile(model, (x,), backend="cpu")
"""

__version__ = "0.1.0"
