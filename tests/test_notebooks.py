"""Notebooks: STYLE.md conventions, parameter parity with params/*.yaml, and execution.

`make test` executes every notebook with its fast defaults through nbval; here every
notebook is executed once more with papermill to check that the defaults write nothing
git tracks (figures go under runs/, never into figures/).
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXPECTED = ["01_schema_exploration", "02_synthetic_corpus", "03_ontology_build", "04_run_inspector", "05_judging",
            "06_error_analysis", "07_ablations", "08_tool_traces", "09_generalization"]

def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_the_numbered_notebooks_exist_with_params():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED
    assert sorted(p.stem for p in (ROOT / "params").glob("[0-9][0-9]_*.yaml")) == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_conventions(path):
    nb = _load(path)
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown"
    text = "".join(first["source"])
    assert text.startswith("# ") and "Purpose:" in text and "**Inputs:**" in text and "**Outputs:**" in text
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and nb["cells"][1] is tagged[0]
    for src in _code(nb):
        assert not re.search(r"^\s*(def|class|async def)\s", src, flags=re.M), src
        assert "%pip" not in src and "!pip" not in src
        assert not re.search(r"\bSELECT\b.+\bFROM\b", src, flags=re.I | re.S), "inline SQL"
        assert "prompt" not in src.lower(), "inline prompt"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, "commit notebooks output-stripped"
            assert "nbval-check-output" not in cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_defaults_write_figures_under_runs_and_full_params_into_figures(path):
    papermill = pytest.importorskip("papermill")
    params = papermill.inspect_notebook(str(path))
    if "figures_dir" in params:
        assert params["figures_dir"]["default"].strip("'\"").startswith("runs/")
        full = yaml.safe_load((ROOT / "params" / f"{path.stem}.yaml").read_text(encoding="utf-8"))
        assert full["figures_dir"] == "figures"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_params_yaml_has_the_parameter_cell_keys(path):
    papermill = pytest.importorskip("papermill")
    keys = list(papermill.inspect_notebook(str(path)))
    values = yaml.safe_load((ROOT / "params" / f"{path.stem}.yaml").read_text(encoding="utf-8"))
    assert list(values) == keys


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.slow
def test_running_every_notebook_with_its_defaults_leaves_git_status_clean(tmp_path):
    """Defaults are what a new user runs (Run All, nbval): they must write only under runs/."""
    papermill = pytest.importorskip("papermill")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    before = _git_status()
    for path in NOTEBOOKS:
        _execute(papermill, path, tmp_path / path.name)
    assert _git_status() == before


def _execute(papermill, path: Path, out: Path) -> dict:
    """Run ``path`` with its defaults into ``out``; returns the executed notebook."""
    for attempt in (1, 2):
        try:
            papermill.execute_notebook(str(path), str(out), cwd=str(ROOT / "notebooks"), kernel_name="python3",
                                       progress_bar=False, log_output=False)
            break
        except RuntimeError as exc:  # a kernel losing a port race on a shared machine, not a notebook error
            if attempt == 2 or "Kernel died before replying" not in str(exc):
                raise
    return _load(out)


@pytest.mark.slow
def test_an_executed_notebook_shows_its_figure_as_a_picture(tmp_path):
    """The figure cell's result is a PNG, not the text ``<Figure size ...>`` (nbval-lax compares no output)."""
    papermill = pytest.importorskip("papermill")
    path = ROOT / "notebooks" / "01_schema_exploration.ipynb"  # the fastest notebook with a figure
    nb = _execute(papermill, path, tmp_path / path.name)
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    texts = ["".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("text", "")) for o in outputs]
    assert len(pictures) == 1
    assert "".join(pictures[0]["data"]["text/plain"]) == "[figure: Rows per table]"
    assert not [t for t in texts if "<Figure size" in t]
