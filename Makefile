# Ziggurat: the two commands are `make demo` and `make test`; both build .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed
export PATH := $(BIN):$(PATH)
# Python's bytecode caches on, whatever the environment says (PYTHONDONTWRITEBYTECODE=1 on this
# workplace's machines): else every process compiles the package's ~600 modules from source and
# pytest rewrites the assertions of ~375 test modules in each xdist worker, again and again.
unexport PYTHONDONTWRITEBYTECODE
JOBS   ?= 2

.PHONY: demo test pytest lit lit-quiet typecheck bench bench-bf16 bench-fp16 bench-int8 bench-smoke bench-rnn bench-dynamic bench-dynamic-int8 gen-ops clean fuzz fuzz-nnsmith

# --no-compile: pip writes no bytecode for the ~11,600 modules it installs (96 -> 45 s on the AVX2
# EPYC); Python writes it for those the suite imports, at first import (about 10 s for torch,
# transformers and OpInfo's ~2,600).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch 2.13.0 is a CPU wheel that pip finds on this machine's disk (find-links).
	$(BIN)/pip install -q --no-compile --disable-pip-version-check "torch==2.13.0"
	$(BIN)/pip install -q --no-compile --disable-pip-version-check -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# lit and pyright side by side after pytest (each leaves part of the 2 cores idle: 150 s in
# turn, 104 s together on the 2-vCPU host), their outputs kept apart.
test: $(STAMP)
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory -j2 --output-sync=target lit-quiet typecheck

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal tests

lit: $(STAMP)
	$(BIN)/lit -v tests/filecheck

lit-quiet: $(STAMP)
	$(BIN)/lit -q tests/filecheck

# pyright (basic mode, as configured in pyproject); the root is the package, so link it by name.
typecheck: $(STAMP)
	mkdir -p build/typecheck && ln -sfn ../.. build/typecheck/ziggurat
	$(BIN)/pyright

bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# Low precision (issue 17): eager and Inductor under torch.autocast, ziggurat precision=.
bench-bf16: $(STAMP)
	$(BIN)/python bench/run.py --precision bf16 $(BENCH_ARGS)

bench-fp16: $(STAMP)
	$(BIN)/python bench/run.py --precision fp16 $(BENCH_ARGS)

# INT8 (issue 17): every column runs the model quantized with PT2E and X86InductorQuantizer.
bench-int8: $(STAMP)
	$(BIN)/python bench/run.py --precision int8 --models resnet50,mobilenet_v2,bert-base --backends eager,inductor-freeze,ziggurat $(BENCH_ARGS)

bench-smoke: $(STAMP)
	$(BIN)/python bench/run.py --smoke

# The recurrent models alone (nn.LSTM / nn.GRU decomposed by decompose-rnn) against eager.
bench-rnn: $(STAMP)
	$(BIN)/python bench/run.py --models lstm-2l,gru-2l,rnn-2l --backends eager,ziggurat

# Dynamic shapes (issue 16): one dynamic ziggurat.compile and one torch.compile(dynamic=True) per
# model (bert-base, gpt2, resnet50) against static builds and eager over a list of sizes (long).
bench-dynamic: $(STAMP)
	$(BIN)/python bench/dynamic_shapes.py

# The same for PT2E-quantized models (issue 17): quantized once on a dynamic export.
bench-dynamic-int8: $(STAMP)
	$(BIN)/python bench/dynamic_shapes.py --precision int8 --models bert-base,resnet50

# Differential fuzzing (tests/fuzz/README.md): N programs of SEED on JOBS worker processes;
# summary, failures and minimized repros in build/fuzz/SEED.  PROFILE=dev makes smaller programs.
N       ?= 200
SEED    ?= 1
PROFILE ?= default
# native threads of each program's cpu modules: drawn (1, 2 or 3 per program) or a count
THREADS ?= drawn
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz.run --seed $(SEED) --n $(N) --jobs $(JOBS) --profile $(PROFILE) --threads $(THREADS) --out build/fuzz/$(SEED)

# NNSmith's programs through the same oracle; nnsmith lives in its own venv (see tests/fuzz/nnsmith_bridge.py).
NNSMITH_PYTHON ?= /tmp/nnsmith-venv/bin/python
fuzz-nnsmith: $(STAMP)
	$(NNSMITH_PYTHON) tests/fuzz/nnsmith_bridge.py --seed $(SEED) --n $(N) --out build/fuzz/nnsmith-$(SEED)/programs
	$(BIN)/python -m tests.fuzz.run --programs build/fuzz/nnsmith-$(SEED)/programs --jobs $(JOBS) --out build/fuzz/nnsmith-$(SEED)

# Regenerate dialects/torch/aten_ops.py from torch's operator schemas.
gen-ops: $(STAMP)
	$(BIN)/python -m ziggurat.tools.gen_torch_ops

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
