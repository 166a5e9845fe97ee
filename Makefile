# Fabricscope: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: setup run test test-fast bench lint clean vendor

setup: $(VENV)/.installed node_modules/.package-lock.json

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

# ESLint for static/js (tests/test_javascript.py); npm ci writes node_modules/.package-lock.json,
# so this runs again only when package-lock.json is newer. Without npm the JS checks skip.
node_modules/.package-lock.json: package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --quiet --no-audit --no-fund && touch $@; \
	else echo "npm not found: skipping the JavaScript tools (tests/test_javascript.py skips without node)"; fi

## run: web + Celery worker + embedded Redis on SQLite (Ctrl-C stops everything)
run: setup
	$(PY) manage.py up

## test: the whole suite (engine, web, API, real worker, browser, slow); prints the 25 slowest
test: setup
	$(PY) -m pytest --durations=25

## test-fast: everything but the browser, real-worker and slow tests (schemathesis, 128-host payload)
test-fast: setup
	$(PY) -m pytest -m "not browser and not worker and not slow" --durations=25

## bench: engine benchmarks as JSON (see docs/PERFORMANCE.md)
bench: setup
	$(PY) -m designer.engine bench

## vendor: re-fetch static/vendor/plotly-cartesian.min.js from npm and check its sha256 (static/vendor/VERSIONS.md)
PLOTLY_JS_PACKAGE := plotly.js-cartesian-dist-min@4.1.1
PLOTLY_JS_SHA256 := 79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a
vendor:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent $(PLOTLY_JS_PACKAGE) >/dev/null && tar -xzf *.tgz) && \
	echo "$(PLOTLY_JS_SHA256)  $$tmp/package/plotly-cartesian.min.js" | sha256sum -c --quiet - && \
	cp "$$tmp/package/plotly-cartesian.min.js" static/vendor/plotly-cartesian.min.js && \
	cp "$$tmp/package/LICENSE" static/vendor/plotly-cartesian.LICENSE && \
	echo "static/vendor/plotly-cartesian.min.js: $(PLOTLY_JS_PACKAGE), sha256 checked"

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
