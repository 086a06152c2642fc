# hierlab: two commands. `make run` serves the app, `make test` runs the whole suite.
# Each creates or refreshes the virtual environment first (idempotent: a stamp file records
# that pyproject.toml was installed; nothing is reinstalled until it changes).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PORT   ?= 8501

DOCS_STAMP := $(VENV)/.docs-stamp

.PHONY: run test lint typecheck pytest browser-deps docs clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

run: $(STAMP)
	$(PY) -m app.serve --server.port $(PORT)

# Chromium for the end-to-end browser test, from Debian's packages (never `playwright install`).
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing Debian's chromium for the browser test"; \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO="sudo"; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

lint: $(STAMP)
	$(PY) -m ruff check hierlab app tests

typecheck: $(STAMP)
	$(PY) -m mypy

# SCIPY_ARRAY_API=1: scikit-learn's estimator checks include check_array_api_input, which skips
# itself without it; with it every registered estimator runs that check too (no skipped tests).
# --durations=30: the slowest tests are printed in every CI log (where the suite's time goes).
# -n 2 --dist loadfile: one pytest worker per core (pytest-xdist), each test file kept whole on
# one worker (module fixtures, and the fuzz reports that read their module's earlier results).
PYTEST_WORKERS ?= 2
pytest: $(STAMP) browser-deps
	SCIPY_ARRAY_API=1 $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --durations=30

test: lint typecheck pytest

# The documentation site, offline, warnings as errors: API reference, user guide, method cards,
# and the example gallery (executed here). Output: docs/_build/html/index.html
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet -e ".[docs]"
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache docs/_build docs/api docs/methods docs/auto_examples
