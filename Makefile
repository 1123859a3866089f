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

.PHONY: demo test figures bench install lock clean

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

clean:
	rm -rf runs .pytest_cache
