# Two entry points (see README): `make book` and `make test`. Both create or reuse .venv,
# install lrd with torch pinned to the local CPU wheel, and fetch the offline assets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
LRD := $(VENV)/bin/lrd
STAMP := $(VENV)/.lrd-installed
# Where pip finds torch's CPU build: empty uses pip's own configuration (which on the project's
# machines serves the CPU wheel); elsewhere `make TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu`
# (the workflows do), or pip takes PyPI's default build of the pinned version (CUDA on Linux).
TORCH_INDEX_URL ?=

.PHONY: book test test-fast install fetch nbval-refs bench readme screenshot clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL)) -e '.[dev]'
	touch $@

install: $(STAMP)

fetch: $(STAMP)
	$(LRD) fetch

book: fetch
	$(LRD) book

test: fetch
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval/sanitize.cfg -q --durations=15

# The unit tier alone, on every core: no offline panel, no nbval, no book build, no Dask cluster
# and no Monte-Carlo size or power estimate (the loop while editing; `make test` runs them all).
test-fast: $(STAMP)
	$(PY) -m pytest -q -n auto -m "not integration and not book and not simulation and not cluster" --durations=15

# Regenerate the nbval reference notebooks (the `ci` profile) after a change of results.
nbval-refs: fetch
	$(LRD) run all --profile ci --output-dir tests/nbval

# After a full `make book` at the defaults: what it found into book/findings.json and the README,
# the README's cold times from benchmarks/fresh_clone/, and the README's screenshot from _build/html.
readme: $(STAMP)
	$(PY) -m lrd.book.findings
	$(PY) benchmarks/fresh_clone.py --readme

screenshot: $(STAMP)
	LRD_SCREENSHOT_BOOK=_build/html $(PY) -m pytest -q tests/test_book.py -k screenshot

bench: fetch
	$(PY) benchmarks/extract.py

clean:
	rm -rf _build book/*.ipynb book/results
