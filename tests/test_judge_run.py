"""evaluate_run and `ehrlib judge` on a hand-built run directory (tests/conftest.py: tiny_run)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ehrlib.cli import main
from ehrlib.errors import EhrlibError
from ehrlib.judge import evaluate_run, read_judgements


def test_evaluate_run_with_matcher_writes_tables(tiny_run):
    run, corpus = tiny_run
    summary = evaluate_run(run, progress=False).set_index("mode")
    # harsh: n1 1/3 (WBC right, HR label wrong, afebrile unmatched), n2 2/2 (cached HR, lasix=furosemide)
    assert summary.loc["harsh", "recall"] == pytest.approx((1 / 3 + 1) / 2)
    assert summary.loc["harsh", "micro_recall"] == pytest.approx(3 / 5)
    # lenient adds afebrile ~ temperature (same concept family, same label)
    assert summary.loc["lenient", "recall"] == pytest.approx((2 / 3 + 1) / 2)
    assert summary.loc["harsh", "run_id"] == "r1" and summary.loc["harsh", "method"] == "inspector"
    for name in ("metrics", "note_scores", "metrics_by_note_type", "metrics_by_inconsistency",
                 "metrics_by_reasoning"):
        assert (run / f"{name}.csv").exists() and (run / f"{name}.md").exists()
    md = (run / "metrics.md").read_text()
    assert "By gold inconsistency type" in md and "| harsh |" in md
    assert len(read_judgements(run)) == 10  # 5 gold x 2 modes
    by_inc = pd.read_csv(run / "metrics_by_inconsistency.csv")
    assert set(by_inc["inconsistency"]) == {"consistent", "value", "missing"}
    assert json.loads((run / "judges.json").read_text())["matcher"]["kind"] == "matcher"


def test_rejudging_replaces_only_that_judges_rows(tiny_run):
    run, _ = tiny_run
    evaluate_run(run, progress=False)
    llm_factory = pytest.importorskip("ehrlib.llm.factory")
    replies = ["Result: Correct"] * 5
    client = llm_factory.make_client("scripted", replies=replies, max_concurrency=1)
    summary = evaluate_run(run, judge="fake-pro", modes=("lenient",), client=client, progress=False)
    assert summary["recall"].tolist() == [1.0] and summary["judge"].tolist() == ["fake-pro"]
    judges = {(j.judge, j.mode) for j in read_judgements(run)}
    assert judges == {("matcher", "harsh"), ("matcher", "lenient"), ("fake-pro", "lenient")}
    evaluate_run(run, modes=("harsh",), progress=False)
    assert len(read_judgements(run)) == 15
    assert len(pd.read_csv(run / "metrics.csv")) == 3


def test_only_finished_notes_are_scored(tiny_run):
    run, _ = tiny_run
    (run / "progress.jsonl").write_text('{"note_id": "n2", "status": "ok"}\n')
    summary = evaluate_run(run, progress=False)
    assert summary["n_notes"].tolist() == [1, 1]
    assert summary["n_gold"].tolist() == [2, 2]


def test_cli_judge_prints_table_and_rejects_bad_run(tiny_run, tmp_path, capsys):
    run, corpus = tiny_run
    assert main(["judge", "--run", str(run), "--mode", "harsh", "--corpus", str(corpus), "--no-progress",
                 "--review", "3"]) == 0
    out = capsys.readouterr().out
    assert "| matcher | harsh |" in out
    assert (run / "review_matcher_harsh.csv").exists()
    assert main(["judge", "--run", str(tmp_path / "nope")]) == 2
    assert "no predictions.jsonl" in capsys.readouterr().err


def test_missing_corpus_is_a_clear_error(tiny_run, tmp_path):
    run, _ = tiny_run
    with pytest.raises(EhrlibError, match="notes.jsonl"):
        evaluate_run(run, corpus_dir=tmp_path, progress=False)


def test_corpus_typed_relative_elsewhere_is_found_from_the_provenance(tiny_run, monkeypatch, tmp_path):
    # `ehrlib run --corpus corpora/x` in one folder, `ehrlib judge` from another: the params
    # keep the relative path, the provenance holds the resolved one
    run, corpus = tiny_run
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["params"]["corpus"] = "corpora/elsewhere"
    manifest["data_source"]["corpus"] = str(corpus.resolve() / "notes.jsonl")
    (run / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.chdir(tmp_path)
    assert not evaluate_run(run, progress=False).empty


def test_unlabelled_corpus_is_not_judged(tiny_run):
    run, corpus = tiny_run
    (corpus / "gold.jsonl").unlink()
    assert evaluate_run(run, progress=False).empty
    assert not (run / "judgements.jsonl").exists()


def test_crashed_notes_are_scored_not_dropped(tiny_run):
    run, _ = tiny_run
    (run / "progress.jsonl").write_text('{"note_id": "n1", "status": "error"}\n{"note_id": "n2", "status": "ok"}\n')
    summary = evaluate_run(run, progress=False)
    assert summary["n_notes"].tolist() == [2, 2]


def test_judge_agreement_against_the_matcher(tiny_run):
    from ehrlib.corpus.records import Judgement
    from ehrlib.judge import judge_agreement

    run, _ = tiny_run
    evaluate_run(run, modes=("harsh",), progress=False)
    matcher = [j for j in read_judgements(run)]
    flipped = [Judgement(j.note_id, j.entity_id, j.mode, "llm", j.verdict if i else
                         ("incorrect" if j.verdict == "correct" else "correct")) for i, j in enumerate(matcher)]
    flipped.append(Judgement("n2", "g5", "harsh", "llm", "unparsed"))
    table = judge_agreement(matcher + flipped[:-2] + flipped[-1:]).iloc[0]
    assert table["judge"] == "llm" and table["n_entities"] == 4 and table["n_unparsed"] == 1
    assert table["agreement"] == 0.75
    assert pd.isna(judge_agreement(matcher)["kappa"]).all()  # no other judge: empty table


def test_llm_judging_resumes_from_the_run_cache(tiny_run):
    pytest.importorskip("ehrlib.llm.factory")
    run, _ = tiny_run
    replies = ["Reason: ok\nResult: Correct", "Result: Incorrect", "Result: Correct", "Result: Correct",
               "Result: Incorrect"]
    first = evaluate_run(run, judge="fake-pro", modes=("harsh",), progress=False,
                         llm={"backend": "scripted", "replies": replies, "max_concurrency": 1})
    assert (run / "llm_judge_cache.sqlite").exists()
    # no replies left: every answer must come from the cache
    again = evaluate_run(run, judge="fake-pro", modes=("harsh",), progress=False,
                         llm={"backend": "scripted", "replies": [], "max_concurrency": 1})
    assert again["recall"].tolist() == first["recall"].tolist() == [pytest.approx((2 / 3 + 1 / 2) / 2)]


def test_repeated_llm_passes_are_stored_under_their_labels(tiny_run):
    pytest.importorskip("ehrlib.llm.factory")
    run, _ = tiny_run
    for i, verdict in enumerate(("Correct", "Incorrect")):
        evaluate_run(run, judge="fake-pro", modes=("harsh",), label=f"fake-pro#{i}", progress=False,
                     llm={"backend": "scripted", "replies": [f"Result: {verdict}"] * 5, "cache_salt": str(i),
                          "max_concurrency": 1})
    metrics = pd.read_csv(run / "metrics.csv").set_index("judge")
    assert metrics.loc["fake-pro#0", "recall"] == 1.0 and metrics.loc["fake-pro#1", "recall"] == 0.0
    judges = json.loads((run / "judges.json").read_text())
    assert judges["fake-pro#1"]["model"] == "fake-pro"


def test_review_sheet_round_trip(tiny_run):
    from ehrlib.errors import ConfigError
    from ehrlib.judge import review_agreement, write_review_sheet

    run, _ = tiny_run
    evaluate_run(run, modes=("harsh",), progress=False)
    path = write_review_sheet(run, "matcher", "harsh", n=4, seed=1)
    sheet = pd.read_csv(path, keep_default_na=False)
    assert list(sheet.columns) == ["note_id", "entity_id", "judge", "mode", "GOLD", "PREDICT", "RESULT", "EVAL"]
    assert set(sheet["RESULT"].str.split(":").str[0]) == {"correct", "incorrect"}  # stratified: both kinds
    assert (sheet["EVAL"] == "").all() and "label:" in sheet["GOLD"].iloc[0]
    assert review_agreement(sheet)["n_reviewed"] == 0
    sheet["EVAL"] = [r.split(":")[0].capitalize() for r in sheet["RESULT"]]  # a reviewer who agrees
    sheet.loc[0, "EVAL"] = "Incorrect" if sheet.loc[0, "EVAL"] == "Correct" else "Correct"  # ... except once
    result = review_agreement(sheet)
    assert result["n_reviewed"] == len(sheet) and result["agreement"] == pytest.approx(1 - 1 / len(sheet))
    sheet.loc[1, "EVAL"] = "maybe"
    with pytest.raises(ConfigError, match="EVAL must be"):
        review_agreement(sheet)
