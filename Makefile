# The README's two commands: `make run` (set up, then build the tiny default) and `make test`.
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
CORES ?= 2
# pytest-xdist workers of `make test` (tests/tiny_runs.py keeps the shared build on one)
TEST_WORKERS ?= $(CORES)
# rules call `mlrep`, so the environment's bin folder goes first on PATH
export PATH := $(BIN):$(PATH)

.PHONY: run test lint setup lock mutation

run: $(STAMP)
	snakemake --cores $(CORES) all

test: lint
	pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

lint: $(STAMP)
	ruff check .
	ruff format --check .
	snakefmt --check Snakefile workflow/rules
	snakemake --lint

setup: $(STAMP)

# Mutation score of the modules that make numbers (docs/testing.md); not part of `make test`
mutation: $(STAMP)
	python benchmarks/mutation.py

$(STAMP): pyproject.toml requirements/lock.txt requirements/build-in-env.txt requirements/install.sh
	bash requirements/install.sh $(VENV)
	touch $@

# Re-pin after changing dependencies in pyproject.toml (review the diff before committing).
lock: $(STAMP)
	{ sed -n '1,3p' requirements/lock.txt; \
	  pip freeze --exclude-editable | sed 's/^torch==\([0-9.]*\)+cpu$$/torch==\1/'; } > requirements/lock.txt.new
	mv requirements/lock.txt.new requirements/lock.txt
