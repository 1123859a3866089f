"""EHRCon in notebook 09: skipped with a message without a release, run on an EHRCon-shaped
release written from the demo notes otherwise.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ehrlib.corpus.io import load_corpus
from ehrlib.experiments.ehrcon import EHRCON_KEY, demo_release, ehrcon_variants

ROOT = Path(__file__).resolve().parents[1]


def test_no_release_is_skipped_with_the_reason(tmp_path):
    variants, skipped = ehrcon_variants(tmp_path, None)
    assert variants == {} and "no EHRCon release given" in skipped["reason"].iloc[0]
    variants, skipped = ehrcon_variants(tmp_path, tmp_path / "absent", db="x.duckdb")
    assert variants == {} and "not found" in skipped["reason"].iloc[0]


def test_demo_release_becomes_a_test_split_variant(tmp_path, mimic3_demo_db):
    release = demo_release(tmp_path / "release")
    assert sorted(p.name for p in release.iterdir()) == ["original", "processed"]
    variants, skipped = ehrcon_variants(tmp_path / "work", release, db=mimic3_demo_db)
    assert skipped.empty and variants[EHRCON_KEY]["split"] == "test"
    corpus = load_corpus(variants[EHRCON_KEY]["corpus"], "test")
    assert len(corpus.notes) == 10 and len(corpus.gold) > 300
    again, _ = ehrcon_variants(tmp_path / "work", release, variant="processed", db=mimic3_demo_db)  # reimport
    assert json.loads((Path(again[EHRCON_KEY]["corpus"]) / "import.json").read_text())["variant"] == "processed"


def _execute(tmp_path, **params):
    papermill = pytest.importorskip("papermill")
    nb = ROOT / "notebooks" / "09_generalization.ipynb"
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "09.ipynb"
    base = {"work_dir": str(tmp_path / "work"), "runs_dir": str(tmp_path / "runs"),
            "figures_dir": str(tmp_path / "figures"), "real_datasets": [], "layouts": ["mimic3"], "patients": 2,
            "notes_per_type": 1, "real_note_limit": 1}
    papermill.execute_notebook(str(nb), str(out), parameters={**base, **params}, cwd=str(tmp_path),
                               kernel_name="python3", progress_bar=False, log_output=False)
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                   for o in outputs)


@pytest.mark.slow
def test_notebook_09_skips_and_runs_the_ehrcon_section(tmp_path, mimic3_demo_db):
    shown = _execute(tmp_path / "skip")
    assert "EHRCon section skipped: no EHRCon release given" in shown
    release = demo_release(tmp_path / "release")
    shown = _execute(tmp_path / "run", ehrcon_release=str(release), ehrcon_db=str(mimic3_demo_db))
    assert "EHRCon section skipped" not in shown and "EHRCon" in shown
    assert (tmp_path / "run" / "runs" / "nb09-ehrcon" / "judgements.jsonl").exists()
