# Two entry points (see README): `make book` and `make test`. Both create or reuse .venv,
# install lrd with torch pinned to the local CPU wheel, and fetch the offline assets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
LRD := $(VENV)/bin/lrd
STAMP := $(VENV)/.lrd-installed

.PHONY: book test install fetch nbval-refs bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	touch $@

install: $(STAMP)

fetch: $(STAMP)
	$(LRD) fetch

book: fetch
	$(LRD) book

test: fetch
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval/sanitize.cfg -q

# Regenerate the nbval reference notebooks (the `ci` profile) after a change of results.
nbval-refs: fetch
	$(LRD) run all --profile ci --output-dir tests/nbval

bench: fetch
	$(PY) benchmarks/extract.py

clean:
	rm -rf _build book/*.ipynb book/results
