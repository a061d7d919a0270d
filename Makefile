# The development environment lives in .venv and is installed from uv.lock, so
# that a test run tomorrow uses what passed today; `make lock-upgrade` moves the
# lock on purpose. uv comes from PATH when it is there; otherwise the system
# Python makes .venv and pip-installs uv into it once (the lock then keeps it).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV ?= $(or $(shell command -v uv 2>/dev/null),$(BIN)/uv)
EXTRAS ?= cpu,dev
comma := ,
EXTRA_FLAGS := $(foreach e,$(subst $(comma), ,$(EXTRAS)),--extra $(e))
STAMP := $(VENV)/.installed
# `make test-latest`: the newest release of every dependency, in an environment of its own.
LATEST := build/latest
# Never fetch an interpreter: the project runs on the Python it is given.
export UV_PYTHON_DOWNLOADS := never

.PHONY: install run test test-fast test-build test-browser test-latest lock lock-upgrade lint type bench schema docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv

$(STAMP): pyproject.toml uv.lock | $(UV)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --locked --quiet --python $(BIN)/python $(EXTRA_FLAGS)
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/mgradcheck run

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not network and not slow and not build and not browser" $(PYTEST_ARGS)

# Not in CI: builds MLX commits from source (MGRADCHECK_MLX_REPO, MGRADCHECK_MLX_DEPS: see the test).
test-build: $(STAMP)
	$(BIN)/python -m pytest -m build $(PYTEST_ARGS)

# Not in CI: renders the matrix's HTML page in headless Chromium (apt-get install chromium).
test-browser: $(STAMP)
	$(BIN)/python -m pytest -m browser $(PYTEST_ARGS)

# The suite against the newest release of every dependency the package's ranges
# admit (the lock upgraded in a scratch copy; uv.lock itself is left as it is),
# printing first what differs from the lock.
test-latest: $(STAMP)
	rm -rf $(LATEST) && mkdir -p $(LATEST)
	cp --parents pyproject.toml uv.lock README.md LICENSE mgradcheck/__init__.py $(LATEST)/
	$(UV) lock --quiet --upgrade --directory $(LATEST)
	@moved=$$(diff <($(UV) export --quiet --frozen --no-hashes --no-emit-project --all-extras) \
	             <($(UV) export --quiet --frozen --no-hashes --no-emit-project --all-extras --directory $(LATEST)) \
	          | sed -n 's/^< \([A-Za-z]\)/  locked: \1/p; s/^> \([A-Za-z]\)/  newest: \1/p'); \
	  echo "$${moved:-  the lock already holds the newest release of every dependency}"
	$(UV) venv --quiet --allow-existing --python $(BIN)/python $(LATEST)/.venv
	$(UV) export --quiet --frozen --no-hashes --no-emit-project $(EXTRA_FLAGS) --directory $(LATEST) -o requirements.txt
	$(UV) pip sync --quiet --python $(LATEST)/.venv/bin/python $(LATEST)/requirements.txt
	$(UV) pip install --quiet --python $(LATEST)/.venv/bin/python --no-deps -e .
	$(LATEST)/.venv/bin/python -m pytest $(PYTEST_ARGS)

# After changing pyproject.toml's dependencies: the lock follows, keeping every other pin.
lock: | $(UV)
	$(UV) lock

# Deliberately: every dependency to its newest release; commit uv.lock with the test run that shows what changed.
lock-upgrade: | $(UV)
	$(UV) lock --upgrade

lint: $(STAMP)
	$(BIN)/ruff check mgradcheck tests bench
	$(BIN)/ruff format --check mgradcheck tests bench
	$(BIN)/lint-imports --no-logo

type: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The corpus entry's JSON Schema, written again from the loader's table (mgradcheck/corpus/entry_format.py).
schema: $(STAMP)
	$(BIN)/python -m mgradcheck.corpus.entry_schema

# The manual (mkdocs.yml) into build/site; --strict: a broken link or anchor fails the build.
# Its corpus page is made from corpus/ by docs/hooks/corpus_page.py at every build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build dist *.egg-info
