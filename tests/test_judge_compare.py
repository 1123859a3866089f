"""Judges side by side: the Table 2 layout, spreads, repeats, agreement and disagreements."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.judge.compare import agreement_table, disagreements, paper_layout, repeat_variants, spread_table


def _rows(f1s, method="inspector", backbone="m", mode="lenient"):
    return pd.DataFrame([{"method": method, "backbone": backbone, "judge": "matcher", "mode": mode,
                          "recall": v, "precision": v, "f1": v, "n_notes": 5} for v in f1s])


def test_paper_layout_gives_mean_and_std_only_when_rows_repeat():
    rows = pd.concat([_rows([0.5, 0.7]), _rows([0.4], mode="harsh"), _rows([0.9], method="surface"),
                      _rows([0.9], method="surface", mode="harsh")])
    table = paper_layout(rows).set_index("method")
    assert table.loc["inspector", "lenient f1"] == "60.0 ± 14.1"
    assert table.loc["inspector", "harsh f1"] == "40.0"
    assert table.loc["surface", "lenient recall"] == "90.0" and table.loc["surface", "n"] == 1
    assert table.loc["inspector", "notes"] == 5
    assert list(table.columns)[:3] == ["backbone", "lenient recall", "lenient precision"]


def test_spread_table_counts_rows():
    spread = spread_table(_rows([0.5, 0.7, 0.6]))
    assert spread.loc[0, "f1_count"] == 3 and spread.loc[0, "f1_mean"] == pytest.approx(0.6)


def test_repeat_variants_names_each_repeat():
    assert repeat_variants({"a": {"x": 1}}, 2) == {"a-r1": {"x": 1}, "a-r2": {"x": 1}}
    with pytest.raises(ValueError):
        repeat_variants({"a": {}}, 0)


@pytest.fixture
def judged_run(tmp_path):
    """A minimal run folder: corpus, manifest, predictions and two judges' verdicts."""
    corpus = tmp_path / "corpus"
    notes = [Note("n1", 1, 2, "nursing", "2150-01-01", "a\nb\nc\n")]
    gold = [GoldEntity("n1", f"n1:e{k}", k, f"thing {k}", "consistent") for k in range(3)]
    write_jsonl(notes, corpus / "notes.jsonl")
    write_jsonl(gold, corpus / "gold.jsonl")
    run = tmp_path / "run"
    run.mkdir()
    preds = [Prediction("r", "n1", k, f"thing {k}", "consistent") for k in range(3)]
    write_jsonl(preds, run / "predictions.jsonl", run_id="r")
    (run / "manifest.json").write_text(json.dumps({"run_id": "r", "status": "complete",
                                                   "params": {"corpus": str(corpus)}}))
    verdicts = {"matcher": ["correct", "correct", "incorrect"], "other": ["correct", "incorrect", "correct"]}
    judgements = [Judgement("n1", f"n1:e{k}", mode, judge, v, f"{judge} says {v}", k)
                  for judge, vs in verdicts.items() for mode in ("harsh", "lenient") for k, v in enumerate(vs)]
    write_jsonl(judgements, run / "judgements.jsonl", run_id="r")
    return run


def test_agreement_and_disagreements(judged_run):
    table = agreement_table(judged_run, ["matcher", "other"])
    pair = table[(table["judge"] == "other") & (table["mode"] == "lenient")].iloc[0]
    assert pair["n_entities"] == 3 and pair["agreement"] == pytest.approx(1 / 3)
    within = table[table["mode"] == "harsh vs lenient"]
    assert set(within["agreement"]) == {1.0}  # each judge gave the same verdicts in both modes
    diff = disagreements(judged_run, "matcher", "other", "lenient")
    assert list(diff["line"]) == [1, 2]
    assert diff.loc[0, "other_verdict"] == "incorrect" and "thing 1" in diff.loc[0, "matcher_prediction"]


def test_runs_table_keeps_runs_of_the_corpus_and_leaves_ablations_out(judged_run, tmp_path):
    import shutil

    from ehrlib.judge.compare import runs_table

    root = tmp_path / "runs"
    root.mkdir()
    for name, params in (("a", {}), ("b", {"segmentation": False})):
        run = shutil.copytree(judged_run, root / name)
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["params"].update(params)
        (run / "manifest.json").write_text(json.dumps(manifest))
        pd.DataFrame([{"run_id": name, "method": "inspector", "backend": "offline", "model": None, "judge": "matcher",
                       "mode": "lenient", "n_notes": 1, "recall": 1.0, "precision": 1.0, "f1": 1.0}]
                     ).to_csv(run / "metrics.csv", index=False)
    corpus = json.loads((judged_run / "manifest.json").read_text())["params"]["corpus"]
    assert list(runs_table(root, corpus)["run_id"]) == ["a"]
    both = runs_table(root, corpus, ablations=True)
    assert list(both["ablation"]) == ["full", "no segmentation"] and set(both["backbone"]) == {"offline"}
