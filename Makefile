# Two commands a user needs: `make demo` and `make test`.
# Uses the active environment (virtualenv or conda) if there is one, else creates .venv.
ifneq ($(strip $(VIRTUAL_ENV)$(CONDA_PREFIX)),)
PY := python
STAMP := .installed.stamp
else
PY := .venv/bin/python
STAMP := .venv/.installed.stamp
endif

.PHONY: demo test figures bench install clean

$(STAMP): pyproject.toml
	@if [ "$(PY)" = ".venv/bin/python" ] && [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) -m ehrlib demo --notebooks

# the unit tests, then every notebook executed with its fast defaults (nbval, outputs not compared)
test: $(STAMP)
	$(PY) -m pytest -q tests --nbval-lax notebooks

# regenerate the committed figures/: every notebook with its full params/NN_*.yaml
figures: $(STAMP)
	$(PY) -m ehrlib experiments run all --full

bench: $(STAMP)
	$(PY) -m ehrlib bench

clean:
	rm -rf runs .pytest_cache
