"""The fuzzer's own parts: generator validity and determinism, the oracle's verdicts
(it must catch a wrong lowering), the minimizer, and standalone repros."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.fuzz.execute import build_module, example_inputs, fresh_inputs, run_eager
from tests.fuzz.generator import PROFILES, generate
from tests.fuzz.minimize import dead_code, minimize
from tests.fuzz.oracle import Config, check_program, overflows, reference
from tests.fuzz.program import Node, Program, TensorSpec
from tests.fuzz.repro import write_repro
from tests.support.host import WIDEST_ISA
from tests.fuzz.tolerance import compare

ROOT = Path(__file__).resolve().parents[2]


def test_generation_is_deterministic() -> None:
    for i in range(5):
        assert generate(3, i).to_json() == generate(3, i).to_json()
    assert generate(3, 0).to_json() != generate(3, 1).to_json()


def test_programs_are_valid_on_example_and_call_inputs() -> None:
    """Every generated program runs in eager on both input sets (its ops were checked as
    they were placed; the in-graph domain guards keep call-time values valid too)."""
    failures = []
    for i in range(40):
        program = generate(11, i, PROFILES["slice"])
        assert program.nodes and program.outputs
        module = build_module(program)
        for inputs in (example_inputs(program), fresh_inputs(program)):
            try:
                run_eager(module, inputs)
            except Exception as e:  # pragma: no cover - the assertion below reports it
                failures.append(f"{program.name}: {type(e).__name__}: {e}")
    assert not failures, failures


def test_program_json_round_trip() -> None:
    program = generate(4, 2)
    assert Program.from_json(program.to_json()) == program


def _neg_program() -> Program:
    x = TensorSpec("x0", [3, 17], "float32", "normal", 5)
    return Program("neg", [x], [], [Node(["v1 = torch.neg(x0) * 2.0"], ["v1"], ["x0"], "neg")], ["v1"])


def test_compare_accepts_eager_and_rejects_a_small_error() -> None:
    program = _neg_program()
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    same = run_eager(build_module(program), inputs)
    assert compare(same, ref).ok
    off = [same[0] * (1 + 1e-4)]
    verdict = compare(off, ref)
    assert not verdict.ok and verdict.reason == "value mismatch"
    assert not compare([same[0].to(torch.float64)], ref).ok
    assert not compare([same[0][:2]], ref).ok


def test_compare_masks_a_discontinuity_on_a_rounding_edge() -> None:
    """floor(x * 3) where x * 3 lands within rounding of an integer: not held exact."""
    x = TensorSpec("x0", [4], "float32", "literal", 0)
    program = Program("edge", [x], [], [Node(["v1 = torch.floor(x0 * 3.0)"], ["v1"], ["x0"], "floor")], ["v1"])
    inputs = (torch.tensor([1 / 3, 0.5, -2.0, 7.25]),)
    ref = reference(program, inputs)
    flipped = run_eager(build_module(program), inputs)[0].clone()
    flipped[0] -= 1  # 1/3 * 3 rounds to 1.0 in float32; another rounding could give 0.99999
    verdict = compare([flipped], ref)
    assert verdict.ok and verdict.masked >= 1
    flipped[3] += 1  # far from any edge: must be caught
    assert not compare([flipped], ref).ok


def test_oracle_catches_a_wrong_lowering() -> None:
    """Plant a bug in this process (neg lowered as identity): the oracle reports 'wrong'."""
    from ziggurat.backends.cpu.lowering import registry

    identity = registry.find_lowering("aten::positive")  # every family loaded
    assert identity is not None
    with registry.lowerings().override("aten::neg", identity.fn, validator=identity.validator):
        result = check_program(_neg_program(), [Config("cpu", "torchscript", "scalar"), Config("reference", "export")])
    kinds = {o.config: o.kind for o in result.outcomes}
    assert kinds == {"cpu-scalar-ts": "wrong", "ref-ex": "ok"}, result.outcomes


def test_minimizer_keeps_the_failing_op() -> None:
    program = generate(5, 3)
    live = dead_code(program).nodes
    target = live[len(live) // 2].op

    def fails(p: Program) -> bool:
        return target in p.ops() and not check_program(p, [], fresh=False).invalid

    small, stats = minimize(program, fails, budget_s=60)
    assert target in small.ops()
    assert len(small.nodes) <= len(dead_code(program).nodes) and len(small.nodes) <= 2, small.ops()
    assert stats.trials > 0


_RUN_REPROS = """\
import contextlib, io, json, runpy, sys
results = []
for path in sys.argv[1:]:
    out = io.StringIO()
    sys.argv = [path]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    results.append({"code": code, "stdout": out.getvalue()})
print(json.dumps(results))
"""


def _run_repros(paths: list[Path], cwd: Path) -> list[dict[str, Any]]:
    """Each repro run as ``__main__`` (its exit status and stdout), all in one fresh process
    started outside the checkout, so ``tests`` is not importable: one import of torch and
    ziggurat for all of them instead of one per repro."""
    proc = subprocess.run([sys.executable, "-c", _RUN_REPROS, *map(str, paths)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_repros_run_standalone(tmp_path: Path) -> None:
    """A repro needs only torch and ziggurat; exit status 0 when Ziggurat agrees with eager.
    A -dyn failure's standalone repro compiles with the configuration's dynamic_shapes and is
    called at the other sizes the oracle used (seed 14 program 1: exported with two Dims).
    (Both repros run in one process: see ``_run_repros``.)"""
    from tests.fuzz.oracle import dynamic_dims
    from tests.fuzz.triage import call_program, compile_options

    plain = write_repro(tmp_path, "neg", _neg_program(), {"backend": "reference", "frontend": "export"},
                        "wrong", "planted", "detail")
    program = generate(14, 1)
    spec = dynamic_dims(program)
    assert spec is not None
    config = Config.parse("ref-dyn")
    dyn = write_repro(tmp_path, "dyn", program, compile_options(config, program=program), "wrong", "test", "",
                      call_program(config, program))
    assert 'dynamic_shapes=({0: Dim("n' in dyn.read_text()
    plain_run, dyn_run = _run_repros([plain, dyn], tmp_path)
    assert plain_run["code"] == 0, plain_run["stdout"]
    assert "example inputs, output 0: same" in plain_run["stdout"]
    assert dyn_run["code"] == 0, dyn_run["stdout"]
    assert "call-time inputs, output 0: same" in dyn_run["stdout"]


def _run_planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bodies: dict[str, str],
                 options: list[str], literals: dict[str, list[float]] | None = None) -> dict[str, Any]:
    """The runner over one-line programs of ``x0`` (``bodies``: name -> line; ``literals``: name
    -> the values of that program's ``x0``), one worker, polled every half second; its records
    by program name (its output in ``tmp_path / "out"``)."""
    from tests.fuzz import run

    programs = tmp_path / "programs"
    programs.mkdir()
    for name, line in bodies.items():
        values = (literals or {}).get(name)
        x = TensorSpec("x0", [3], "float32", "normal", 1) if values is None else \
            TensorSpec("x0", [len(values)], "float32", "literal", 0, literal=values)
        p = Program(name, [x], [], [Node([line], ["v1"], ["x0"], "planted")], ["v1"])
        (programs / f"{name}.json").write_text(p.to_json())
    out = tmp_path / "out"
    monkeypatch.setattr(run, "POLL_SECONDS", 0.5)
    run.main(["--programs", str(programs), "--out", str(out), "--jobs", "1", "--minimize", "0", *options])
    return {json.loads(line)["program"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}


def test_runner_records_a_segfault_and_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that kills its worker, one that spins (CPU time) and one that sleeps (wall time)
    are recorded as such, and the programs after them still run (in a new worker)."""
    bodies = {"a_segfault": "v1 = x0 + (__import__('os').kill(__import__('os').getpid(), 11) or 0)",
              "b_hang": "v1 = x0 + (__import__('time').sleep(600) or 0)", "c_fine": "v1 = x0 * 2",
              "d_spin": "v1 = x0 + sum(iter(int, 1))"}
    out = tmp_path / "out"
    # short limits (the worker is warmed up before its clock starts, so c_fine takes well under
    # a second), looked at every half second instead of every two
    records = _run_planted(tmp_path, monkeypatch, bodies, ["--timeout", "2", "--wall-timeout", "6", "--configs", "ref-ts"])
    kinds = {name: [o["kind"] for o in r["result"]["outcomes"]] for name, r in records.items()}
    assert kinds == {"a_segfault": ["segfault"], "b_hang": ["hang"], "c_fine": ["ok"], "d_spin": ["hang"]}, kinds
    details = {name: r["result"]["outcomes"][0]["detail"] for name, r in records.items()}
    assert "6 wall seconds" in details["b_hang"] and "2 CPU seconds" in details["d_spin"], details
    assert (out / "summary.md").exists() and list((out / "failures").glob("segfault-*.py"))


def test_runner_makes_a_program_whose_eager_autocast_dies_invalid(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Eager under autocast runs before any configuration, announced as its own: a worker that
    dies there (torch's oneDNN AMX convolutions segfault on some bf16 shapes) makes the program
    invalid, not a segfault of the configuration (seed 97's two were eager's)."""
    kill = "__import__('os').kill(__import__('os').getpid(), 11)"
    bodies = {"a_eager_dies": f"v1 = x0 + ({kill} if torch.is_autocast_enabled('cpu') else 0)",
              "b_fine": "v1 = x0 * 2"}
    records = _run_planted(tmp_path, monkeypatch, bodies, ["--configs", "ref-bf16"])
    dead = records["a_eager_dies"]["result"]
    assert dead["outcomes"] == [] and dead["invalid"].startswith("eager-autocast-bf16: eager died"), dead
    assert [o["kind"] for o in records["b_fine"]["result"]["outcomes"]] == ["ok"]


def test_compare_allows_rounding_in_a_cancellation() -> None:
    """kl_div(log_softmax(x), softmax(x)) is exactly 0 in eager (x passed twice); another
    rounding of the two sides leaves ~1e-8: within tolerance, while 1e-3 is not."""
    x = TensorSpec("x0", [4, 23], "float32", "normal", 3)
    twin = TensorSpec("x1", [4, 23], "float32", "normal", 4, alias="x0")
    line = "v1 = F.kl_div(F.log_softmax(x0, -1), F.softmax(x1, -1), reduction='none')"
    program = Program("cancel", [x, twin], [], [Node([line], ["v1"], ["x0", "x1"], "kl_div")], ["v1"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    e = run_eager(build_module(program), inputs)[0]
    assert bool((e == 0).any())
    assert compare([torch.where(e == 0, torch.full_like(e, 2.0 ** -27), e)], ref).ok
    assert not compare([torch.where(e == 0, torch.full_like(e, 1e-3), e)], ref).ok


def test_discontinuity_behind_an_intermediate_is_masked() -> None:
    """Seed 3 program 119: remainder(x2, interpolate(x1)) where x2 / v1 is an exact integer
    (7 / -0.05). Eager's interpolation rounds v1 to -0.05000007 (remainder -1e-5), a
    correctly rounded one to -0.04999995 (remainder -0.04999): both right. Only a jitter
    of the intermediate, with its mirror, pushes v1 both ways; the element is masked,
    and a wrong value elsewhere is still caught."""
    program = generate(3, 119)
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    e = ref.e32[0]
    other_branch = [t.clone() for t in ref.e32]
    other_branch[0][1, 1, 3] = -0.049993276596069336
    assert compare(other_branch, ref).ok
    wrong = [t.clone() for t in other_branch]
    finite = torch.isfinite(e) & (e.abs() > 0.5)
    index = tuple(int(i) for i in finite.nonzero()[0])
    wrong[0][index] += 0.25
    assert not compare(wrong, ref).ok


def test_discontinuity_diluted_downstream_is_masked() -> None:
    """Seed 10 program 3019: ``log_softmax(c % v)`` where ``c / v`` is within rounding of an
    integer for one element, so another summation order of ``v`` (a sum of 2,484 terms)
    flips that remainder from 0 to almost ``v``. The row of the log_softmax moves by 2e-4,
    a 0.01 % change, which the 5 % jump test keeps; the push of every value up and down
    moves it one way only, so it is masked, while a wrong value in another row is caught."""
    x = TensorSpec("x0", [2, 5], "float32", "literal", 0)
    v = TensorSpec("x1", [], "float32", "literal", 0)
    program = Program("kink", [x, v], [], [
        Node(["v1 = x1 * 1.0"], ["v1"], ["x1"], "mul"),
        Node(["v2 = F.log_softmax(x0 % v1, 1)"], ["v2"], ["x0", "v1"], "log_softmax"),
    ], ["v2"])
    divisor = torch.tensor(4.8302626e-4)
    row = torch.tensor([0.3, 0.7, 1.1, 0.2, 0.9])
    inputs = (torch.stack([row, row * 1.0001]), divisor)
    # c / v is 2476 (1 + 2**-18): past the reach of the rounding-sized runs, within the push
    inputs[0][0, 2] = float(divisor.double() * 2476 * (1 + 2.0 ** -18))
    ref = reference(program, inputs)
    e = ref.e32[0]
    other_side = inputs[0] % (divisor * (1 + 2.0 ** -17))  # v computed 64 ulps larger
    flipped = [torch.log_softmax(torch.where(torch.arange(5) == 2, other_side, inputs[0] % divisor), 1)]
    assert 1e-4 < float((flipped[0][0] - e[0]).abs().max()) < 1e-3
    assert compare(flipped, ref).ok
    wrong = [flipped[0].clone()]
    wrong[0][1, 0] += 1e-3
    assert not compare(wrong, ref).ok


def test_eager_disagreeing_with_itself_across_layouts_is_masked() -> None:
    """Seed 3 program 872: softmax/_softmax_backward_data over rows holding inf give NaN in
    different elements for strided and contiguous inputs (1602 against 1944 NaNs on the call
    inputs). The reference backends run on contiguous data, so they were called wrong; the
    contiguous eager run now masks those elements.  (The program cut to the nodes that
    compute that output, written out: generating program 872 places an OpInfo op, which loads
    torch's OpInfo database and walks its samples, 15 s.)"""
    x2 = TensorSpec("x2", [16, 9, 18], "float32", "special", 1831495283, layout="transposed")
    x3 = TensorSpec("x3", [16, 9, 18], "float32", "special", 1524757033, layout="transposed", alias="x2")
    c0 = TensorSpec("c0", [16, 9, 18], "float32", "normal", 2042023814)
    c1 = TensorSpec("c1", [16, 9, 18], "float32", "normal", 1562391820)
    nodes = [Node(["v2 = torch.ops.aten.elu_backward(c0, 1.0, 1.0, 1.0, False, x2)"], ["v2"], ["c0", "x2"],
                  "activation_backward"),
             Node(["v3 = torch.logaddexp2(x3, v2)"], ["v3"], ["v2", "x3"], "logaddexp2"),
             Node(["v5 = torch.ops.aten._softmax_backward_data(c1, torch.softmax(v3, 2), 2, torch.float32)"], ["v5"],
                  ["c1", "v3"], "softmax_backward")]
    program = Program("s3_g872", [x2, x3], [c0, c1], nodes, ["v5"])
    assert "softmax_backward" in program.ops()
    result = check_program(program, [Config("reference", "torchscript")])
    assert [o.kind for o in result.outcomes] == ["ok"], [o.detail for o in result.outcomes]
    assert result.outcomes[0].masked > 0


def test_scalar_loops_run_reads_non_contiguous_tensors() -> None:
    """The alternate eager run hands every op strided copies of its tensors (same values),
    so element-wise kernels take their scalar loops, and leaves mutating ops alone."""
    class Probe(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.nn.functional.gelu(x)
            y.add_(1.0)  # in place: must still write y itself
            return y

    from tests.fuzz.execute import ScalarLoops, run_eager_scalar_loops

    x = torch.tensor([float("inf"), -1.0, 0.5, 2.0])
    with ScalarLoops():
        assert torch.nn.functional.gelu(x)[0] == float("inf")  # the scalar loop's gelu(+inf)
    out = run_eager_scalar_loops(Probe(), (x,))[0]
    assert out[0] == float("inf")
    torch.testing.assert_close(out[1:], torch.nn.functional.gelu(x[1:]) + 1.0)


def test_eager_disagreeing_between_its_loops_is_noise_not_an_answer() -> None:
    """Fuzz seed 3 programs 2815, 3063, 3116: eager's vector and scalar loops disagree
    (gelu of +inf: NaN and inf; softshrink's zero: +0.0 and -0.0, seen through signbit;
    hardtanh_backward where self is NaN: 0 and grad).  Either answer is eager's, so a
    native result equal to the scalar loop's passes, and a value far from both still fails."""
    x = TensorSpec("x0", [40], "float32", "literal", 0)
    g = TensorSpec("x1", [40], "float32", "literal", 0)
    nodes = [Node(["v1 = torch.nn.functional.gelu(x0)"], ["v1"], ["x0"], "gelu"),
             Node(["v2 = torch.ops.aten.hardtanh_backward(x1, x0, -1.0, 1.0)"], ["v2"], ["x0", "x1"], "hb"),
             Node(["v3 = torch.signbit(torch.nn.functional.softshrink(x0 * 0.0 - 0.1, 0.25))"], ["v3"], ["x0"], "ss")]
    program = Program("loops", [x, g], [], nodes, ["v1", "v2", "v3"])
    values = torch.linspace(-3, 3, 40)
    values[[5, 21]] = float("inf")
    values[[9, 33]] = float("nan")
    inputs = (values, torch.linspace(0.5, 2.0, 40))
    ref = reference(program, inputs)
    from tests.fuzz.execute import run_eager_scalar_loops

    scalar = run_eager_scalar_loops(build_module(program), inputs)
    assert compare(scalar, ref).ok
    off = [t.clone() for t in scalar]
    off[1][2] += 0.5  # an ordinary element
    assert not compare(off, ref).ok


def test_the_program_of_a_dead_workers_record_is_regenerated() -> None:
    """A worker that dies records its job string ("8621"), not an int: saving the failures of
    such a run crashed the runner (FileNotFoundError: '8621') after 10,000 programs."""
    import argparse

    from tests.fuzz.run import _died, program_of

    args = argparse.Namespace(seed=3, profile="default")
    record = _died("17", "start", "segfault", "worker died", "s3_g17")
    assert program_of(record, args).to_json() == generate(3, 17, PROFILES["default"]).to_json()


def test_a_worker_that_dies_generating_makes_the_program_invalid(tmp_path: Path) -> None:
    """Seed 106, program 15: the generator's probe ran torch's float32 conv2d on a channels-last
    image, which segfaults (torch 2.13).  The worker died while generating; the runner then
    regenerated the program in its own process to write the failure's repro, and died too.  A
    death while generating is eager's: the program is invalid and nothing regenerates it."""
    import argparse

    from tests.fuzz.oracle import GENERATING
    from tests.fuzz.run import _died, save_failures

    record = _died("15", GENERATING, "segfault", "worker died (exit status -11) in generate", "s106_g15")
    assert record["result"]["outcomes"] == [] and record["result"]["invalid"].startswith("generate: eager died")
    args = argparse.Namespace(seed=106, profile="gemm")
    assert save_failures([record], args, tmp_path) == [] and not (tmp_path / "failures").exists()


def test_exact_result_of_grid_operands_is_an_answer() -> None:
    """Seed 3 program 3650: the mean of sgn(x0) is 0 exactly (eight values in {-1, 0, 1});
    eager's var_mean (Welford) returns 2**-55.  A compiler's exact 0 passes; 1e-6 does not."""
    x = TensorSpec("x0", [8], "float32", "grid", 0, literal=[3.5, 3.25, -3.0, 3.5, -0.75, 3.5, -1.5, -0.25])
    line = "v6, v7 = torch.var_mean(torch.sgn(x0), dim=0, correction=0)"
    program = Program("grid_mean", [x], [], [Node([line], ["v6", "v7"], ["x0"], "var_mean")], ["v7"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    e = ref.e32[0]
    assert float(e) != 0.0  # eager's Welford residue (the premise)
    assert compare([torch.zeros_like(e)], ref).ok
    assert not compare([torch.full_like(e, 1e-6)], ref).ok


def test_rounding_inside_a_composite_op_is_noise() -> None:
    """Seed 3 program 9772: F.tanhshrink(x) is x - tanh(x) inside one node; at x = 0.1891476
    a tanh 0.64 ulp off (within the math library's bound) moves the result by 53 float32
    eps of it.  The rounding runs step the node's inner tanh too, so that passes; an error
    of 1e-3 relative does not."""
    x = TensorSpec("x0", [1], "float32", "normal", 0, literal=[0.18914760649204254])
    line = "v1 = F.tanhshrink(x0)"
    program = Program("tanhshrink", [x], [], [Node([line], ["v1"], ["x0"], "tanhshrink")], ["v1"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    other_tanh = torch.tensor([0.18692371249198914])  # 0.64 ulp below the correctly rounded tanh
    assert compare([inputs[0] - other_tanh], ref).ok
    assert not compare([ref.e32[0] * (1 + 1e-3)], ref).ok


def test_float64_reference_runs_the_same_constants() -> None:
    """Seed 3 program 4485: the float64 run built its buffers under default dtype float64,
    where randn/rand draw other numbers (118 of a [7, 17] constant's 119 differed), so e64
    was another program: its differences sized tolerances and masked elements at random
    (two of the three wrong elements of an addmm(beta=0) bug were masked).  Every float
    domain draws in float32 now; e64 of a program that returns its constants is e32."""
    consts = [TensorSpec(f"c{i}", shape, "float32", domain, 100 + i)
              for i, (shape, domain) in enumerate([([7, 17], "normal"), ([2, 17], "special"), ([3], "positive"),
                                                   ([4], "grid")])]
    line = "v1, v2, v3, v4 = c0 * 1, c1 * 1, c2 * 1, c3 * 1"
    program = Program("consts64", [], consts, [Node([line], ["v1", "v2", "v3", "v4"], ["c0", "c1", "c2", "c3"],
                                                    "mul")], ["v1", "v2", "v3", "v4"])
    ref = reference(program, ())
    assert ref.e64 is not None
    for e32, e64 in zip(ref.e32, ref.e64):
        assert e64.dtype == torch.float64
        assert torch.equal(e32.double().nan_to_num(), e64.nan_to_num()), (e32, e64)


def test_comparison_at_the_end_of_a_chain_of_nodes_is_masked() -> None:
    """Seed 3 program 6832: ge(sin(asin(x)), x).  Eager's sin(asin(x)) is x exactly; an
    asin 1.07 ulp off (within the math library's bound) makes it one ulp below, and the
    comparison False.  The random-sign jitter with its mirror pushed asin's value up and
    sin's down (or down and up): for small x the two cancel to under half an ulp of x, and
    the element stayed unmasked.  Every value pushed the same way moves it: flipping those
    elements passes; flipping one that is robustly False (|x| > 0.875) does not."""
    x = TensorSpec("x3", [8, 5, 3], "float32", "normal", 1821386159)
    nodes = [Node(["v4 = torch.asin(x3.clamp(-0.875, 0.875))"], ["v4"], ["x3"], "asin"),
             Node(["v7 = torch.sin(v4)"], ["v7"], ["v4"], "sin"),
             Node(["v9 = torch.ge(v7, x3)"], ["v9"], ["v7", "x3"], "ge")]
    program = Program("chain", [x], [], nodes, ["v9"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    x3 = inputs[0]
    e = ref.e32[0]
    on_edge = torch.sin(torch.asin(x3.clamp(-0.875, 0.875))) == x3
    assert bool(on_edge[0, 1, 1]) and abs(float(x3[0, 1, 1])) < 0.1  # the element the oracle missed
    assert compare([e ^ on_edge], ref).ok
    robust = (x3.abs() > 0.875).nonzero()[0]
    wrong = e.clone()
    wrong[tuple(robust)] = ~wrong[tuple(robust)]
    assert not compare([wrong], ref).ok


def test_float_equality_one_ulp_from_holding_is_masked() -> None:
    """Fuzz seed 11 program 7469: ``sinh(x) != x`` at x = 4.66e-4, where eager's sinh is one
    ulp above x and the CPU backend's (0.58 ulp off, within its bound) is x.  No push lands
    two values exactly on each other; the run holding floats within 2**-16 equal
    (``near_equal.py``) masks it.  Inequalities far from holding are still compared."""
    from tests.fuzz.near_equal import near_equal

    x = TensorSpec("x0", [3], "float32", "literal", 0, literal=[4.664117586798966e-4, 0.5, -2.0])
    nodes = [Node(["v1 = torch.not_equal(torch.sinh(x0), x0)"], ["v1"], ["x0"], "not_equal")]
    program = Program("near_equal", [x], [], nodes, ["v1"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    ne = ref.e32[0]
    assert ne.tolist() == [True, True, True]
    one_ulp = ne.clone()
    one_ulp[0] = False
    assert compare([one_ulp], ref).ok
    for i in (1, 2):
        wrong = ne.clone()
        wrong[i] = False
        assert not compare([wrong], ref).ok
    assert near_equal(torch.tensor([60000.0, 60000.3, 60002.0]), 60000.0).tolist() == [True, True, False]
    assert near_equal(torch.tensor([float("inf"), float("nan")]), torch.tensor([3e38, float("nan")])).tolist() \
        == [False, False]


def test_the_sign_of_a_nan_is_noise_not_an_answer() -> None:
    """Fuzz seed 5 program 1787: ``signbit(exp(clamp(celu(x), -8, 8)))`` where x is NaN.  Eager's
    clamp keeps the NaN's sign; tensorrt-reference's kCLIP (``maximum(minimum(x, hi), lo)``
    in torch) flips it, as eager's own ``sigmoid(nan)`` (-nan) and ``maximum(-nan, 0)``
    (+nan) do.  IEEE 754 leaves a NaN result's sign unspecified: a flipped ``signbit`` or
    ``copysign`` of a NaN passes, a flipped one of a number still fails."""
    nan = float("nan")
    x = TensorSpec("x0", [6], "float32", "literal", 0, literal=[nan, -1.0, 2.0, -0.0, nan, 3.0])
    nodes = [Node(["v1 = torch.signbit(x0.clamp(-8.0, 8.0))"], ["v1"], ["x0"], "signbit"),
             Node(["v2 = torch.copysign(torch.ones_like(x0), x0)"], ["v2"], ["x0"], "copysign")]
    program = Program("nan_sign", [x], [], nodes, ["v1", "v2"])
    inputs = example_inputs(program)
    ref = reference(program, inputs)
    signbit, copysign = ref.e32
    is_nan = torch.isnan(inputs[0])
    flipped_sign = torch.logical_xor(signbit, is_nan)
    flipped_copy = torch.where(is_nan, -copysign, copysign)
    assert compare([flipped_sign, flipped_copy], ref).ok
    wrong_number = flipped_sign.clone()
    wrong_number[1] = ~wrong_number[1]  # signbit(-1.0)
    assert not compare([wrong_number, flipped_copy], ref).ok
    wrong_zero = flipped_copy.clone()
    wrong_zero[3] = 1.0  # copysign(1, -0.0)
    assert not compare([flipped_sign, wrong_zero], ref).ok


def test_dynamic_configurations_call_at_other_sizes() -> None:
    """``-dyn`` configurations compile with dim 0 dynamic (one symbol per size) and compare at
    the examples, at inputs one larger, at the bottom of the range (2) and at its top (size + 3);
    the planted bug of the oracle test is caught there."""
    from tests.fuzz.oracle import dynamic_dims

    program = _neg_program()
    found = dynamic_dims(program)
    assert found is not None
    spec, resized = found
    assert resized.inputs[0].shape == [4, 17] and list(spec[0]) == [0]  # pyright: ignore[reportOptionalSubscript, reportArgumentType]
    scalar = Program("s", [TensorSpec("x0", [1, 5], "float32", "normal", 5)], [],
                     [Node(["v1 = x0 + 1"], ["v1"], ["x0"], "add")], ["v1"])
    assert dynamic_dims(scalar) is None  # a size-1 dim stays static
    configs = [Config.parse("cpu-scalar-dyn"), Config.parse("ref-dyn")]
    result = check_program(program, configs)
    assert [(o.config, o.kind) for o in result.outcomes] == [("cpu-scalar-dyn", "ok"), ("ref-dyn", "ok")]
    assert result.outcomes[0].compared == (3 + 4 + 2 + 6) * 17  # examples, one larger, bottom, top
    from ziggurat.backends.cpu.lowering import registry

    identity = registry.find_lowering("aten::positive")
    assert identity is not None
    with registry.lowerings().override("aten::neg", identity.fn, validator=identity.validator):
        planted = check_program(program, configs[:1])
    assert planted.outcomes[0].kind == "wrong"


def test_a_stopped_runner_is_not_a_hung_worker() -> None:
    """The wall clock of a slot leaves out the gaps in which the runner itself was stopped
    (``kill -STOP`` of the whole run for a CI check): 450 polls of 2 s are a hang at 900 wall
    seconds; 3 polls, a 1,000-second gap and 3 more polls are 12 (the gap counts as one poll)."""
    from tests.fuzz.run import POLL_SECONDS, RunningClock

    def clock(times: list[float]) -> float:
        ticks = iter(times)
        c = RunningClock(lambda: next(ticks))
        last = 0.0
        for _ in times[1:]:
            last = c.elapsed()
        return last

    steady = [i * POLL_SECONDS for i in range(452)]
    assert clock(steady) > 900
    paused = [0.0, 2.0, 4.0, 6.0, 1006.0, 1008.0, 1010.0]
    assert clock(paused) == 1010.0 - 1000.0 + POLL_SECONDS


def test_gemm_profile_draws_gemms_and_convolutions() -> None:
    """The ``gemm`` profile (for the -bf16 configurations) puts a GEMM or a convolution in most
    programs; the default one in about a quarter."""
    from tests.fuzz.generator import GEMM_SPECS

    def with_gemm(profile: str) -> int:
        return sum(any(n.op in GEMM_SPECS for n in generate(30, i, PROFILES[profile]).nodes) for i in range(40))

    assert with_gemm("gemm") >= 30 > with_gemm("default")


#: (profile, its weight-0 spec, seed, the fewest of 24 programs that draw it, configurations
#: whose code the spec reaches): ``windows`` pools of 4096+ outputs over padding (the CPU
#: kernels' border splits), ``pixel-rows`` layer entries (a channel-major bf16 image copied
#: channels-last before pixel rows), ``half-activations`` functions of 16-bit values (looked up);
#: on a host without AVX-512 the avx2 configurations of these
DEDICATED_PROFILES = [("windows", "wide_window", 191, 12, ("cpu-avx512-ex", "cpu-scalar-ex")),
                      ("pixel-rows", "conv_layer_entry", 196, 8, ("cpu-avx512-bf16",)),
                      ("half-activations", "half_activation", 200, 12, ("cpu-avx512-ex", "cpu-avx512-fp16"))]


@pytest.mark.parametrize("profile,spec_name,seed,least,configs", DEDICATED_PROFILES,
                         ids=[p[0] for p in DEDICATED_PROFILES])
def test_a_dedicated_profile_draws_its_spec(profile: str, spec_name: str, seed: int, least: int,
                                            configs: tuple[str, ...]) -> None:
    """The profile puts its spec (of weight 0 elsewhere) in many programs, the default and gemm
    profiles in none; the first such program agrees with eager on the configurations."""
    drawn = [p for p in (generate(seed, i, PROFILES[profile]) for i in range(24))
             if any(n.op == spec_name for n in p.nodes)]
    assert len(drawn) >= least, len(drawn)
    for other in ("default", "gemm"):
        assert not any(n.op == spec_name for i in range(24) for n in generate(seed, i, PROFILES[other]).nodes)
    result = check_program(drawn[0], [Config.parse(c.replace("avx512", WIDEST_ISA)) for c in configs])
    assert [o.kind for o in result.outcomes] == ["ok"] * len(configs), [o.detail for o in result.outcomes]


def test_inputs_on_which_an_accumulation_overflows_check_nothing() -> None:
    """Fuzz seed 72, program 63: a conv's products pass float32's range (the float64 sum of one
    output is 4.98e38); eager's order sums them to +inf, the scalar ISA's and the TensorRT
    reference's to NaN, and a hardsigmoid, a var and a logsumexp carried that to a finite value
    against NaN.  An accumulation's overflow is the order of its sums: such inputs are not
    compared (the program is invalid on its examples; call-time values are left unchecked)."""
    program = Program.from_json((Path(__file__).parent / "overflowing_conv_sum.json").read_text())  # generate(72, 63) then
    assert overflows(program, fresh_inputs(program)) and overflows(program, example_inputs(program))
    result = check_program(program, [Config.parse("cpu-scalar-ex")])
    assert result.invalid and not result.outcomes, result
    # an element-wise overflow (exp of a large number) is the same in every correct order
    assert not overflows(_neg_program(), (torch.full((3, 17), 3e38),))  # -inf from -3e38 * 2


def test_an_overflow_beside_infinite_operands_checks_nothing() -> None:
    """Fuzz seed 105, program 207: ``linear(x, w)`` with ``w`` holding infinities of both signs;
    one output's terms were -inf, -inf, a product past float32's range (finite in float64) and
    +inf.  Eager's FMA order sums them to -inf, the scalar ISA's separate products to NaN: the
    overflow, seen with the infinities read as zeros, makes the inputs invalid."""
    program = Program.from_json((Path(__file__).parent / "overflowing_linear_with_infinities.json").read_text())
    assert overflows(program, example_inputs(program))
    result = check_program(program, [Config.parse("cpu-scalar-ex")])
    assert result.invalid and not result.outcomes, result
    # infinities alone (no finite overflow) give the same inf or NaN in every order: checked
    inf_program = Program("infs", [TensorSpec("x0", [4, 23], "float32", "special", 3)], [],
                          [Node(["v1 = x0 @ x0.t()"], ["v1"], ["x0"], "mm")], ["v1"])
    inputs = example_inputs(inf_program)
    assert not bool(torch.isfinite(inputs[0]).all()) and not overflows(inf_program, inputs)


@pytest.mark.parametrize("norm", ["F.group_norm(x0, 2)", "F.layer_norm(x0, x0.shape[-1:])"])
def test_a_norm_whose_eager_statistics_overflow_to_nan_checks_nothing(norm: str) -> None:
    """Fuzz seed 111, program 107: rows of values near float32's largest.  Eager's mean of a row
    whose length is a multiple of 8 sums its vector chunks to +inf (NaN outputs); of other lengths
    it stays finite (the outputs are the bias, which every backend must give: seed 96), and so
    does its instance norm's at every length."""
    program = Program("norm", [TensorSpec("x0", [2, 4, 16], "float32", "normal", 3)], [],
                      [Node([f"v1 = {norm}"], ["v1"], ["x0"], "norm")], ["v1"])
    huge = (torch.rand(2, 4, 16, generator=torch.Generator().manual_seed(0)) + 1.0) * 1.5e38
    assert overflows(program, (huge,))
    assert not overflows(program, (torch.randn(2, 4, 16),))
    odd = Program("norm", [TensorSpec("x0", [2, 4, 19], "float32", "normal", 3)], [],
                  [Node([f"v1 = {norm}"], ["v1"], ["x0"], "norm")], ["v1"])
    assert not overflows(odd, ((torch.rand(2, 4, 19) + 1.0) * 1.5e38,)), "eager's bias is checked"


def test_a_probe_that_writes_an_operand_is_rejected_and_changes_nothing() -> None:
    """An OpInfo sample of ``instance_norm`` with running stats updates them in place (seed 78,
    program 100): the probe ran it on the example values themselves, which changed them under
    the program, and the spec's statement then failed the builder's in-place check."""
    import random

    from tests.fuzz.builder import Builder, Reject

    b = Builder(random.Random(0), "probe_test")
    x = b.new_input((2, 3, 4), torch.float32)
    stats = b.new_input((3,), torch.float32)
    before = b.env[stats.name].clone()
    with pytest.raises(Reject, match="in place"):
        b.probe(f"F.instance_norm({x.name}, running_mean={stats.name}, running_var={stats.name}.abs(), momentum=0.5)")
    assert torch.equal(b.env[stats.name], before)
    assert b.probe(f"{x.name}.sum()").shape == ()


def test_runner_records_an_oversized_program_file_as_invalid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program file over ``MAX_PROGRAM_FILE_BYTES`` is never read (NNSmith seed 187's 3.9 GB
    one took the runner's memory): it is recorded as invalid, and the others still run."""
    from tests.fuzz import run

    monkeypatch.setattr(run, "MAX_PROGRAM_FILE_BYTES", 2000)
    records = _run_planted(tmp_path, monkeypatch, {"a_big": "v1 = x0 * 2", "b_fine": "v1 = x0 * 2"},
                           ["--configs", "ref-ts"], literals={"a_big": [0.5] * 600})
    assert records["a_big"]["result"]["invalid"].startswith("program file of") and not records["a_big"]["result"]["outcomes"]
    assert [o["kind"] for o in records["b_fine"]["result"]["outcomes"]] == ["ok"]
    assert (tmp_path / "out" / "summary.json").exists()


def test_drawn_thread_counts_are_the_seeds_and_cover_every_choice() -> None:
    from tests.fuzz.thread_counts import CHOICES, parse_threads, threads_for

    drawn = [threads_for("drawn", 215, i) for i in range(60)]
    assert set(drawn) == set(CHOICES) and drawn == [threads_for("drawn", 215, i) for i in range(60)]
    assert drawn != [threads_for("drawn", 216, i) for i in range(60)]
    assert threads_for("2", 215, 7) == 2
    with pytest.raises(ValueError, match="positive count or 'drawn'"):
        parse_threads("0")


def test_runner_compiles_each_program_for_its_drawn_thread_count(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each record and each cpu outcome carries the count drawn for its program, which the
    worker passed to ``compile(threads=)``."""
    from tests.fuzz.thread_counts import threads_for

    bodies = {f"p{i}": "v1 = x0 * 2 + 1" for i in range(8)}
    records = _run_planted(tmp_path, monkeypatch, bodies, ["--configs", f"cpu-{WIDEST_ISA}-ts", "--threads", "drawn"])
    expected = {name: threads_for("drawn", 1, name) for name in bodies}
    assert sorted(expected.values()) == [1, 1, 1, 1, 2, 2, 2, 3]  # every count, as the seed draws them
    assert {name: r["threads"] for name, r in records.items()} == expected
    assert {name: [o["threads"] for o in r["result"]["outcomes"]] for name, r in records.items()} == \
        {name: [n] for name, n in expected.items()}
    assert all(o["kind"] == "ok" for r in records.values() for o in r["result"]["outcomes"])


def test_a_cpu_configuration_compiles_for_the_programs_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import ziggurat

    seen: list[Any] = []
    real = ziggurat.compile

    def compile_(*args: Any, **options: Any) -> Any:
        seen.append(options.get("threads"))
        return real(*args, **options)

    monkeypatch.setattr(ziggurat, "compile", compile_)
    x = TensorSpec("x0", [5, 7], "float32", "normal", 1)
    program = Program("sum3", [x], [], [Node(["v1 = x0.sum(0) * 3"], ["v1"], ["x0"], "sum")], ["v1"])
    result = check_program(program, [Config("cpu", "torchscript", WIDEST_ISA), Config("reference", "torchscript")], 3)
    assert [o.kind for o in result.outcomes] == ["ok", "ok"]
    assert seen == [3, None] and [o.threads for o in result.outcomes] == [3, 1]
