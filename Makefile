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

.PHONY: demo test lint typecheck check bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	case ",$(EXTRAS)," in *,mem0,*) $(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0 ;; esac
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
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

clean:
	rm -rf $(VENV) reports/*.html
