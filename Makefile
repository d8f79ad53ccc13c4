# The two commands: `make serve` and `make test`. Everything else is set up on demand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DB ?= catalog.db
HOST ?= 127.0.0.1
PORT ?= 8001

.PHONY: serve test build check bench bench-smoke publish lint clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

$(DB): $(BIN)/.installed $(wildcard seeds/*) $(wildcard loader/*.py)
	$(BIN)/paper-catalog build seeds --db $(DB)

build: $(DB)

check: $(BIN)/.installed
	$(BIN)/paper-catalog check seeds

serve: $(DB)
	$(BIN)/paper-catalog serve --db $(DB) --host $(HOST) --port $(PORT)

test: $(BIN)/.installed
	$(BIN)/pytest -q

lint: $(BIN)/.installed
	$(BIN)/ruff check loader plugins tests bench
	$(BIN)/ruff format --check loader plugins tests bench

clean:
	rm -rf $(VENV) $(DB) $(DB).inspect.json test-artifacts
