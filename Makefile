# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.judgewise-demo
BASE_STAMP := $(VENV)/.judgewise-base
LOCAL_STAMP := $(VENV)/.judgewise-local
# Portable build of llama-cpp-python for the embedded judge (no -march=native, no llava).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
# `make test` skips tests marked slow; `make test SLOW=1` (used by CI) runs everything. The slow set holds end-to-end
# proofs: PostgreSQL servers (the quick set runs the same on SQLite), SIGKILL/crash repeats (one stays quick), the
# embedded judge, repo copies, the docs site build, paper-parity sweeps, statistical recovery tests. The tests run on two
# pytest-xdist workers, each module's tests on one of them (--dist loadfile: a module fixture such as the command x
# input matrix's cells is built once, not once per worker; loadgroup does not group under pytest 9.2, xdist #1386);
# `make test PYTEST_WORKERS=` runs them in one process. PYTEST_ARGS adds pytest options (e.g. PYTEST_ARGS="-k rank").
PYTEST_WORKERS ?= -n 2 --dist loadfile
ifeq ($(SLOW),1)
PYTEST_MARK :=
else
PYTEST_MARK := -m "not slow"
endif

.PHONY: demo test test-all install install-local clean docs

# llama-cpp-python has no prebuilt wheel for Linux x86-64 on PyPI: it compiles from source, once.
LOCAL_BUILD_TIME := 14 min of CPU time: about 7-8 min on an idle 2-core machine, 26-40 min on a busy one

# The demo needs only the package (and matplotlib for its report); the tests add their extras on top.
$(DEMO_STAMP): pyproject.toml
	@echo "Installing judgewise into $(VENV) (once)..."
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip setuptools wheel
	$(PY) -m pip install -q -e '.[report]'
	touch $@

# The tests' install includes the demo's (one pip run on a fresh clone, not two); it marks the demo's as done only when
# that has never run (a newer demo stamp would rebuild the embedded runtime, which depends on it).
$(BASE_STAMP): pyproject.toml
	@echo "Installing judgewise and its test extras into $(VENV) (once)..."
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip setuptools wheel
	$(PY) -m pip install -q -e '.[test,report,postgres,docs]'
	test -f $(DEMO_STAMP) || touch $(DEMO_STAMP)
	touch $@

$(LOCAL_STAMP): $(DEMO_STAMP)
	@echo "Building the embedded judge's runtime (llama-cpp-python from source, $(LOCAL_BUILD_TIME); once)..."
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q -e '.[local]'
	touch $@

install: $(BASE_STAMP)
install-local: $(LOCAL_STAMP)

# Part 1 (evaluate on replayed real verdicts) needs only the base install, so it runs before the embedded runtime is
# built; part 2 (the embedded judge judging, storing, resuming) runs once it is.
demo: $(DEMO_STAMP)
	$(VENV)/bin/judgewise demo --no-judge
	@test -f $(LOCAL_STAMP) || printf '\n%s\n%s\n\n' \
	  "Part 1 above showed the main job. Part 2 runs the embedded judge live: its runtime compiles now," \
	  "once ($(LOCAL_BUILD_TIME)); part 1 needed none of it. Ctrl-C stops here."
	@$(MAKE) --no-print-directory $(LOCAL_STAMP)
	$(VENV)/bin/judgewise demo --no-replay

# mypy checks the store package first: each store satisfies its Protocol (src/judgewise/store/protocol.py).
test: $(BASE_STAMP)
	$(PY) -m mypy src/judgewise/store
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest $(PYTEST_MARK) $(PYTEST_WORKERS) $(PYTEST_ARGS)

# The docs site (mkdocs + material + mkdocstrings), built strictly: any warning fails.
docs: $(BASE_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d site

test-all:
	$(MAKE) test SLOW=1

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache build site src/*.egg-info demo-output
