"""Per-finding exports of ``ehrlib report``: findings.jsonl / .csv (/ .parquet), one row per
prediction in the documented, versioned schema; per-note counts in notes_summary.csv."""
from __future__ import annotations

import csv
import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from ehrlib.corpus.io import read_predictions, write_jsonl
from ehrlib.findings import COLUMNS, SCHEMA_VERSION, Findings
from ehrlib.report.build import build_report

DOCS = Path(__file__).resolve().parents[1] / "docs" / "findings_schema.md"


def _report(run: Path) -> None:
    build_report(run, n_bootstrap=20, viewer=False, formats=(), progress=False)


@pytest.mark.parametrize("labelled", [True, False])
def test_one_row_per_prediction_in_the_versioned_schema(tiny_run, labelled):
    run, corpus = tiny_run
    if not labelled:
        (corpus / "gold.jsonl").unlink()
    _report(run)
    preds = read_predictions(run / "predictions.jsonl")
    lines = [json.loads(x) for x in (run / "findings.jsonl").read_text().splitlines()]
    assert len(lines) == len(preds) == 5
    assert all(list(rec) == list(COLUMNS) and rec["schema_version"] == SCHEMA_VERSION for rec in lines)
    assert [(r["note_id"], r["line"], r["statement"]) for r in lines] == [(p.note_id, p.line, p.entity) for p in preds]
    furosemide = lines[4]
    assert furosemide["verdict"] == "missing" and furosemide["note_type"] == "nursing" and furosemide["hadm_id"] == 22
    assert lines[0]["evidence"] == "labevents#1" and lines[0]["items"] == "White Blood Cells"
    rows = list(csv.DictReader((run / "findings.csv").open(newline="")))
    assert list(rows[0]) == list(COLUMNS) and len(rows) == 5
    assert rows[4]["hadm_id"] == "22" and rows[4]["n_tool_calls"] == "2"      # integers stay integers
    assert Findings.read_jsonl(run / "findings.jsonl").to_frame().equals(pd.read_json(
        run / "findings.jsonl", lines=True, dtype=False).astype({"hadm_id": "Int64", "confidence": "float64"}))
    summary = (run / "notes_summary.csv").read_text().splitlines()
    assert summary[0].startswith("note_id,note_type,hadm_id,contradiction,missing,unverified,consistent,total,status")
    assert len(summary) == 3


def test_csv_cells_are_formula_safe_and_jsonl_keeps_the_text(tiny_run):
    run, _ = tiny_run
    preds = read_predictions(run / "predictions.jsonl")
    hostile = [preds[0].__class__(**{**{f: getattr(preds[0], f) for f in preds[0].__dataclass_fields__},
                                     "entity": "=HYPERLINK(\"http://x\")", "reason": "@SUM(A1)\r-1+2"}),
               *preds[1:]]
    write_jsonl(hostile, run / "predictions.jsonl")
    _report(run)
    row = next(csv.DictReader((run / "findings.csv").open(newline="")))
    assert row["statement"] == "'=HYPERLINK(\"http://x\")" and row["reason"] == "'@SUM(A1)\n-1+2"
    first = json.loads((run / "findings.jsonl").read_text().splitlines()[0])
    assert first["statement"] == "=HYPERLINK(\"http://x\")"


def test_failed_note_is_in_the_summary_as_failed(tiny_run):
    run, _ = tiny_run
    preds = [p for p in read_predictions(run / "predictions.jsonl") if p.note_id == "n1"]
    write_jsonl(preds, run / "predictions.jsonl")
    write_jsonl([{"note_id": "n1", "status": "ok"}, {"note_id": "n2", "status": "failed",
                                                     "failure": "DataError: no admission"}], run / "progress.jsonl")
    _report(run)
    summary = pd.read_csv(run / "notes_summary.csv").set_index("note_id")
    assert summary.loc["n2", "status"] == "failed" and "no admission" in summary.loc["n2", "failure"]
    assert summary.loc["n1", "status"] == "ok"
    assert len((run / "findings.jsonl").read_text().splitlines()) == len(preds) == 3


def test_parquet_when_pyarrow_is_there(tiny_run):
    run, _ = tiny_run
    _report(run)
    path = run / "findings.parquet"
    if importlib.util.find_spec("pyarrow") is None:
        assert not path.exists()
        return
    back = pd.read_parquet(path)
    assert list(back.columns) == list(COLUMNS) and len(back) == 5 and (back["schema_version"] == SCHEMA_VERSION).all()


def test_docs_page_gives_every_column_and_the_version():
    text = DOCS.read_text(encoding="utf-8")
    documented = re.findall(r"^\| `(\w+)` \|", text, flags=re.M)
    assert documented == list(COLUMNS)
    assert f"`{SCHEMA_VERSION}`" in text


def test_review_order_file_holds_the_same_rows_in_the_viewers_order(tiny_run):
    from ehrlib.judge.evaluate import load_run
    from ehrlib.viz.viewer_site import finding_rows

    run, _ = tiny_run
    _report(run)
    ranked = pd.read_csv(run / "findings_by_confidence.csv")
    assert list(ranked.columns) == ["rank", *COLUMNS, "page"]
    assert [f"viewer/{r['page']}" for r in finding_rows(load_run(run))] == list(ranked["page"])
    assert ranked["verdict"].iloc[0] == "missing" and ranked["statement"].iloc[0] == "furosemide"
    plain = pd.read_csv(run / "findings.csv")
    assert sorted(map(tuple, ranked[list(COLUMNS)].astype(str).values)) == sorted(
        map(tuple, plain.astype(str).values))
