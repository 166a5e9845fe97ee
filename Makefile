# Fabricscope: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: setup run test test-fast bench lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

## run: web + Celery worker + embedded Redis on SQLite (Ctrl-C stops everything)
run: setup
	$(PY) manage.py up

## test: the whole suite (engine, web, API, real worker, browser)
test: setup
	$(PY) -m pytest

## test-fast: everything but the browser and real-worker tests
test-fast: setup
	$(PY) -m pytest -m "not browser and not worker"

## bench: engine benchmarks as JSON (see docs/PERFORMANCE.md)
bench: setup
	$(PY) -m designer.engine bench

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
