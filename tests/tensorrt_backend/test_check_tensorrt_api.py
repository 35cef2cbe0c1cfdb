"""tools/check_tensorrt_api.py: every TensorRT API use of the emitter, checked against the real
TensorRT 11 bindings (``tensorrt-cu12-bindings``, read as data, never imported).  Planted
mistakes (in copies of the emitter's source, never in the real code) must make it fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from ziggurat.backends.tensorrt.availability import CHECKED_TENSORRT_MAJOR
from ziggurat.tools.check_tensorrt_api import (
    ApiMismatch,
    check_uses,
    collect_uses,
    find_bindings,
    load_surface,
    main,
    plans_of_ir,
)
from ziggurat.tools.pybind_surface import ApiSurface
from ziggurat.tools.tensorrt_api_uses import ApiUse, layer_calls_source, module_sources

ROUNDTRIP = Path(__file__).parents[1] / "filecheck" / "trt" / "roundtrip.mlir"


@pytest.fixture(scope="module")
def surface() -> ApiSurface:
    return load_surface(find_bindings())


@pytest.fixture(scope="module")
def plans() -> dict[str, list[object]]:
    return plans_of_ir([ROUNDTRIP])  # every trt op kind


def test_the_installed_bindings_are_the_checked_major_version() -> None:
    bindings = find_bindings()
    assert bindings.path.name == "tensorrt.so" and int(bindings.version.split(".")[0]) == CHECKED_TENSORRT_MAJOR


def test_the_module_reads_as_the_tensorrt_api(surface: ApiSurface) -> None:
    conv = surface.methods("INetworkDefinition", "add_convolution_nd")
    assert [o.keywords for o in conv] == [("input", "num_output_maps", "kernel_shape", "kernel", "bias")]
    assert conv[0].required == 4 and surface.python_name(conv[0].returns) == "IConvolutionLayer"
    assert surface.property("IConvolutionLayer", "stride_nd") is not None
    assert surface.property("IConvolutionLayer", "name") is not None  # from ILayer
    num_inputs = surface.property("ILayer", "num_inputs")
    assert num_inputs is not None and not num_inputs.writable
    assert "GELU_ERF" in surface.classes["ActivationType"].members
    assert "SUM" in surface.classes["CumulativeOperation"].members  # a one-member enum (inlined value())
    assert "FP16" not in surface.classes["BuilderFlag"].members  # TensorRT 11 is strongly typed
    assert {len(o.params) for o in surface.methods("Weights", "__init__")} == {1, 3}
    assert surface.attribute("Logger", "WARNING") == "member:Severity"


def test_every_use_of_the_emitter_checks(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    uses = collect_uses(surface, plans)
    report = check_uses(surface, uses)
    network = report.checked["INetworkDefinition"]
    assert {"add_convolution_nd()", "add_scale_nd()", "add_input()", "mark_output()"} <= network
    assert "set_memory_pool_limit()" in report.checked["IBuilderConfig"]
    assert "execute_async_v3()" in report.checked["IExecutionContext"]
    assert "stride_nd =" in report.checked["IConvolutionLayer"]


def test_the_command_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--models", "--ir", str(ROUNDTRIP), "--quiet"]) == 0
    assert "checked against TensorRT 11.4.0.106: OK" in capsys.readouterr().out


def _fails(surface: ApiSurface, plans: dict[str, list[object]], match: str, **replaced: str) -> None:
    with pytest.raises(ApiMismatch, match=match):
        check_uses(surface, collect_uses(surface, plans, **replaced))  # pyright: ignore[reportArgumentType]


def test_a_misspelt_network_method_in_the_table_fails(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    planted = layer_calls_source().replace('"add_convolution_nd"', '"add_convolution"')
    _fails(surface, plans, r"INetworkDefinition has no method add_convolution \(did you mean add_convolution_nd",
           layer_calls=planted)


def test_the_mismatch_names_the_trt_op_and_emitter(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    with pytest.raises(ApiMismatch) as info:
        check_uses(surface, [ApiUse("set", "IActivationLayer", "alpah", ("float",),
                                    where="trt.activation (layer 'hardtanh') emitted by layer_calls._activation")])
    assert "has no attribute alpah to set (did you mean alpha" in str(info.value)
    assert "trt.activation" in str(info.value) and "_activation" in str(info.value)


def test_a_misspelt_layer_attribute_fails(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    planted = layer_calls_source().replace('("stride_nd", op.stride_values())', '("stride", op.stride_values())', 1)
    _fails(surface, plans, r"in _convolution_like.*IConvolutionLayer has no attribute stride to set", layer_calls=planted)


def test_a_wrong_keyword_fails(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    sources = module_sources()
    emitter = "backends/tensorrt/emitter.py"
    call = "config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, options.workspace_size)"
    assert call in sources[emitter]
    right = call.replace("(trt.", "(pool=trt.").replace(", options.", ", pool_size=options.")
    check_uses(surface, collect_uses(surface, plans, sources={**sources, emitter: sources[emitter].replace(call, right)}))
    wrong = call.replace(", options.", ", size=options.")
    _fails(surface, plans, r"no keyword 'size' \(keywords: pool_size\)", sources={**sources, emitter: sources[emitter].replace(call, wrong)})


def test_a_wrong_arity_or_enum_member_fails(surface: ApiSurface, plans: dict[str, list[object]]) -> None:
    sources = module_sources()
    emitter = "backends/tensorrt/emitter.py"
    more = sources[emitter].replace("builder.create_network(0)", "builder.create_network(0, 1)")
    _fails(surface, plans, r"create_network\(int, int\) fits no overload.*2 arguments for 1 parameters",
           sources={**sources, emitter: more})
    fewer = sources[emitter].replace("config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, options.workspace_size)",
                                     "config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE)")
    _fails(surface, plans, r"1 arguments for 2 required parameters", sources={**sources, emitter: fewer})
    member = sources[emitter].replace("trt.MemoryPoolType.WORKSPACE", "trt.MemoryPoolType.WORK_SPACE")
    _fails(surface, plans, r"MemoryPoolType has no member WORK_SPACE", sources={**sources, emitter: member})
    planted = layer_calls_source().replace('_enum("PaddingMode", op.padding_mode.data)', '_enum("PadMode", op.padding_mode.data)', 1)
    _fails(surface, plans, r"tensorrt has no PadMode \(did you mean PaddingMode", layer_calls=planted)


def test_missing_bindings_are_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--bindings", str(tmp_path)]) == 2
    assert "no tensorrt bindings wheel" in capsys.readouterr().err
    (tmp_path / "tensorrt.so").write_bytes(b"not an ELF object")
    assert main(["--bindings", str(tmp_path / "tensorrt.so")]) == 2
    assert "is not a 64-bit little-endian ELF object" in capsys.readouterr().err
