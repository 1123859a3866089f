"""The quality benchmark's scoring: per-note means, scopes, and inconsistency-type recall."""
from __future__ import annotations

from ehrlib.bench.quality import HEADER, score_rows
from ehrlib.corpus.records import GoldEntity, Inconsistency, Judgement, Prediction


def _gold(note: str, eid: str, label: str = "consistent", typ: str | None = None) -> GoldEntity:
    inc = Inconsistency("column", (), typ) if typ else None
    return GoldEntity(note, eid, 0, "HR", label, inconsistency=inc)


def test_score_rows_means_over_notes_and_scopes():
    gold = [_gold("a", "a1"), _gold("a", "a2", "inconsistent", "value"), _gold("b", "b1")]
    preds = [Prediction("r", "a", 0, "HR", "consistent"), Prediction("r", "b", 0, "HR", "consistent"),
             Prediction("r", "b", 1, "RR", "consistent")]
    judged = [Judgement("a", "a1", "lenient", "matcher", "correct"), Judgement("a", "a2", "lenient", "matcher",
                                                                               "incorrect"),
              Judgement("b", "b1", "lenient", "matcher", "correct"), Judgement("b", "b1", "harsh", "matcher",
                                                                               "incorrect")]
    rows = score_rows(gold, preds, judged, {"a": "nursing", "b": "physician"}, "c", "inspector", "lenient", 0.5)
    assert all(set(HEADER) == set(r) for r in rows)
    top = next(r for r in rows if r["scope"] == "all")
    # note a: recall 1/2, precision 1/1; note b: recall 1/1, precision 1/2 -> means 0.75 / 0.75
    assert (top["recall"], top["precision"], top["n_gold"], top["n_pred"]) == (0.75, 0.75, 3, 3)
    assert top["median_s_per_note"] == 0.5
    value = next(r for r in rows if r["scope"] == "inconsistency=value")
    assert value["recall"] == 0.0 and value["precision"] == ""
    nursing = next(r for r in rows if r["scope"] == "note_type=nursing")
    assert nursing["n_notes"] == 1 and nursing["recall"] == 0.5
