"""NNSmith (ise-uiuc/nnsmith 0.1.0) as a second program generator.

Runs in its own environment, not the project's (nnsmith pins z3, hydra, omegaconf):

    python3 -m venv /tmp/nnsmith-venv
    /tmp/nnsmith-venv/bin/pip install torch==2.13.0 nnsmith==0.1.0
    /tmp/nnsmith-venv/bin/python tests/fuzz/nnsmith_bridge.py --seed 1 --n 200 --out build/fuzz/nnsmith-1/programs
    .venv/bin/python -m tests.fuzz.run --programs build/fuzz/nnsmith-1/programs --jobs 2

NNSmith solves shape constraints with z3 to build a valid random graph, materializes it
as a torch module (``SymbolNet``) and searches input values that keep it free of
NaN/Inf.  Each graph is exported with ``torch.export`` and written as a fuzz program
(``from_fx.py``), so the project's oracle, minimizer and repros apply unchanged.

Two things in nnsmith 0.1.0 need working around with torch 2.13 / z3 4.x:

* its CLI (``nnsmith.model_gen``) infers the op set by solving every op at once and dies
  in ``Reshape.type_transfer`` (``SanityCheck.eq(auto_dim, -1)``: z3 returns a target
  shape with two -1 entries); inferring per op type, skipping any that fails, works;
* ``SymbolNet.forward`` checks its tensors for NaN/Inf in Python (``debug_numeric``, and
  ``check_intermediate_numeric`` left on by the value search), which ``torch.export``
  refuses as data-dependent control flow; both are turned off on the instance first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

DTYPES = ["float32", "int32", "int64", "bool"]


def opset(model_type: type, out: Path) -> list[type]:
    """Op types nnsmith can materialize for torch, inferred one by one (cached in ``out``)."""
    import nnsmith.narrow_spec as ns

    cache = out / "topset.yaml"
    if cache.exists():
        topset = ns.load_topset(cache)
    else:
        topset = {}
        for op in model_type.operators():
            try:
                topset.update(ns.infer_topset_from_scratch(model_type, None, op_types=[op]))
            except Exception as e:  # the Reshape SanityCheck described above, among others
                print(f"nnsmith: skipping {op.__name__}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
        ns.dump_topset(topset, cache)
    return [op for op in model_type.operators() if op.name() in topset and not op.limit_domain]


#: A graph whose weights and inputs hold more elements is skipped: every one is written as a
#: JSON literal (seed 187 drew a 4096x46x543x2 convolution weight, a 3.9 GB program file).
MAX_LITERAL_ELEMENTS = 1 << 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--max-nodes", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    import logging

    logging.disable(logging.INFO)
    import torch
    from nnsmith.abstract.extension import activate_ext
    from nnsmith.graph_gen import model_gen
    from nnsmith.materialize import Model

    from tests.fuzz.from_fx import program_from_export

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model_type = Model.init("torch", backend_target="cpu")
    model_type.add_seed_setter()
    ops = opset(model_type, out.parent)
    activate_ext(opset=ops, factory=None)
    stats: Counter[str] = Counter()
    for i in range(args.n):
        seed = args.seed * 1_000_003 + i
        name = f"nnsmith_s{args.seed}_g{i}"
        try:
            gen = model_gen(opset=ops, method="symbolic-cinit", seed=seed, max_elem_per_tensor=4096,
                            max_nodes=args.max_nodes, timeout_ms=10000, dtype_choices=DTYPES)
            model = model_type.from_gir(gen.make_concrete())
            model.refine_weights()
            oracle = model.make_oracle()
            net = model.torch_model.eval()
            net.debug_numeric = lambda *_: None  # see the module docstring
            net.check_intermediate_numeric = False
            net.use_gradient = False
            inputs = tuple(torch.from_numpy(oracle.input[k]) for k in net.input_map)
            elements = sum(p.numel() for p in net.parameters()) + sum(b.numel() for b in net.buffers()) \
                + sum(t.numel() for t in inputs)
            if elements > MAX_LITERAL_ELEMENTS:  # max_elem_per_tensor does not bound a conv's weight
                stats[f"skipped: {elements} literal elements, over {MAX_LITERAL_ELEMENTS}"] += 1
                continue
            ep = torch.export.export(net, inputs)
            program = program_from_export(name, ep, inputs)
        except Exception as e:
            reason = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
            stats[reason] += 1
            if os.environ.get("NNSMITH_BRIDGE_DEBUG"):
                traceback.print_exc()
            continue
        (out / f"{name}.json").write_text(program.to_json())
        stats["written"] += 1
    print(json.dumps(dict(stats.most_common()), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
