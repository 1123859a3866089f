"""The run/evaluation notebooks on real notes without gold labels (MIMIC-III demo).

A corpus as ``ehrlib notes import`` leaves it has no gold.jsonl; the notebooks must run on
it as they are: the inspector notebook shows the findings and the viewer, the evaluation
notebooks show that nothing was scored instead of failing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ehrlib.corpus.io import read_notes, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["04_run_inspector", "05_judging", "06_error_analysis"])
def test_notebook_runs_on_unlabelled_notes(stem, tmp_path, mimic3_demo_db):
    papermill = pytest.importorskip("papermill")
    corpus = tmp_path / "corpus"
    write_jsonl(read_notes(ROOT / "tests" / "fixtures" / "realnotes" / "notes.jsonl")[:2], corpus / "notes.jsonl")
    out = tmp_path / f"{stem}.ipynb"
    params = {"corpus": str(corpus), "db": str(mimic3_demo_db), "runs_dir": str(tmp_path / "runs"),
              "work_dir": str(tmp_path / "work"), "figures_dir": str(tmp_path / "figures"), "run_id": "unlabelled",
              "variants": {"inspector": {"method": "inspector"}}}
    keys = set(papermill.inspect_notebook(str(ROOT / "notebooks" / f"{stem}.ipynb")))
    papermill.execute_notebook(str(ROOT / "notebooks" / f"{stem}.ipynb"), str(out),
                               parameters={k: v for k, v in params.items() if k in keys}, cwd=str(tmp_path),
                               kernel_name="python3", progress_bar=False, log_output=False)
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not (tmp_path / "runs" / "unlabelled-inspector" / "judgements.jsonl").exists()
    if stem == "04_run_inspector":
        shown = "".join("".join(o.get("data", {}).get("text/html", "")) for o in cells[-1]["outputs"])  # viewer cell
        assert '<div class="ehrlib-viewer"' in shown and "<style" not in shown  # the notebook_view fragment
        assert 'data-verdict="contradiction"' in shown or 'data-verdict="consistent"' in shown
