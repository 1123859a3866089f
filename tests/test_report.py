"""`ehrlib report` on the hand-built run: every table, figure and viewer page is written."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from ehrlib.cli import main  # noqa: E402
from ehrlib.report import build_report, markdown_table  # noqa: E402
from ehrlib.viz.page_names import page_name  # noqa: E402


def test_markdown_table_formats_percentages():
    md = markdown_table(pd.DataFrame({"mode": ["harsh"], "f1": [0.71034], "n_gold": [5]}))
    assert md.splitlines() == ["| mode | f1 | n_gold |", "|---|---:|---:|", "| harsh | 71.03 | 5 |"]


def test_build_report_judges_first_and_writes_everything(tiny_run, tmp_path):
    run, _ = tiny_run
    figs = tmp_path / "figures"
    result = build_report(run, figures_dir=figs, n_bootstrap=200, formats=("png",), progress=False)
    for name in ("metrics", "metrics_ci", "errors", "error_types", "trace_paths_model", "trace_paths_gold",
                 "trace_dispersion", "metrics_by_note_type"):
        assert (run / f"{name}.csv").exists() and (run / f"{name}.md").exists(), name
    assert (run / "judgements.jsonl").exists()
    names = {p.name for p in figs.iterdir()}
    assert {"r1_main_results.png", "r1_tool_traces.png", "r1_error_types.png", "r1_f1_by_note_type.png",
            "r1_recall_by_inconsistency.png"} <= names
    assert (run / "figures" / "main_results.png").exists()
    assert (run / "viewer" / "index.html").exists()
    report = (run / "report.md").read_text()
    assert "Report of run r1" in report and "premature_conclusion" in report
    page = page_name("n1")
    assert f"[viewer/{page}](viewer/{page})" in report
    assert "[findings_by_confidence.csv](findings_by_confidence.csv)" in report
    errors = pd.read_csv(run / "errors.csv")
    # harsh: HR (label wrong, only Semantic_Search) and afebrile (unmatched) are the errors
    harsh = errors[errors["mode"] == "harsh"].set_index("entity_id")["error_type"].to_dict()
    assert harsh == {"g2": "premature_conclusion", "g3": "not_extracted"}
    disp = pd.read_csv(run / "trace_dispersion.csv").set_index("source")
    assert disp.loc["annotators", "n_paths"] == 5 and disp.loc["inspector", "n_paths"] == 4
    assert result.summary["mode"].tolist() == ["harsh", "lenient"]
    from ehrlib.report import compare_runs

    with_ci = compare_runs({"r1": run})
    assert (with_ci["f1_low"] <= with_ci["f1"]).all() and (with_ci["f1"] <= with_ci["f1_high"]).all()


def test_cli_report(tiny_run, tmp_path, capsys):
    run, _ = tiny_run
    code = main(["report", "--run", str(run), "--figures", "", "--n-bootstrap", "50", "--no-viewer",
                 "--formats", "png", "--no-progress"])
    assert code == 0
    assert "report.md" in capsys.readouterr().out
    assert not (run / "viewer").exists()
    assert main(["report", "--run", str(run), "--judge", "gpt-x", "--figures", ""]) == 2
    assert "no judgements by 'gpt-x'" in capsys.readouterr().err


def test_views_on_a_judged_run(tiny_run):
    from ehrlib.judge import evaluate_run
    from ehrlib.report import ablation_table, compare_runs, note_findings, schema_mapping, schema_overview

    run, _ = tiny_run
    evaluate_run(run, progress=False)
    findings = note_findings(run, mode="harsh")
    assert findings["statement"].tolist() == ["WBC 20", "HR", "temperature"]
    assert findings["verdict"].tolist() == ["consistent"] * 3   # the method's verdict: one column
    assert findings["judge_verdict"].tolist() == ["correct", "incorrect", "no gold counterpart"]
    assert not {"label", "finding"} & set(findings.columns)
    assert findings["confidence"].isna().all()  # the hand-built run is uncalibrated
    both = compare_runs({"a": run, "b": run})
    assert both["variant"].tolist() == ["a", "a", "b", "b"]
    table = ablation_table({"full": run, "same": run}, baseline="full", n_boot=50).set_index(["variant", "mode"])
    assert table.loc[("same", "harsh"), "diff_f1"] == 0.0
    assert "chartevents" in set(schema_overview()["table"])
    mapping = schema_mapping(tables=["chartevents"]).set_index("column")
    assert mapping.loc["charttime", "perturbed"].endswith(".OBSERVED_AT")


def test_prepare_inputs_checks_given_paths(tmp_path):
    import pytest

    from ehrlib.errors import ConfigError
    from ehrlib.report import prepare_inputs, project_path

    with pytest.raises(ConfigError, match="file not found"):
        prepare_inputs(tmp_path, db=str(tmp_path / "none.duckdb"))
    assert project_path(tmp_path) == tmp_path
    assert (project_path("figures").parent / "pyproject.toml").exists()


def test_paper_table_is_wide_in_percent():
    from ehrlib.report import paper_table

    long = pd.DataFrame({"variant": ["a", "a", "b", "b"], "mode": ["harsh", "lenient"] * 2,
                         "recall": [0.5, 0.6, 0.7, 0.8], "precision": [0.1, 0.2, 0.3, 0.4], "f1": [0.2] * 4})
    wide = paper_table(long)
    assert list(wide.columns) == ["variant", "lenient_recall", "lenient_precision", "lenient_f1", "harsh_recall",
                                  "harsh_precision", "harsh_f1"]
    assert wide.set_index("variant").loc["b", "harsh_recall"] == 70.0


def test_cli_report_compares_several_runs(tiny_run, tmp_path, capsys):
    import shutil

    run, _ = tiny_run
    other = run.parent / "r2"
    shutil.copytree(run, other)
    figs = tmp_path / "figs"
    assert main(["report", "--run", str(run), "--run", str(other), "--figures", str(figs), "--formats", "png",
                 "--no-viewer", "--n-bootstrap", "20", "--no-progress"]) == 0
    table = pd.read_csv(figs / "compare_metrics.csv")
    # same method and (copied) run id: labelled by folder name
    assert table["variant"].tolist() == ["r1", "r2"]
    assert (figs / "compare_main_results.png").exists()
    assert "comparison:" in capsys.readouterr().out


def test_run_failures_view(tiny_run):
    from ehrlib.corpus.io import write_jsonl
    from ehrlib.report import run_failures

    run, _ = tiny_run
    assert run_failures(run).empty
    write_jsonl([{"note_id": "n1", "stage": "note", "entity_id": None, "error": "IndexError: boom"}],
                run / "failures.jsonl", run_id="r1")
    assert run_failures(run)["error"].tolist() == ["IndexError: boom"]


def test_report_of_a_run_judged_twice_plots_one_judge(tiny_run, tmp_path):
    """matcher + an LLM judge give two rows per mode; each report figure shows one judge."""
    import pytest

    from ehrlib.judge import evaluate_run

    llm_factory = pytest.importorskip("ehrlib.llm.factory")
    run, _ = tiny_run
    evaluate_run(run, progress=False)
    client = llm_factory.make_client("scripted", replies=["Result: Correct"] * 10, max_concurrency=1)
    evaluate_run(run, judge="fake-pro", client=client, progress=False)
    result = build_report(run, judge="fake-pro", figures_dir=None, n_bootstrap=20, formats=("png",),
                          viewer=False, progress=False)
    assert result.summary["judge"].unique().tolist() == ["fake-pro"]
    assert (run / "figures" / "f1_per_note.png").exists()
    agreement = pd.read_csv(run / "judge_agreement.csv")
    assert set(agreement["judge"]) == {"fake-pro"} and set(agreement["mode"]) == {"harsh", "lenient"}
