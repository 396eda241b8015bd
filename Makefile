# The two commands of the README:
#   make reproduce   create .venv, install the project, run the whole pipeline (snakemake, default profile)
#   make test        create .venv, install the project with its test extra, run the whole test suite
# Without an NVIDIA driver the CPU build of PyTorch is installed first ($(TORCH_CPU), optionally from
# the index named by TORCH_CPU_INDEX), so the project's own `torch>=2.4` does not pull a CUDA build.

PYTHON ?= python3
VENV ?= .venv
TORCH_CPU ?= torch==2.13.0
TORCH_CPU_INDEX ?=
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=

BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install reproduce test figures lint dry-run-paper clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "zerognn needs Python >= 3.11 (the pipeline's snakemake does); '$(PYTHON)' is \
	$$($(PYTHON) --version 2>/dev/null || echo not found). Name one: PYTHON=python3.12 make $(MAKECMDGOALS)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@if ! command -v nvidia-smi >/dev/null 2>&1; then \
		echo "no NVIDIA driver found: installing the CPU build of PyTorch ($(TORCH_CPU))"; \
		$(BIN)/python -m pip install --quiet "$(TORCH_CPU)" $(if $(TORCH_CPU_INDEX),--index-url $(TORCH_CPU_INDEX)); \
	fi
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

reproduce: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake $(SNAKEMAKE_ARGS)

test: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -m "slow or not slow" $(PYTEST_ARGS)

figures: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake figures $(SNAKEMAKE_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check zerognn tests scripts setup.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint

dry-run-paper: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake -n --configfile workflow/config/paper.yaml

clean:
	rm -rf $(VENV) .snakemake logs results/runs results/summary.csv
