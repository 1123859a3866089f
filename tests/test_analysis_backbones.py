"""Figure 4 per backbone: the errors of several judged runs grouped by the backbone in each manifest."""
from __future__ import annotations

import json
import shutil

import pandas as pd

from ehrlib.analysis.error_report import PAPER_TYPES, backbone_errors, paper_error_distribution
from ehrlib.cli import main
from ehrlib.judge import evaluate_run


def _copy(run, name, **manifest):
    other = run.parent / name
    shutil.copytree(run, other)
    data = json.loads((other / "manifest.json").read_text())
    (other / "manifest.json").write_text(json.dumps({**data, **manifest, "run_id": name}))
    return other


def test_errors_pool_per_backbone_and_keep_the_papers_five_types(tiny_run):
    run, _ = tiny_run
    runs = [run, _copy(run, "q1", model="qwen3-32b", backend="vllm"), _copy(run, "q2", model="qwen3-32b")]
    for r in runs:
        evaluate_run(r, progress=False)
    # lenient: one error per run (HR's label, premature_conclusion); the two Qwen runs pool
    errors = backbone_errors(runs, mode="lenient")
    assert errors.groupby("backbone").size().to_dict() == {"offline": 1, "qwen3-32b": 2}
    dist = paper_error_distribution(errors).set_index(["backbone", "error_type"])
    assert set(dist.index.get_level_values("error_type")) == set(PAPER_TYPES)
    assert dist.loc[("qwen3-32b", "premature_conclusion"), "n"] == 2
    assert dist.loc[("qwen3-32b", "premature_conclusion"), "share"] == 1.0
    assert dist.loc[("offline", "tool_usage"), "n"] == 0
    # at most per_backbone drawn per backbone
    assert backbone_errors(runs, mode="lenient", per_backbone=1).groupby("backbone").size().to_dict() == {
        "offline": 1, "qwen3-32b": 1}
    # harsh adds an extraction miss, which is none of the five verification types
    harsh = backbone_errors(runs, mode="harsh")
    assert (harsh["error_type"] == "not_extracted").sum() == 3
    assert paper_error_distribution(harsh)["n"].sum() == 3


def test_mixed_methods_are_told_apart(tiny_run):
    run, _ = tiny_run
    other = _copy(run, "c1", method="checkehr", model="qwen3-32b")
    for r in (run, other):
        evaluate_run(r, progress=False)
    assert set(backbone_errors([run, other])["backbone"]) == {"inspector / offline", "checkehr / qwen3-32b"}


def test_report_comparison_draws_figure_4_per_backbone(tiny_run, tmp_path):
    run, _ = tiny_run
    other = _copy(run, "g1", model="gpt-oss-20b")
    figs = tmp_path / "figs"
    assert main(["report", "--run", str(run), "--run", str(other), "--figures", str(figs), "--formats", "png",
                 "--no-viewer", "--n-bootstrap", "20", "--no-progress"]) == 0
    table = pd.read_csv(figs / "compare_error_types_by_backbone.csv")
    assert set(table["backbone"]) == {"offline", "gpt-oss-20b"} and len(table) == 2 * len(PAPER_TYPES)
    assert (figs / "compare_error_types_by_backbone.png").exists()
