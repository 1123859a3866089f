"""Trace graphs, error taxonomy and bootstrap statistics."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from ehrlib.analysis import (
    END,
    START,
    bootstrap_ci,
    classify_error,
    classify_errors,
    error_distribution,
    paired_bootstrap,
    path_dispersion,
    path_frequencies,
    paths_from_gold,
    paths_from_tool_calls,
    read_tool_calls,
    run_spread,
    transition_graph,
)
from ehrlib.corpus.io import read_gold, read_predictions
from ehrlib.corpus.records import GoldEntity, Inconsistency, Judgement, Prediction, RowRef, TimeSpan, ToolCallRecord


def test_transition_graph_counts_consecutive_calls():
    g = transition_graph([("A", "B", "C"), ("A", "B"), ("A", "C"), ()])
    assert g.graph["n_paths"] == 3
    assert g["A"]["B"]["weight"] == 2 and g["B"]["C"]["weight"] == 1
    assert g[START]["A"]["weight"] == 3 and g["C"][END]["weight"] == 2
    assert g.nodes["A"]["count"] == 3
    bare = transition_graph([("A", "A", "B")], endpoints=False)
    assert set(bare.nodes) == {"A", "B"} and bare["A"]["A"]["weight"] == 1
    assert transition_graph([("A", "B"), ("A", "C")], min_weight=2).number_of_edges() == 1


def test_paths_from_run_tool_calls_follow_steps(tiny_run):
    run, _ = tiny_run
    calls = read_tool_calls(run)
    shuffled = calls.sample(frac=1.0, random_state=1)
    paths = paths_from_tool_calls(shuffled).set_index("entity_id")["path"]
    assert paths["e2"] == ("Semantic_Search", "Lexical_Search", "Get_Item_Value_History")
    assert "e3" not in paths.index  # the cache hit made no call
    assert read_tool_calls(run.parent / "missing").empty


def test_path_frequencies_and_dispersion_human_vs_model(tiny_run):
    run, corpus = tiny_run
    human = paths_from_gold(read_gold(corpus / "gold.jsonl"))["path"]
    freq = path_frequencies(human)
    assert freq.iloc[0].to_dict() == {"path": "Lexical_Search → Get_Item_Value_History", "length": 2, "n": 2,
                                      "share": 0.4}
    assert freq["n"].sum() == 5
    same = path_dispersion([("A", "B")] * 4)
    mixed = path_dispersion([("A", "B"), ("B", "A"), ("A", "C", "B"), ("C",)])
    assert same["n_distinct"] == 1 and same["top_share"] == 1.0
    assert mixed["entropy_bits"] > same["entropy_bits"]
    assert math.isnan(path_dispersion([])["entropy_bits"])


def _call(tool, n_rows=3, error=None):
    return ToolCallRecord(tool, {}, n_rows=n_rows, error=error)


@pytest.mark.parametrize("pred_kw, gold_kw, expected", [
    (None, {}, "not_extracted"),
    ({"from_cache": True}, {}, "validation_cache"),
    ({"tool_calls": (_call("Lexical_Search", error="bad item"),)}, {}, "tool_usage"),
    ({"tool_calls": (_call("Get_Item_Value_History", n_rows=0),)},
     {"evidence_row_ids": (RowRef("chartevents", 1),)}, "tool_usage"),
    ({"tool_calls": (_call("Semantic_Search"),)}, {}, "premature_conclusion"),
    ({"tool_calls": ()}, {}, "premature_conclusion"),
    ({"tool_calls": (_call("Get_Item_Value_History"),)}, {"check_path": ("Lexical_Search", "Get_Item_Value_History")},
     "premature_conclusion"),
    ({"tool_calls": (_call("Get_Item_Value_History"),)},
     {"inconsistency": Inconsistency("column", ("charttime",), "time")}, "temporal_reasoning"),
    ({"tool_calls": (_call("Get_Item_Value_History"),), "time_window": TimeSpan("2150-01-05", "2150-01-06")},
     {"time": TimeSpan("2150-01-01", "2150-01-01")}, "temporal_reasoning"),
    ({"tool_calls": (_call("Get_Item_Value_History"),), "time_window": TimeSpan("2150-01-01 08:00",
                                                                                "2150-01-01 09:00")},
     {"time": TimeSpan("2150-01-01", "2150-01-01"), "reasoning": "medical"}, "medical_knowledge"),
    ({"tool_calls": (_call("Get_Item_Value_History"),)}, {}, "other"),
])
def test_error_rules(pred_kw, gold_kw, expected):
    g = GoldEntity("n", "g", 0, "febrile", "inconsistent", **gold_kw)
    p = None if pred_kw is None else Prediction("r", "n", 0, "febrile", "consistent", **pred_kw)
    assert classify_error(g, p)[0] == expected


def test_classify_errors_and_distribution(tiny_run):
    run, corpus = tiny_run
    gold, preds = read_gold(corpus / "gold.jsonl"), read_predictions(run / "predictions.jsonl")
    js = [Judgement("n1", "g2", "harsh", "m", "incorrect", matched_prediction=1),
          Judgement("n1", "g3", "harsh", "m", "incorrect"),
          Judgement("n1", "g1", "harsh", "m", "correct", matched_prediction=0)]
    errors = classify_errors(js, gold, preds)
    assert errors["error_type"].tolist() == ["premature_conclusion", "not_extracted"]
    dist = error_distribution(errors)
    assert len(dist) == 7 and dist["n"].sum() == 2
    assert dist.set_index("error_type").loc["premature_conclusion", "share"] == 0.5


def test_bootstrap_ci_brackets_the_mean_and_is_seeded():
    scores = pd.DataFrame({"judge": "m", "mode": "harsh", "note_id": [f"n{i}" for i in range(20)],
                           "f1": [0.5 + 0.02 * i for i in range(20)]})
    ci = bootstrap_ci(scores, n_boot=500, seed=3).iloc[0]
    assert ci["f1_low"] < ci["mean"] < ci["f1_high"]
    assert ci["mean"] == pytest.approx(0.69)
    assert bootstrap_ci(scores, n_boot=500, seed=3).equals(bootstrap_ci(scores, n_boot=500, seed=3))
    const = scores.assign(f1=0.7)
    row = bootstrap_ci(const, n_boot=200).iloc[0]
    assert row["f1_low"] == pytest.approx(0.7) and row["f1_high"] == pytest.approx(0.7)


def test_paired_bootstrap_and_run_spread():
    a = pd.DataFrame({"note_id": list("abcdef"), "f1": [0.9, 0.8, 0.85, 0.9, 0.7, 0.95]})
    b = a.assign(f1=a["f1"] - 0.1)
    res = paired_bootstrap(a, b, n_boot=300)
    assert res["diff"] == pytest.approx(0.1) and res["p_not_better"] == 0.0
    with pytest.raises(ValueError):
        paired_bootstrap(a, b.assign(note_id=list("uvwxyz")))
    runs = pd.DataFrame({"method": "inspector", "judge": "m", "mode": "harsh", "recall": [0.5, 0.7],
                         "precision": [0.6, 0.6], "f1": [0.55, 0.65]})
    spread = run_spread(runs).iloc[0]
    assert spread["f1_mean"] == pytest.approx(0.6) and spread["precision_std"] == 0 and spread["f1_count"] == 2


def test_run_trace_paths_for_several_runs(tiny_run):
    import shutil

    from ehrlib.analysis import path_frequency_table, run_trace_paths, transition_graphs

    run, _ = tiny_run
    shutil.copytree(run, run.parent / "r2")
    paths = run_trace_paths({"model A": run, "model B": run.parent / "r2"})
    assert list(paths) == ["Annotators", "model A", "model B"]
    assert len(paths["Annotators"]) == 5 and len(paths["model A"]) == 4
    graphs = transition_graphs(paths, min_weight=2)
    assert graphs["Annotators"]["Lexical_Search"]["Get_Item_Value_History"]["weight"] == 2
    table = path_frequency_table(paths, top=1)
    assert table["source"].tolist() == ["Annotators", "model A", "model B"]
