# Two entry points: `make run` (dashboard) and `make test` (whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
APP_STAMP := $(VENV)/.installed-app
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test setup browser perf lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(APP_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(APP_STAMP)

setup: $(TEST_STAMP)

## run: migrate and seed the SQLite database, then serve on http://127.0.0.1:8000
run: $(APP_STAMP)
	$(BIN)/servebook db upgrade
	$(BIN)/servebook seed
	$(BIN)/servebook serve

## browser: Debian's chromium for the page tests (Playwright drives it)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; }

## test: the whole suite, browser tests included
test: $(TEST_STAMP) browser
	$(BIN)/pytest -n 2 --dist loadgroup

## perf: benchmarks under tests/perf, figures printed
perf: $(TEST_STAMP)
	$(BIN)/python tests/perf/run_all.py

lint: $(TEST_STAMP)
	$(BIN)/pip install --quiet ruff
	$(BIN)/ruff check app tests migrations

clean:
	rm -rf $(VENV) data .pytest_cache
