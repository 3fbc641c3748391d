# Two entry points: `make run` (dashboard) and `make test` (whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test setup browser perf lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

## run: migrate and seed the SQLite database, then serve on http://127.0.0.1:8000
run: $(STAMP)
	$(BIN)/servebook db upgrade
	$(BIN)/servebook seed
	$(BIN)/servebook serve

## browser: Debian's chromium for the page tests (Playwright drives it)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; }

## test: the whole suite, browser tests included
test: $(STAMP) browser
	$(BIN)/pytest -n 2 --dist loadgroup

## perf: benchmarks under tests/perf, figures printed
perf: $(STAMP)
	$(BIN)/python tests/perf/run_all.py

lint: $(STAMP)
	$(BIN)/pip install --quiet ruff
	$(BIN)/ruff check app tests migrations

clean:
	rm -rf $(VENV) data .pytest_cache
