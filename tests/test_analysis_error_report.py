"""Error analysis tables: every type listed, breakdowns, the audit sheet, and a real run's rows."""
from __future__ import annotations

import json

import pandas as pd

from ehrlib.analysis.error_report import (
    PAPER_TYPES,
    error_counts,
    error_examples,
    error_rows,
    errors_by,
    sampling_sheet,
)
from ehrlib.analysis.taxonomy import ERROR_TYPES
from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import GoldEntity, ItemRef, Judgement, Note, Prediction, ToolCallRecord


def _errors():
    return pd.DataFrame({"error_type": ["premature_conclusion"] * 3 + ["not_extracted"],
                         "note_id": ["a", "a", "b", "b"], "line": [3, 1, 2, 5],
                         "note_type": ["nursing", "nursing", "physician", "physician"],
                         "tables": ["labevents", "labevents, chartevents", "chartevents", "prescriptions"],
                         "note_line": ["x"] * 4, "prediction": ["p"] * 4, "gold": ["g"] * 4,
                         "judge_reason": ["r"] * 4, "tool_trace": ["t"] * 4})


def test_counts_list_every_type_and_mark_the_papers_five():
    counts = error_counts(_errors()).set_index("error_type")
    assert list(counts.index) == list(ERROR_TYPES)
    assert counts.loc["premature_conclusion", "n"] == 3 and counts.loc["premature_conclusion", "share"] == 0.75
    assert counts["in_paper"].sum() == len(PAPER_TYPES) == 5 and not counts.loc["not_extracted", "in_paper"]


def test_breakdowns_count_an_entity_once_per_table():
    by_table = errors_by(_errors(), "tables")
    assert by_table.loc["chartevents", "total"] == 2 and by_table.loc["labevents", "premature_conclusion"] == 2
    assert errors_by(_errors(), "note_type").loc["nursing", "total"] == 2


def test_examples_are_the_first_per_type_in_note_order():
    ex = error_examples(_errors(), per_type=2)
    assert list(ex["error_type"]) == ["premature_conclusion", "premature_conclusion", "not_extracted"]
    assert list(ex["line"][:2]) == [1, 3]


def test_sampling_sheet_caps_each_type_and_leaves_audit_columns_empty(tmp_path):
    path = sampling_sheet(_errors(), tmp_path / "audit" / "sheet.csv", per_type=2, seed=1)
    sheet = pd.read_csv(path, keep_default_na=False)
    assert sheet["error_type"].value_counts().to_dict() == {"premature_conclusion": 2, "not_extracted": 1}
    assert set(sheet["audit_type"]) == {""} and "audit_note" in sheet.columns


def test_error_rows_read_a_run(tmp_path):
    corpus, run = tmp_path / "corpus", tmp_path / "run"
    run.mkdir()
    note = Note("n1", 1, 2, "nursing", "2150-01-01", "HR 88\nK 5.9\n")
    gold = [GoldEntity("n1", "n1:e0", 0, "HR", "consistent", items=(ItemRef("chartevents", "Heart Rate", 220045),)),
            GoldEntity("n1", "n1:e1", 1, "K", "inconsistent", items=(ItemRef("labevents", "Potassium", 50971),))]
    write_jsonl([note], corpus / "notes.jsonl")
    write_jsonl(gold, corpus / "gold.jsonl")
    call = ToolCallRecord(tool="Lexical_Search", args={"query": "K"}, n_rows=3, ms=1.0, error=None)
    write_jsonl([Prediction("r", "n1", 1, "K", "consistent", reason="normal", tool_calls=(call,))],
                run / "predictions.jsonl", run_id="r")
    (run / "manifest.json").write_text(json.dumps({"run_id": "r", "status": "complete",
                                                   "params": {"corpus": str(corpus)}}))
    write_jsonl([Judgement("n1", "n1:e0", "lenient", "matcher", "incorrect", "no match"),
                 Judgement("n1", "n1:e1", "lenient", "matcher", "incorrect", "labels differ", 0),
                 Judgement("n1", "n1:e1", "harsh", "matcher", "incorrect", "labels differ", 0)],
                run / "judgements.jsonl", run_id="r")
    rows = error_rows(run, judge="matcher", mode="lenient").set_index("entity_id")
    assert rows.loc["n1:e0", "error_type"] == "not_extracted" and rows.loc["n1:e0", "note_line"] == "HR 88"
    assert rows.loc["n1:e1", "error_type"] == "premature_conclusion"  # searched, never read evidence
    assert "Lexical_Search(query=K) -> 3 rows" in rows.loc["n1:e1", "tool_trace"]
    assert rows.loc["n1:e1", "tables"] == "labevents" and rows.loc["n1:e1", "inconsistency"] != "consistent"


def test_sampling_sheet_never_overwrites_audit_entries(tmp_path):
    import pytest

    from ehrlib.errors import DataError

    path = sampling_sheet(_errors(), tmp_path / "sheet.csv", per_type=2)
    sampling_sheet(_errors(), path, per_type=1)   # nothing audited yet: drawn again
    sheet = pd.read_csv(path, keep_default_na=False)
    sheet.loc[0, "audit_type"] = "other"
    sheet.to_csv(path, index=False)
    before = path.read_bytes()
    with pytest.raises(DataError, match="already holds audited rows"):
        sampling_sheet(_errors(), path)
    assert path.read_bytes() == before
