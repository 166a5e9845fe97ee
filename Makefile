# Fabricscope: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: setup run test test-fast bench lint clean vendor

setup: $(VENV)/.installed $(VENV)/.kernels node_modules/.package-lock.json
	@# Bytecode of the project's own modules, written now: a process started with
	@# PYTHONDONTWRITEBYTECODE set (this sandbox sets it) would otherwise compile every engine
	@# module from source each time, ~0.1 s of every CLI command (docs/PERFORMANCE.md). Incremental;
	@# a source edited later is recompiled in memory as usual.
	@$(PY) -m compileall -q designer api

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	touch $@

# The solver kernels compiled ahead of time (designer/engine/solve/kernels/_maxmin_aot*.so, see
# designer/engine/solve/kernels/build.py): a fresh `solve` then skips importing numba. Rebuilt when any
# .py file of the kernels package changes (the files loader.py digests: a module built from others is
# refused) or the environment does; if it cannot be built (no C compiler) numba's JIT is used.
KERNEL_SOURCES := $(wildcard designer/engine/solve/kernels/*.py)
$(VENV)/.kernels: $(VENV)/.installed $(KERNEL_SOURCES)
	@if $(PY) -m designer.engine.solve.kernels.build; then touch $@; \
	else echo "warning: AOT kernels not built; the solver uses numba's JIT (slower start)"; fi

# ESLint for static/js (tests/test_javascript.py); npm ci writes node_modules/.package-lock.json,
# so this runs again only when package-lock.json is newer. Without npm the JS checks skip.
node_modules/.package-lock.json: package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --quiet --no-audit --no-fund && touch $@; \
	else echo "npm not found: skipping the JavaScript tools (tests/test_javascript.py skips without node)"; fi

## run: web + Celery worker + embedded Redis on SQLite (Ctrl-C stops everything)
run: setup
	$(PY) manage.py up

## test: the whole suite (engine, web, API, real worker, browser, slow); prints the 25 slowest.
## In two passes: what `test-fast` runs, on both cores; then the browser, real-worker and slow
## tests one at a time (they start servers and workers, and some assert wall-clock times).
test: setup
	$(PY) -m pytest -n 2 -m "not browser and not worker and not slow" --durations=25
	$(PY) -m pytest -m "browser or worker or slow" --durations=25

## test-fast: everything but the browser, real-worker and slow tests (schemathesis, 128-host payload),
## on both cores (pytest-xdist; each worker gets its own test database)
test-fast: setup
	$(PY) -m pytest -n 2 -m "not browser and not worker and not slow" --durations=25

## bench: engine benchmarks as JSON (see docs/PERFORMANCE.md)
bench: setup
	$(PY) -m designer.engine bench

## vendor: rebuild static/vendor/plotly-fabricscope.min.js (plotly.js core + bar + box) from the npm
## packages locked in tools/plotly-bundle/package-lock.json, in a scratch folder, and refuse a file whose
## sha256 differs from the recorded one (static/vendor/VERSIONS.md). Not part of setup or CI: the
## committed file is what the pages serve; tests/designer/test_vendor.py checks its hash.
PLOTLY_BUNDLE := plotly-fabricscope.min.js
PLOTLY_BUNDLE_SHA256 := c5c4104627091b25de165a85925d60777c28386fb122e4fa786e31de8b92b357
vendor:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	cp tools/plotly-bundle/package.json tools/plotly-bundle/package-lock.json \
	   tools/plotly-bundle/entry.js tools/plotly-bundle/build.mjs "$$tmp" && \
	(cd "$$tmp" && npm ci --silent --ignore-scripts --no-audit --no-fund && node build.mjs $(PLOTLY_BUNDLE)) && \
	{ echo "$(PLOTLY_BUNDLE_SHA256)  $$tmp/$(PLOTLY_BUNDLE)" | sha256sum -c --quiet - || \
	  { echo "the rebuilt file's sha256 is $$(sha256sum < "$$tmp/$(PLOTLY_BUNDLE)" | cut -d' ' -f1):" \
	    "if the change is intended, record it in the Makefile and static/vendor/VERSIONS.md"; exit 1; }; } && \
	cp "$$tmp/$(PLOTLY_BUNDLE)" static/vendor/$(PLOTLY_BUNDLE) && \
	cp "$$tmp/node_modules/plotly.js/LICENSE" static/vendor/plotly-fabricscope.LICENSE && \
	echo "static/vendor/$(PLOTLY_BUNDLE): rebuilt from tools/plotly-bundle, sha256 checked"

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
