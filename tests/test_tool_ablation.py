"""Table 5 (ehrlib.report.tool_ablation): variants and the table's layout on hand-made run folders."""
from __future__ import annotations

import pandas as pd

from ehrlib.pipeline.params import TOOL_CATEGORIES, params_from_mapping
from ehrlib.report import tool_ablation_runs, tool_ablation_table, tool_ablation_variants


def test_variants_leave_out_one_category_each():
    v = tool_ablation_variants()
    assert list(v) == ["full", "no_alignment_tools", "no_profiling_tools", "no_temporal_tools", "no_criterion_tools"]
    assert v["full"] == {}
    for cat in TOOL_CATEGORIES:
        tools = v[f"no_{cat}_tools"]["tools"]
        assert cat not in tools and len(tools) == len(TOOL_CATEGORIES) - 1
        assert params_from_mapping(v[f"no_{cat}_tools"]).tools == tuple(tools)   # valid run parameters


def _run(folder, f1_lenient, f1_harsh=0.1):
    folder.mkdir(parents=True)
    pd.DataFrame([{"judge": "matcher", "mode": "lenient", "recall": 0.8, "precision": 0.9, "f1": f1_lenient},
                  {"judge": "matcher", "mode": "harsh", "recall": 0.5, "precision": 0.6, "f1": f1_harsh},
                  {"judge": "gpt-5", "mode": "lenient", "recall": 0.0, "precision": 0.0, "f1": 0.0}]
                 ).to_csv(folder / "metrics.csv", index=False)
    return folder


def test_table_layout_rows_columns_and_difference(tmp_path):
    offline = {"full": _run(tmp_path / "o-full", 0.75), "no_alignment_tools": _run(tmp_path / "o-a", 0.70),
               "no_criterion_tools": _run(tmp_path / "o-c", 0.7612)}
    _run(tmp_path / "llm-full", 0.6)
    _run(tmp_path / "llm-no_temporal_tools", 0.65)
    (tmp_path / "llm-no_profiling_tools").mkdir()   # not judged: left out
    llm = tool_ablation_runs(tmp_path, "llm")
    assert sorted(llm) == ["full", "no_temporal_tools"]
    t = tool_ablation_table({"offline": offline, "gemini": llm})
    assert list(t["tools"]) == ["All tools", "w/o Alignment", "w/o Exploration", "w/o Timeline", "w/o Criterion"]
    assert list(t.columns) == ["tools", "offline lenient_recall", "offline lenient_precision", "offline lenient_f1",
                               "offline d_f1", "gemini lenient_recall", "gemini lenient_precision",
                               "gemini lenient_f1", "gemini d_f1"]
    off = t.set_index("tools")
    assert off.loc["All tools", "offline lenient_f1"] == 75.0 and off.loc["All tools", "offline d_f1"] == 0.0
    assert off.loc["w/o Alignment", "offline d_f1"] == -5.0
    assert off.loc["w/o Criterion", "offline d_f1"] == 1.12
    assert pd.isna(off.loc["w/o Exploration", "offline lenient_f1"])   # not run: empty, not zero
    assert off.loc["w/o Timeline", "gemini d_f1"] == 5.0
    both = tool_ablation_table({"offline": offline}, modes=("lenient", "harsh"))
    assert both.loc[0, "offline harsh_f1"] == 10.0 and "offline d_f1" in both.columns
