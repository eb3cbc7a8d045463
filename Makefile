# a2a-grpc developer tasks. Every target that needs Python installs into .venv
# first, so `make serve` and `make test` work on a fresh machine.
SHELL := /bin/bash
PY_BOOT ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
CONSOLE_STAMP := console/node_modules/.installed
CONSOLE_PAGE := a2a_grpc/console/static/index.html
ARGS ?=

.PHONY: install console gen check-gen buf-deps lint test serve bench bench-quick breaking clean

install: $(STAMP) $(NODE_STAMP) buf-deps console

$(STAMP): pyproject.toml
	test -x $(PY) || $(PY_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): package.json
	npm install --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# The web console's page (console/ -> a2a_grpc/console/static, shipped in the
# wheel; docs/console.md): rebuilt when a source is newer than the built page.
console: $(CONSOLE_PAGE)

$(CONSOLE_STAMP): console/package.json console/package-lock.json
	cd console && npm ci --no-audit --no-fund --loglevel=error
	touch $(CONSOLE_STAMP)

$(CONSOLE_PAGE): $(CONSOLE_STAMP) $(wildcard console/src/*) console/index.html console/vite.config.ts console/tsconfig.json
	cd console && npm run --silent build

gen: $(STAMP)
	PYTHON=$(PY) bash scripts/gen.sh

# Regenerates and fails when the committed generated code differs.
check-gen: gen
	@git diff --exit-code --stat -- a2a_grpc/gen || { echo "a2a_grpc/gen is stale: run 'make gen' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- a2a_grpc/gen)" || { git status --porcelain -- a2a_grpc/gen; echo "untracked generated files"; exit 1; }

buf-deps: $(STAMP)
	PYTHON=$(PY) bash scripts/buf-deps.sh

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	npx buf lint

# Compares proto/ with a git revision (FILE rules): make breaking AGAINST=v0.1.0
AGAINST ?= main
breaking: install buf-deps
	bash scripts/breaking.sh $(AGAINST)

test: install
	$(VENV)/bin/pytest -q $(ARGS)

serve: $(STAMP)
	$(VENV)/bin/a2a-grpc serve $(ARGS)

bench: install
	$(PY) -m bench.run $(ARGS)

bench-quick: install
	$(PY) -m bench.run --quick $(ARGS)

clean:
	rm -rf $(VENV) node_modules .buf-deps .pytest_cache .mypy_cache .ruff_cache console/node_modules a2a_grpc/console/static
