# The environment lives in .venv and is made by uv (installed into it by the
# system Python if uv is not on PATH). Every target creates it when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
EXTRAS ?= cpu,dev
STAMP := $(VENV)/.installed

.PHONY: install run test test-fast test-build lint type bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@test -x $(UV) || $(BIN)/python -m pip install --quiet uv
	$(UV) pip install --python $(BIN)/python --quiet -e ".[$(EXTRAS)]"
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/mgradcheck run

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not network and not slow and not build" $(PYTEST_ARGS)

# Not in CI: builds MLX commits from source (MGRADCHECK_MLX_REPO, MGRADCHECK_MLX_DEPS: see the test).
test-build: $(STAMP)
	$(BIN)/python -m pytest -m build $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check mgradcheck tests bench
	$(BIN)/ruff format --check mgradcheck tests bench
	$(BIN)/lint-imports --no-logo

type: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info
