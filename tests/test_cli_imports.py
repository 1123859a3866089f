"""The command line is built without the heavy libraries: `ehrlib --help` stays fast
because the parsers import no pandas, DuckDB, SciPy, plotting or LLM client, and the
packages that export names load them on first use (ehrlib.lazy). Structural, not timed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from ehrlib.lazy import exported_names

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numpy", "duckdb", "matplotlib", "sklearn", "scipy", "ray", "httpx", "google.genai",
         "jsonschema", "papermill", "ehrlib.pipeline.offline", "tqdm")
LAZY_PACKAGES = ("ehrlib.db", "ehrlib.synth", "ehrlib.judge", "ehrlib.llm", "ehrlib.report")


def _loaded_after(code: str) -> list[str]:
    """Heavy modules present in a fresh interpreter after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import ehrlib",
    "import ehrlib.cli",
    "from ehrlib.cli import build_parser; build_parser()",
    # what `ehrlib run --help` and `ehrlib notes --help` build before printing
    "from ehrlib.cli import build_parser; build_parser().parse_known_args(['run', '--corpus', 'c', '--db', 'd'])",
    *(f"import {name}" for name in LAZY_PACKAGES),
])
def test_building_the_cli_imports_no_heavy_module(code):
    assert _loaded_after(code) == []


def test_the_probe_sees_a_heavy_import():
    assert "duckdb" in _loaded_after("from ehrlib.db import connect")   # exports still load their module


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_export_of_a_lazy_package_resolves_to_its_module(package):
    import importlib

    module = importlib.import_module(package)
    where = exported_names(module.__file__)
    assert sorted(where) == sorted(module.__all__)
    for name, source in where.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name


def test_a_submodule_named_like_an_export_does_not_hide_it():
    import importlib

    module = importlib.import_module("ehrlib.db.connect")   # the module named like the function, loaded alone
    from ehrlib.db import connect

    assert isinstance(connect, types.FunctionType) and connect is module.connect


def test_exported_names_reads_only_type_checking_imports(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text("from typing import TYPE_CHECKING\nfrom os import sep\n"
                    "if TYPE_CHECKING:\n    from a.b import c, d as e\n    from . import rel\n", encoding="utf-8")
    assert exported_names(init) == {"c": "a.b", "e": "a.b"}
