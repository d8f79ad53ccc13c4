# The two commands: `make serve` and `make test`. Everything else is set up on demand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DB ?= catalog.db
HOST ?= 127.0.0.1
PORT ?= 8001
# Python may keep its bytecode caches (__pycache__/, git-ignored) even where the environment
# says not to (PYTHONDONTWRITEBYTECODE): else every server, worker and command the tests start
# compiles the sources again, and pytest rewrites every test file in each worker
unexport PYTHONDONTWRITEBYTECODE

.PHONY: serve test test-slow test-deep screenshots test-datasette-1 build check bench bench-build bench-build-1m bench-serve bench-exports bench-throughput bench-kinds bench-kinds-1m bench-smoke publish load throughput lint cog clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# the catalog depends on the inputs and the build's code only: editing the site or the server
# never rebuilds it
BUILD_CODE := $(wildcard loader/*.py loader/read/*.py loader/rules/*.py loader/build/*.py)
$(DB): $(BIN)/.installed $(wildcard seeds/*) $(BUILD_CODE)
	$(BIN)/paper-catalog build seeds --db $(DB)

build: $(DB)

check: $(BIN)/.installed
	$(BIN)/paper-catalog check seeds

# one uvicorn worker per core (WORKERS=n to choose), the site rebuilt-while-serving safe
WORKERS ?=
serve: $(DB)
	$(BIN)/paper-catalog serve --db $(DB) --host $(HOST) --port $(PORT) $(if $(WORKERS),--workers $(WORKERS))

# a container image built from what it copies: a wheel of this checkout, the pinned dependencies,
# the catalog and a Dockerfile starting `paper-catalog serve` (needs gcloud; '--platform fly'
# needs flyctl); PUBLISH_OPTIONS='--dry-run --context /tmp/ctx' writes it there, deploys nothing
publish: $(DB)
	$(BIN)/paper-catalog publish --db $(DB) $(PUBLISH_OPTIONS)

# wrk, 64 connections for 30 s over search, facet, paper and author pages (bench/out/load.*)
load: $(DB)
	$(BIN)/python bench/load.py --db $(DB) --duration 30 --connections 64

# ours against stock `datasette serve -i` on the same catalog and URL mix, 16 and 64
# connections, with and without our response cache (bench/out/throughput-*); ~6 minutes
throughput: $(DB)
	$(BIN)/python bench/throughput.py --db $(DB) --duration 15 --connections 16 64
	$(BIN)/python bench/throughput.py --db $(DB) --duration 15 --connections 16 64 --cache-mb 0

# the scale benchmark, never part of `make test`, in steps that each stay under 10 minutes on
# 2 cores (corpora and catalogs under BENCH_WORK, ~10 GB, kept between runs):
#   bench-build       20k and 100k papers: floor and loader builds, bytes/paper; the real sample
#                     (REAL_CORPUS) and the 20k corpus, each in turns with its floor; a rebuild
#                     of the 20k corpus after one file changed, against the floor
#   bench-build-1m    1M papers, the same (its figures join the others in latest.json)
#   bench-serve       pages and /search over HTTP against their raw SQL on the 1M catalog, CSV
#   bench-exports     every paper of the 1M catalog as CSV, JSON and BibTeX, a common word and
#                     the papers table's CSV stream, against sqlite3 reading the same rows
#   bench-throughput  ours against stock Datasette, same URL mix (wrk): the 20k catalog, then
#                     the real sample (REAL_CORPUS) when there is one
#   bench-kinds       each page kind on URLs that never repeat, ours (2 workers) against stock
#                     (wrk, alternating runs): the 20k catalog and the real sample; ~5 min each
#   bench-kinds-1m    the same on the 1M catalog
# results: bench/results/latest.{md,json}, csv_writer.json, exports.json,
# bench/out/throughput-{catalog,real}-*, bench/out/page-kinds-{catalog,real}.*
BENCH_WORK ?= /tmp/bench
bench: bench-build bench-build-1m bench-serve bench-exports bench-throughput bench-kinds bench-kinds-1m

bench-build: $(BIN)/.installed
	$(BIN)/python bench/run.py --sizes 20000 100000 --no-serve --work $(BENCH_WORK) \
	  --rebuild 20000 $(if $(wildcard $(REAL_CORPUS)),--real $(REAL_CORPUS))

bench-build-1m: $(BIN)/.installed
	$(BIN)/python bench/run.py --sizes 1000000 --no-serve --keep-builds --work $(BENCH_WORK)

bench-serve: $(BIN)/.installed
	$(BIN)/python bench/run.py --sizes 1000000 --serve-only --work $(BENCH_WORK)
	$(BIN)/python bench/csv_writer.py $(BENCH_WORK)/1m/catalog.db --out bench/results/csv_writer.json

bench-exports: $(BIN)/.installed
	$(BIN)/python bench/exports.py $(BENCH_WORK)/1m/catalog.db --out bench/results/exports.json

# the issue's own mix is on real papers: when a large real sample is on this machine
# (tests/fixtures/real/make_samples.py --large writes one), it is built and measured too
REAL_CORPUS ?= /work/realdata
bench-throughput: $(BIN)/.installed
	$(BIN)/python bench/throughput.py --db $(BENCH_WORK)/20k/catalog.db --duration 15 --connections 16 64
	@if [ -d $(REAL_CORPUS) ]; then \
	  $(BIN)/paper-catalog build $(REAL_CORPUS) --db $(BENCH_WORK)/real.db --skip-invalid > /dev/null && \
	  $(BIN)/python bench/throughput.py --db $(BENCH_WORK)/real.db --duration 15 --connections 16 64; \
	else echo "no real sample at $(REAL_CORPUS): tests/fixtures/real/make_samples.py --large writes one"; fi

bench-kinds: $(BIN)/.installed
	$(BIN)/python bench/page_kinds.py --db $(BENCH_WORK)/20k/catalog.db
	@if [ -d $(REAL_CORPUS) ]; then \
	  [ -f $(BENCH_WORK)/real.db ] || $(BIN)/paper-catalog build $(REAL_CORPUS) --db $(BENCH_WORK)/real.db --skip-invalid > /dev/null; \
	  $(BIN)/python bench/page_kinds.py --db $(BENCH_WORK)/real.db; \
	else echo "no real sample at $(REAL_CORPUS): tests/fixtures/real/make_samples.py --large writes one"; fi

bench-kinds-1m: $(BIN)/.installed
	$(BIN)/python bench/page_kinds.py --db $(BENCH_WORK)/1m/catalog.db

bench-smoke: $(BIN)/.installed
	$(BIN)/pytest -q tests/test_bench_smoke.py

# axe-core for the accessibility tests, from npm (never a CDN)
AXE := tests/js/node_modules/axe-core/axe.min.js
$(AXE): tests/js/package.json
	npm install --prefix tests/js --no-audit --no-fund --silent
	touch $@

# the whole suite but the long runs (marked slow), on two workers, a test file a worker at a time
# (module fixtures such as a browser or a server then start once), the longest files first
# (tests/conftest.py, LONGEST_FILES); docs/testing.md
TEST_WORKERS ?= 2
PARALLEL = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(BIN)/.installed $(AXE)
	$(BIN)/pytest -q $(PARALLEL)

# the served-app tests (pages, search, exports, security, plugins) against Datasette 1.0 (an
# alpha: pip installs 0.65.5 by default), in a virtualenv of its own; tests of 0.65's internals
# are skipped there, each saying why (tests/conftest.py, only_datasette_065)
DATASETTE_1 ?= 1.0a41
VENV_DATASETTE_1 := .venv-ds1
BIN_DATASETTE_1 := $(VENV_DATASETTE_1)/bin
DATASETTE_1_TESTS := tests/test_pages.py tests/test_search.py tests/test_exports.py \
  tests/test_security.py tests/test_security_headers.py tests/test_canned_queries.py \
  tests/test_csv.py tests/test_csv_streams.py tests/test_plugins.py tests/test_site.py tests/test_http_wrappers.py \
  tests/test_papers_table.py tests/test_metadata.py tests/test_datasette_versions.py \
  tests/test_paper_signals.py tests/test_error_pages.py tests/test_exports_real_size.py
$(BIN_DATASETTE_1)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV_DATASETTE_1)
	$(BIN_DATASETTE_1)/pip install --quiet --upgrade pip
	$(BIN_DATASETTE_1)/pip install --quiet -e '.[test]' 'datasette==$(DATASETTE_1)'
	touch $@

test-datasette-1: $(BIN_DATASETTE_1)/.installed
	$(BIN_DATASETTE_1)/pytest -q $(PARALLEL) $(DATASETTE_1_TESTS)

# the long fuzz, kill and load runs only: ten times the URL combinations, 20 kill -9s of a
# build (CRASH_KILLS=n for more), the throughput benchmark's URL mix
test-slow: $(BIN)/.installed $(AXE)
	$(BIN)/pytest -q $(PARALLEL) -m slow

# whole-page screenshots from every browser test into test-artifacts/ (make test takes none)
screenshots: $(BIN)/.installed $(AXE)
	SCREENSHOTS=1 $(BIN)/pytest -q $(PARALLEL) -m "browser and not slow"

# every property test with thousands of fresh random examples each (the hypothesis profile
# 'deep' of tests/conftest.py; the examples that fail are kept in .hypothesis/); long
test-deep: $(BIN)/.installed
	HYPOTHESIS_PROFILE=deep $(BIN)/pytest -q $(PARALLEL) -m hypothesis

lint: $(BIN)/.installed
	$(BIN)/ruff check loader plugins tests bench
	$(BIN)/ruff format --check loader plugins tests bench
	$(BIN)/mypy loader plugins
	$(BIN)/lint-imports

# docs/cli.md from the commands' own --help (tests/test_docs.py fails while it is stale)
cog: $(BIN)/.installed
	$(BIN)/cog -r docs/cli.md

clean:
	rm -rf $(VENV) $(VENV_DATASETTE_1) $(DB) $(DB).inspect.json .$(DB).cache test-artifacts
