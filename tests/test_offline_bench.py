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
    assert top["alarm_precision"] == "" and top["inconsistent_recall"] == 0.0   # no alarm raised


def test_alarm_precision_and_inconsistent_recall():
    gold = [_gold("a", "a1"), _gold("a", "a2", "inconsistent", "value"), _gold("a", "a3", "inconsistent", "time")]
    preds = [Prediction("r", "a", 0, "HR", "inconsistent"), Prediction("r", "a", 1, "RR", "inconsistent"),
             Prediction("r", "a", 2, "BP", "unverified", abstained_from="inconsistent")]
    judged = [Judgement("a", "a1", "lenient", "matcher", "incorrect", matched_prediction=1),
              Judgement("a", "a2", "lenient", "matcher", "correct", matched_prediction=0),
              Judgement("a", "a3", "lenient", "matcher", "incorrect", matched_prediction=2)]
    top = next(r for r in score_rows(gold, preds, judged, {"a": "nursing"}, "c", "inspector", "lenient", None)
               if r["scope"] == "all")
    # two alarms (the withheld one is no alarm), one credited; one of two inconsistent statements found
    assert (top["alarm_precision"], top["inconsistent_recall"]) == (0.5, 0.5)


# --- which real-patient sets the quality benchmark scores --------------------------------

def _fake_fixtures(tmp_path, monkeypatch):
    from pathlib import Path
    from types import SimpleNamespace

    from ehrlib.bench import quality

    for name in ("realnotes", "realnotes_mimic4", "realnotes_mixed", "estimate_blind"):
        (tmp_path / "tests" / "fixtures" / name).mkdir(parents=True)
        (tmp_path / "tests" / "fixtures" / name / "gold.jsonl").write_text("")
    dbs = {"mimic3": Path("m3.duckdb"), "mimic4": Path("m4.duckdb")}
    monkeypatch.setattr(quality, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(quality, "_demo_db", lambda work, flavor: dbs[flavor])
    monkeypatch.setattr(quality, "_admissions", lambda db: {dbs["mimic3"]: {1}, dbs["mimic4"]: {2}}[db])
    notes = [SimpleNamespace(note_id="a", hadm_id=1), SimpleNamespace(note_id="b", hadm_id=2)]
    monkeypatch.setattr(quality, "load_corpus", lambda cdir: SimpleNamespace(notes=notes))
    return quality, dbs


def test_dev_sets_include_the_mimic4_set_and_never_the_estimate(tmp_path, monkeypatch):
    quality, dbs = _fake_fixtures(tmp_path, monkeypatch)
    sets = quality.real_patient_sets(tmp_path)
    assert set(sets) == {"realnotes", "realnotes_mimic4", "realnotes_mixed"}  # other dev folders absent here
    assert sets["realnotes"][1] == [(dbs["mimic3"], None)]
    assert sets["realnotes_mimic4"][1] == [(dbs["mimic4"], None)]
    assert sets["realnotes_mixed"][1] == [(dbs["mimic3"], ["a"]), (dbs["mimic4"], ["b"])]


def test_estimate_only_on_request_with_each_note_on_its_own_database(tmp_path, monkeypatch):
    quality, dbs = _fake_fixtures(tmp_path, monkeypatch)
    sets = quality.real_patient_sets(tmp_path, with_estimate=True)
    assert sets["estimate_blind"][1] == [(dbs["mimic3"], ["a"]), (dbs["mimic4"], ["b"])]


def test_with_estimate_needs_the_quality_benchmark_named(tmp_path):
    import pytest

    from ehrlib.bench.cli import run_benchmarks
    from ehrlib.errors import ConfigError

    with pytest.raises(ConfigError, match="--only quality --with-estimate"):
        run_benchmarks([], tmp_path, with_estimate=True)
    with pytest.raises(ConfigError, match="--only quality --with-estimate"):
        run_benchmarks(["tools"], tmp_path, with_estimate=True)


def test_unmatched_share_counts_predictions_no_gold_entity_was_paired_with():
    gold = [_gold("a", "a1"), _gold("a", "a2")]
    preds = [Prediction("r", "a", 0, "HR", "consistent"), Prediction("r", "a", 1, "RR", "consistent"),
             Prediction("r", "a", 2, "BP", "consistent"), Prediction("r", "a", 3, "SpO2", "consistent")]
    judged = [Judgement("a", "a1", "lenient", "matcher", "correct", matched_prediction=0),
              Judgement("a", "a2", "lenient", "matcher", "incorrect", matched_prediction=2),
              Judgement("a", "a1", "harsh", "matcher", "correct", matched_prediction=1)]
    rows = score_rows(gold, preds, judged, {"a": "nursing"}, "c", "inspector", "lenient", None)
    top = next(r for r in rows if r["scope"] == "all")
    assert top["unmatched_share"] == 0.5  # predictions 1 and 3: the harsh pairing does not count here
    # the ceiling counts a2 too (paired, wrong label): recall 2/2, precision 2/4
    assert top["ceiling_f1"] == round(2 * 1.0 * 0.5 / 1.5, 4) and top["f1"] == round(2 * 0.5 * 0.25 / 0.75, 4)
    assert next(r for r in rows if r["scope"] == "consistent_only")["unmatched_share"] == ""


def test_asking_for_a_spent_or_missing_estimate_set_is_a_one_line_error(tmp_path, monkeypatch):
    import shutil

    import pytest

    from ehrlib.errors import DataError

    quality, _ = _fake_fixtures(tmp_path, monkeypatch)
    shutil.rmtree(tmp_path / "tests" / "fixtures" / "estimate_blind")
    with pytest.raises(DataError, match="no sealed estimate set"):
        quality.real_patient_sets(tmp_path, with_estimate=True)
    assert "realnotes" in quality.real_patient_sets(tmp_path)  # the dev sets still run without it
