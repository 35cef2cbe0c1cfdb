"""One CPU build for every size in a dynamic range (issue 16): the graph is lowered at sampled
sizes and the loop level made symbolic where they differ by affine sizes
(``backends/sampled_range.py``, ``backends/cpu/symbolize.py``).

Numerics against eager at the served range's ends and odd, even and prime sizes between, on
every ISA; size 1 (a broadcast to the lowerings) gets a build of its own; linear layers,
attention's batched matmuls and implicit-GEMM convolutions take their rows or batch count at
run time, attention over a dynamic sequence its GEMMs' ``n``, ``k`` and strides; sizes are
polynomials of the symbols (``batch * seq``); depthwise convolutions take their batch at run
time; what the range build cannot take (a GEMM with a run-time ``n`` and a fused residual) is
declined with the reason and built per size; save/load keeps the
range build and the sizes it serves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.export import Dim

import ziggurat
from ziggurat.backends.dynamic_module import PINNED_RANGE_BUILDS, RANGE_BUILD, SPECIALIZED, DynamicCompiledModule
from ziggurat.ir.errors import InputError

ONE_BUILD = "one build serves every size in the ranges"


class Rows(torch.nn.Module):
    """Row-wise work on ``[batch, 19]``: a broadcast add, a fused reduction, layer_norm, softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(19)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.relu(x * 2 + y)
        return self.norm(z) + torch.sigmoid(x).sum(-1, keepdim=True), torch.softmax(x - y, -1)


class Columns(torch.nn.Module):
    """A reduction over the dynamic dim, and a residual of its result."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.amax(0), torch.tanh(x) - x.sum(0, keepdim=True)


def _compile(model: torch.nn.Module, example: tuple[torch.Tensor, ...], dims: tuple[object, ...], isa: str = "auto",
             high: int = 40) -> DynamicCompiledModule:
    batch = Dim("batch", min=1, max=high)
    spec = tuple({0: batch} if d else None for d in dims)
    return ziggurat.compile(model, example, backend="cpu", isa=isa, dynamic_shapes=spec)


def _rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))


@pytest.mark.parametrize("sizes", [(2, 3, 7, 16, 17, 31, 39, 40)])
def test_rows_one_build_every_size(isa: str, sizes: tuple[int, ...]) -> None:
    model = Rows().eval()
    y = _rand(19)
    compiled = _compile(model, (_rand(5, 19), y), (True, False), isa)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "loop.dim %x[0] in [2, 40]" in compiled.ir["loop"]
    for n in sizes:
        x = _rand(n, 19)
        torch.testing.assert_close(compiled(x, y), model(x, y), rtol=1e-5, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats


def test_columns_reduce_over_the_dynamic_dim(isa: str) -> None:
    model = Columns()
    compiled = _compile(model, (_rand(6, 21),), (True,), isa)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    for n in (2, 4, 13, 32, 40):
        x = _rand(n, 21)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


class Wide(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x) * 2 + x.mean(-1, keepdim=True)


def test_parallel_loops_choose_threads_at_run_time() -> None:
    """A static build makes a row loop parallel from 32768 elements (PARALLEL_MIN_ELEMENTS):
    the range build's loop is a ``loop.parallel`` at every size, with its elements per task,
    and runs on one thread below that work (here under 32 rows)."""
    model = Wide()
    compiled = ziggurat.compile(model, (_rand(5, 1024),), backend="cpu", threads=2,
                                dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "loop.parallel %i0 = 0 to %batch" in compiled.ir["loop"]
    assert 'loop.task_elements = 1024 : i64' in compiled.ir["loop"]
    for n in (2, 3, 31, 32, 33, 64):
        x = _rand(n, 1024)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
        assert compiled.range_build is not None
        assert compiled.range_build.executable.threads_used == (2 if n >= 32 else 1)


class OverTheBatch(torch.nn.Module):
    """Statistics over the dynamic dim: a mean (its divisor a size), an unbiased variance
    (``batch - 1``), and layer_norm along it after a transpose (a stride that is a size)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x - x.mean(0, keepdim=True), x.var(0), torch.nn.functional.layer_norm(x.t().contiguous(), (x.shape[0],))


def test_sizes_as_numbers_and_strides(isa: str) -> None:
    model = OverTheBatch()
    compiled = _compile(model, (_rand(6, 21),), (True,), isa)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert 'loop.cast "sitofp" %batch' in compiled.ir["loop"]
    for n in (2, 3, 16, 17, 40):
        x = _rand(n, 21)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


class Derived(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x]) * 2 + y


def test_a_derived_dim_is_checked_by_the_build_itself() -> None:
    """``y`` is ``2 * batch`` rows: the range build reads ``batch`` from ``x`` and checks ``y``'s
    rows at every call (``loop.dim ... equals``), so a call of ``m.range_build`` that skips the
    module's own checks still gets an InputError, never a read past ``y``."""
    batch = Dim("batch", min=1, max=20)
    model = Derived()
    compiled = ziggurat.compile(model, (_rand(3, 4), _rand(6, 4)), backend="cpu",
                                dynamic_shapes=({0: batch}, {0: 2 * batch}))
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "loop.dim %y[0] in [4, 40] equals %size" in compiled.ir["loop"]
    for n in (2, 7, 20):
        x, y = _rand(n, 4), _rand(2 * n, 4)
        torch.testing.assert_close(compiled(x, y), model(x, y))
    assert compiled.range_build is not None
    with pytest.raises(InputError, match=r"input 1 \('y'\) has size 9 at dim 0; the other inputs' sizes make it 10"):
        compiled.range_build(_rand(5, 4), _rand(9, 4))


class Diagonal(torch.nn.Module):
    """``diagonal(x, 2)`` of ``x[n, 5]`` has ``min(n, 3)`` elements: constant above n = 3."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.diagonal(x * 2, 2).clone()


@pytest.mark.parametrize("high", [5, 40])
def test_a_size_with_a_kink_is_sampled_below_it(high: int) -> None:
    """Samples near the top see a constant 3; the check at the bottom of the range sees 2 and
    declines the range build (fuzz seed 25, program 309: a range [2, 5] sampled at 5 and 3
    returned 3 elements at n = 2)."""
    model = Diagonal()
    compiled = _compile(model, (_rand(4, 5),), (True,), high=high)
    assert compiled.report.stats[RANGE_BUILD].startswith("not made"), compiled.report.stats[RANGE_BUILD]
    for n in range(1, high + 1):
        x = _rand(n, 5)
        torch.testing.assert_close(compiled(x), model(x))


def test_size_one_gets_its_own_build() -> None:
    model = Rows().eval()
    y = _rand(19)
    compiled = _compile(model, (_rand(5, 19), y), (True, False))
    x = _rand(1, 19)
    torch.testing.assert_close(compiled(x, y), model(x, y), rtol=1e-5, atol=1e-5)
    assert compiled.report.stats[SPECIALIZED] == 1
    assert compiled.specializations == [{"batch": 1}]


def test_outside_the_range_is_an_input_error() -> None:
    compiled = _compile(Rows().eval(), (_rand(5, 19), _rand(19)), (True, False))
    with pytest.raises(InputError, match=r"outside the range of 'batch' \[1, 40\]"):
        compiled(_rand(41, 19), _rand(19))


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.down, self.norm = torch.nn.Linear(19, 70), torch.nn.Linear(70, 7), torch.nn.LayerNorm(70)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.down(torch.nn.functional.gelu(self.norm(self.up(x)))), -1)


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out, self.norm = torch.nn.Linear(32, 96), torch.nn.Linear(32, 32), torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, 8).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.norm(self.out(a.transpose(1, 2).reshape(b, t, 32)) + x)


def test_gemm_rows_follow_the_batch(isa: str) -> None:
    """Linear layers take their M at run time (``m_runtime``): every row tail from one build."""
    torch.manual_seed(0)
    model = Mlp().eval()
    compiled = _compile(model, (_rand(5, 19),), (True,), isa, high=64)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "sizes(%batch) spec" in compiled.ir["loop"] and "m_runtime = true" in compiled.ir["loop"]
    for n in (2, 3, 5, 8, 11, 12, 13, 25, 63, 64):
        x = _rand(n, 19)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats


def test_attention_batch_range(isa: str) -> None:
    """Linear layers on ``batch * seq`` rows (``m = 16 * batch``) and attention's batched
    matmuls over ``batch * heads`` matrices (a run-time batch count)."""
    torch.manual_seed(0)
    model = Attention().eval()
    compiled = _compile(model, (_rand(3, 16, 32),), (True,), isa, high=16)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "batch_runtime = true" in compiled.ir["loop"]
    for n in (2, 3, 7, 16):
        x = _rand(n, 16, 32)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


class ConvBlock(torch.nn.Module):
    """A stem, batch-norm folded into it, a strided 3x3, a 1x1 with a residual, pooling, a head."""

    def __init__(self) -> None:
        super().__init__()
        self.stem, self.bn = torch.nn.Conv2d(3, 16, 5, stride=2, padding=2), torch.nn.BatchNorm2d(16)
        self.down, self.point = torch.nn.Conv2d(16, 24, 3, stride=2, padding=1), torch.nn.Conv2d(24, 24, 1)
        self.head = torch.nn.Linear(24, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.stem(x))), 2, ceil_mode=True)
        z = torch.relu(self.down(y))
        return self.head(torch.relu(self.point(z) + z).mean((2, 3)))


def test_convolutions_take_the_batch_at_run_time(isa: str) -> None:
    """Implicit-GEMM convolutions over ``batch * out_h * out_w`` pixels (``batch_runtime``), the
    1x1 one a batched GEMM, and the pooling and head loops, from one build."""
    torch.manual_seed(0)
    model = ConvBlock().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    compiled = _compile(model, (_rand(3, 3, 19, 23),), (True,), isa, high=16)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    if isa != "scalar":
        assert 'kernel = "igemm"' in compiled.ir["loop"]
        assert compiled.ir["loop"].count("batch_runtime = true") >= 2
    with torch.no_grad():
        for n in (2, 3, 5, 8, 13, 16):
            x = _rand(n, 3, 19, 23)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert SPECIALIZED not in compiled.report.stats


class Positions(torch.nn.Module):
    """Linear rows ``batch * seq`` (a product of two symbols), a learned position table sliced
    to the sequence (folded into a literal per size by a static build), a transpose and a
    reduction over the sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.proj, self.pos = torch.nn.Linear(16, 24), torch.nn.Embedding(40, 24)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.proj(x) + self.pos(torch.arange(x.shape[1]))
        return torch.softmax(y.transpose(1, 2), -1), y.sum(1)


def test_products_of_two_symbols_and_sliced_positions(isa: str) -> None:
    """``batch * seq`` rows are a product of sizes (``arith.muli``), fitted on a grid of sampled
    sizes; the position rows stay a kernel over the table (nothing sized is constant-folded)."""
    torch.manual_seed(0)
    model = Positions().eval()
    compiled = ziggurat.compile(model, (_rand(3, 7, 16),), backend="cpu", isa=isa,
                                dynamic_shapes=({0: Dim("batch", min=1, max=9), 1: Dim("seq", min=1, max=40)},))
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    assert "arith.muli %batch, %seq : index" in compiled.ir["loop"]
    for b, t in ((2, 2), (9, 40), (5, 13), (2, 39), (8, 3), (4, 16)):
        x = _rand(b, t, 16)
        for got, want in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats


def test_a_sequence_through_attention_is_one_build(model_isa: str) -> None:
    """A dynamic batch and sequence through attention: Q @ K^T takes ``n``, its leading dim and
    ``seq * seq`` batch strides at run time, P @ V its ``k``; the lowerings change structure
    at very short sequences, so the build serves them from a raised floor and a shorter one
    gets a range build of its own over the batch (pinned), as does batch 1 over the sequence."""
    torch.manual_seed(0)
    model = Attention().eval()
    compiled = ziggurat.compile(model, (_rand(3, 20, 32),), backend="cpu", isa=model_isa,
                                dynamic_shapes=({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=64)},))
    text = compiled.report.stats[RANGE_BUILD]
    assert text.startswith(ONE_BUILD), text
    loop_ir = compiled.ir["loop"]
    assert 'runtime = ["n", ' in loop_ir and 'runtime = ["k", "lda", ' in loop_ir
    assert "arith.muli %seq, %seq : index" in loop_ir or "arith.muli %batch, %seq : index" in loop_ir
    floor = compiled.range_lows[1] if compiled.range_lows else 2
    for b, t in ((2, 2), (3, 64), (5, 33), (8, 47), (2, floor), (4, max(2, floor - 1)), (1, 5), (1, 40), (6, 3)):
        x = _rand(b, t, 32)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    # pinned: seq 2, seq floor - 1 and seq 3 (each over the batch), batch 1 (over the sequence);
    # (1, 5) is below both floors: a build of its own
    assert compiled.report.stats[PINNED_RANGE_BUILDS] == 4 and compiled.report.stats[SPECIALIZED] == 1


class GramPlusResidual(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ x.t() + y


def test_what_the_range_build_cannot_take_is_built_per_size() -> None:
    """A GEMM whose ``n`` follows the sizes with a residual fused into its epilogue (the staged
    C tile would read the residual past ``n``): the range build is declined, with the first
    difference in the report, and every size is right from its own build."""
    n = Dim("n", min=2, max=40)
    model = GramPlusResidual()
    compiled = ziggurat.compile(model, (_rand(9, 8), _rand(9, 9)), backend="cpu",
                                dynamic_shapes=({0: n}, {0: n, 1: n}))
    reason = compiled.report.stats[RANGE_BUILD]
    assert reason.startswith("not made (the lowerings at sampled sizes differ:") and "binary epilogue" in reason, reason
    for size in (2, 5, 40):
        x, y = _rand(size, 8), _rand(size, size)
        torch.testing.assert_close(compiled(x, y), model(x, y), rtol=1e-4, atol=1e-5)
    assert compiled.report.stats[SPECIALIZED] == 4  # the example's, 2, 5 and 40


def test_depthwise_convolutions_take_the_batch_at_run_time(isa: str) -> None:
    """A MobileNet-style block (1x1, a strided depthwise 3x3, relu6, 1x1): the depthwise call
    takes its batch at run time (``batch_runtime``) as the implicit-GEMM ones do."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(8, 24, 1), torch.nn.Conv2d(24, 24, 3, padding=1, groups=24, stride=2),
                                torch.nn.ReLU6(), torch.nn.Conv2d(24, 8, 1)).eval()
    compiled = ziggurat.compile(model, (_rand(3, 8, 19, 17),), backend="cpu", isa=isa,
                                dynamic_shapes=({0: Dim("batch", min=1, max=16)},))
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD
    if isa == "avx512":
        assert 'kernel = "depthwise"' in compiled.ir["loop"]
    with torch.no_grad():
        for n in (2, 3, 7, 16):
            x = _rand(n, 8, 19, 17)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats


def test_save_and_load_keep_the_range_build(tmp_path: Path) -> None:
    model = Rows().eval()
    y = _rand(19)
    compiled = _compile(model, (_rand(5, 19), y), (True, False))
    compiled.save(tmp_path / "rows.zig")
    loaded = ziggurat.load(tmp_path / "rows.zig")
    assert loaded.range_build is not None
    for n in (2, 9, 40):
        x = _rand(n, 19)
        torch.testing.assert_close(loaded(x, y), model(x, y), rtol=1e-5, atol=1e-5)
    assert SPECIALIZED not in loaded.report.stats


def test_save_and_load_keep_the_served_floors(tmp_path: Path) -> None:
    """A range build serving a sequence from a raised floor keeps that floor through save/load;
    a shorter sequence after loading gets its pinned range build again."""
    torch.manual_seed(0)
    model = Attention().eval()
    compiled = ziggurat.compile(model, (_rand(3, 20, 32),), backend="cpu",
                                dynamic_shapes=({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=64)},))
    assert compiled.range_lows is not None and compiled.range_lows[1] > 2
    compiled.save(tmp_path / "attention.zig")
    loaded = ziggurat.load(tmp_path / "attention.zig")
    assert loaded.range_lows == compiled.range_lows
    for b, t in ((2, 2), (7, 61)):
        x = _rand(b, t, 32)
        torch.testing.assert_close(loaded(x), model(x), rtol=1e-4, atol=1e-5)
    assert loaded.report.stats.get(PINNED_RANGE_BUILDS) == 1 and SPECIALIZED not in loaded.report.stats


class Lookup(torch.nn.Module):
    """Rows of a table whose length is the dynamic dim, picked by indices given at run time."""

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.index_select(table, 0, idx) * 2 + torch.gather(table, 0, idx[:, None].expand(-1, 5))


def test_indices_are_checked_against_a_run_time_size(isa: str) -> None:
    """``index_select``/``gather`` into a table of ``n`` rows: each index is checked against the
    run-time ``n`` (``loop.check_index ... bound``), and one past it is an InputError naming
    the op at every size of the range."""
    model = Lookup()
    idx = torch.tensor([0, 1, 1, 0, 1, 0, 0])
    compiled = ziggurat.compile(model, (_rand(9, 5), idx), backend="cpu", isa=isa,
                                dynamic_shapes=({0: Dim("n", min=2, max=40)}, None))
    assert compiled.report.stats[RANGE_BUILD].startswith(ONE_BUILD), compiled.report.stats[RANGE_BUILD]
    assert "bound(%" in compiled.ir["loop"]
    for n in (2, 3, 17, 40):
        table = _rand(n, 5)
        far = torch.tensor([0, n - 1, 1, n // 2, 0, 1, n - 2])
        torch.testing.assert_close(compiled(table, far), model(table, far))
        with pytest.raises(InputError, match="(index_select|gather): index out of range for its dimension"):
            compiled(table, torch.tensor([0, 1, n, 0, 1, 0, 0]))


class FlatElementwise(torch.nn.Module):
    """An element-wise kernel over a whole ``[batch, seq, 40]`` tensor: one flat vector loop
    whose extent, ``40 * batch * seq``, is a multiple of the vector width at some sizes only."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * 2 + 1)


def test_a_vector_loop_is_masked_at_every_size(isa: str) -> None:
    """In a range schedule every vector loop masks its lanes (its code may not depend on
    whether the extent has a tail): before, a sampled size whose extent was a multiple of 16
    lowered to unmasked loads and the range build was declined."""
    model = FlatElementwise()
    dims = ({0: Dim("batch", min=1, max=8), 1: Dim("seq", min=1, max=64)},)
    compiled = ziggurat.compile(model, (_rand(3, 7, 40),), backend="cpu", isa=isa, dynamic_shapes=dims)
    assert compiled.report.stats[RANGE_BUILD] == ONE_BUILD, compiled.report.stats[RANGE_BUILD]
    for shape in ((2, 2), (4, 63), (3, 41), (8, 64), (5, 16)):
        x = _rand(*shape, 40)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert SPECIALIZED not in compiled.report.stats
