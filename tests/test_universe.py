"""The xDSL ``Universe`` entry point (pyproject's ``xdsl.universe``): xDSL's own tools see
Ziggurat's dialects, passes, frontends and targets through the multiverse."""

from __future__ import annotations

from xdsl.universe import Universe


def test_multiverse_holds_ziggurat() -> None:
    multiverse = Universe.get_multiverse()
    for dialect in ("torch", "fused", "trt", "loop"):
        assert dialect in multiverse.all_dialects, dialect
        assert multiverse.all_dialects[dialect]().name == dialect
    for name in ("graph-opt", "prepack-weights", "convert-torch-to-loop", "convert-torch-to-trt",
                 "fuse-post-ops"):
        assert name in multiverse.all_passes, name
        assert multiverse.all_passes[name]().name == name
    assert "torchscript" in multiverse.all_frontends
    assert "llvm-ir" in multiverse.all_targets
