"""TorchScript loops (``prim::Loop``): unrolled when static, else a ``torch.loop`` that every
backend runs (the CPU backend with its body as native code where the body lowers, the
TensorRT backends through torch), each checked against eager."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ziggurat
from ziggurat.ir.errors import ZigguratError

BACKENDS = ["cpu", "reference", "tensorrt-reference"]


class ForRange(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(3):
            x = x * 2 + i
        return x


class RowsTimesIndex(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ys: list[torch.Tensor] = []
        for i in range(x.shape[0]):
            ys.append(x[i] * i)
        return torch.stack(ys)


class Interpolate(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2.0, mode="nearest")


class WhileSum(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        n = 0
        while x.sum() < 100.0:
            x = torch.relu(self.lin(x)) + x.abs() + 0.5
            n += 1
        return x, n


class DataTripCount(torch.nn.Module):
    def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        for i in range(int(k.sum())):
            x = x * 0.5 + i
        return x


def long_static_loop(x: torch.Tensor) -> torch.Tensor:
    """Above MAX_UNROLLED_NODES (lowered to 20 by the test): a torch.loop, not 40 copies.
    (A function: freezing a ScriptModule unrolls short constant loops itself.)"""
    for i in range(40):
        x = x * 0.5 + i
    return x


class Iterate(torch.nn.Module):
    """A recurrent refinement: two linears per trip, a data-dependent trip count."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(24, 24)
        self.lin2 = torch.nn.Linear(24, 24)

    def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        for _ in range(int(k)):
            x = torch.tanh(self.lin2(torch.relu(self.lin(x)))) + x * 0.5
        return x


class CountTo(torch.nn.Module):
    """A loop whose body is integer bookkeeping only: nothing in it lowers natively."""

    def forward(self, x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        n = 0
        while n < int(k):
            n += 3
        return x * n


class NestedLoops(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while x.sum() < 50.0:
            for j in range(2):
                x = x + j + 1
        return x


def _loop_ops(compiled: torch.nn.Module) -> int:
    return str(compiled.ir["torch"]).count("torch.loop ")  # pyright: ignore


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("model", [ForRange, RowsTimesIndex, Interpolate])
def test_static_loops_unroll_and_run_natively(model: type[torch.nn.Module], backend: str) -> None:
    scripted = torch.jit.script(model().eval())
    x = torch.rand(3, 2, 5, 4)
    compiled = ziggurat.compile(scripted, (x,), backend=backend, frontend="torchscript")
    assert _loop_ops(compiled) == 0
    for t in (x, torch.randn(3, 2, 5, 4)):
        torch.testing.assert_close(compiled(t), scripted(t), rtol=0, atol=0)
    if backend == "cpu":
        assert not compiled.report.fallback_ops, compiled.report.fallback_ops


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_on_data_runs_every_trip_count(backend: str) -> None:
    torch.manual_seed(0)
    scripted = torch.jit.script(WhileSum().eval())
    x = torch.rand(3, 5)
    compiled = ziggurat.compile(scripted, (x,), backend=backend, frontend="torchscript")
    assert _loop_ops(compiled) == 1
    trips = set()
    for t in (x, x * 0.01, x * 100, -x):
        got, want = compiled(t), scripted(t)
        assert got[1] == want[1]
        trips.add(want[1])
        torch.testing.assert_close(got[0], want[0])
    assert len(trips) >= 3, trips
    if backend == "cpu":  # the body (linear, relu, abs, add, sum, compare) runs natively
        assert compiled.report.native_ops.get("torch.loop") == 1, compiled.report.native_ops
        assert "torch.loop" not in compiled.report.fallback_ops
        assert compiled.report.native_ops.get("fused.linear") == 1
        assert len(compiled.executable.loop_bodies) == 1  # pyright: ignore


@pytest.mark.parametrize("model", [DataTripCount, long_static_loop, NestedLoops])
def test_loops_that_do_not_unroll(model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ziggurat.ir.importer import loops

    monkeypatch.setattr(loops, "MAX_UNROLLED_NODES", 20)
    scripted = torch.jit.script(model().eval() if isinstance(model, type) else model)
    x = torch.rand(4, 3)
    examples = (x, torch.tensor([2, 1])) if model is DataTripCount else (x,)
    compiled = ziggurat.compile(scripted, examples, backend="cpu", frontend="torchscript")
    assert _loop_ops(compiled) == 1
    calls = [examples, (x * 3, torch.tensor([0, 0])), (x - 1, torch.tensor([4, 3]))] if model is DataTripCount \
        else [examples, (x * 3,), (x - 9,)]
    for args in calls:
        torch.testing.assert_close(compiled(*args), scripted(*args))


def test_condition_turning_run_time_after_unrolled_iterations() -> None:
    """The first test of the loop is static, later ones are not: the unrolled first iteration
    is followed by a torch.loop starting at iteration 1 (the iteration number is offset)."""

    def body(x: torch.Tensor) -> torch.Tensor:
        go = True
        i = 0
        while go:
            x = x + i
            i += 1
            go = bool(x.sum() < 40.0)
        return x

    scripted = torch.jit.script(body)
    x = torch.rand(4)
    compiled = ziggurat.compile(scripted, (x,), backend="cpu", frontend="torchscript")
    assert _loop_ops(compiled) == 1
    for t in (x, x + 20, x - 3):
        torch.testing.assert_close(compiled(t), scripted(t))


def test_in_place_write_to_an_outer_value_in_a_run_time_loop_is_refused() -> None:
    def body(x: torch.Tensor, acc: torch.Tensor) -> torch.Tensor:
        while x.sum() < 10.0:
            x = x + 1
            acc.add_(1.0)
        return x + acc

    scripted = torch.jit.script(body)
    with pytest.raises(ZigguratError, match=r"writes in place to %acc.*loop-carried"):
        ziggurat.compile(scripted, (torch.rand(3), torch.zeros(3)), backend="cpu", frontend="torchscript")


def test_list_carried_through_a_run_time_loop_is_refused() -> None:
    def body(x: torch.Tensor) -> torch.Tensor:
        ys: list[torch.Tensor] = [x]
        while x.sum() < 10.0:
            x = x + 1
            ys = ys + [x]
        return torch.cat(ys)

    scripted = torch.jit.script(body)
    with pytest.raises(ZigguratError, match="prim::Loop"):
        ziggurat.compile(scripted, (torch.rand(3),), backend="cpu", frontend="torchscript")


def test_saved_module_with_a_loop_loads_and_runs(tmp_path) -> None:  # noqa: ANN001
    scripted = torch.jit.script(WhileSum().eval())
    x = torch.rand(3, 5)
    compiled = ziggurat.compile(scripted, (x,), backend="cpu", frontend="torchscript")
    path = tmp_path / "loop.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    for t in (x, x * 0.01):
        got, want = loaded(t), scripted(t)
        assert got[1] == want[1]
        torch.testing.assert_close(got[0], want[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_loop_body_runs_natively_for_every_trip_count(threads: int) -> None:
    torch.manual_seed(0)
    scripted = torch.jit.script(Iterate().eval())
    x = torch.randn(5, 24)
    compiled = ziggurat.compile(scripted, (x, torch.tensor(3)), backend="cpu", frontend="torchscript",
                                threads=threads)
    assert compiled.report.native_ops.get("torch.loop") == 1, compiled.report.native_ops
    assert compiled.report.native_ops.get("fused.linear") == 2
    assert compiled.report.stats["native loop bodies"] == 1
    for k in (0, 1, 2, 7):
        t = torch.randn(5, 24)
        torch.testing.assert_close(compiled(t, torch.tensor(k)), scripted(t, torch.tensor(k)))


def test_loop_body_without_native_ops_runs_through_torch(caplog: pytest.LogCaptureFixture) -> None:
    scripted = torch.jit.script(CountTo().eval())
    x = torch.rand(4)
    with caplog.at_level("INFO", logger="ziggurat"):
        compiled = ziggurat.compile(scripted, (x, torch.tensor(5)), backend="cpu", frontend="torchscript")
    assert "torch.loop" in compiled.report.fallback_ops
    assert "torch.loop" not in compiled.report.native_ops
    assert "no op of its body lowers natively" in caplog.text
    for k in (0, 1, 5, 10):
        torch.testing.assert_close(compiled(x, torch.tensor(k)), scripted(x, torch.tensor(k)))


def test_loaded_module_runs_its_loop_body_natively(tmp_path) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    scripted = torch.jit.script(Iterate().eval())
    x = torch.randn(5, 24)
    compiled = ziggurat.compile(scripted, (x, torch.tensor(3)), backend="cpu", frontend="torchscript")
    path = tmp_path / "iterate.zig"
    compiled.save(path)
    loaded = ziggurat.load(path)
    assert len(loaded.executable.loop_bodies) == 1  # pyright: ignore
    for k in (0, 4):
        torch.testing.assert_close(loaded(x, torch.tensor(k)), scripted(x, torch.tensor(k)))


def test_explain_counts_a_native_loop_body() -> None:
    """``explain`` takes each loop body to the loop level as ``compile`` does: the loop is not
    listed as an op the backend cannot take."""
    torch.manual_seed(0)
    scripted = torch.jit.script(Iterate().eval())
    report = ziggurat.explain(scripted, (torch.randn(5, 24), torch.tensor(3)), backend="cpu", frontend="torchscript")
    assert report.stats["native loop bodies"] == 1  # pyright: ignore
    assert all(r.op != "torch.loop" for r in report.unsupported)  # pyright: ignore


def test_native_loop_body_carries_scalars_and_other_dtypes() -> None:
    """float64 and int64 tensors, a float and an int carried through a native body (the
    scalars boxed as 0-d tensors between trips)."""

    def body(x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float, int]:
        s = 0.0
        n = 0
        while n < int(k):
            x = x * 0.5 + 1.0
            y = y * 2
            s = s + float(x.sum())
            n += 1
        return x, y, s, n

    scripted = torch.jit.script(body)
    x, y = torch.randn(3, dtype=torch.float64), torch.arange(4)
    compiled = ziggurat.compile(scripted, (x, y, torch.tensor(3)), backend="cpu", frontend="torchscript")
    assert compiled.report.stats["native loop bodies"] == 1
    for k in (0, 1, 4):
        got, want = compiled(x, y, torch.tensor(k)), scripted(x, y, torch.tensor(k))
        torch.testing.assert_close(got[0], want[0])
        assert torch.equal(got[1], want[1])
        assert got[2] == pytest.approx(want[2]) and got[3] == want[3]
