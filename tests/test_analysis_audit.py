"""`ehrlib judge --audit`: a sampling sheet written from a judged run, filled in by hand, read back."""
from __future__ import annotations

import pandas as pd
import pytest

from ehrlib.analysis.audit import MAX_SHEET_BYTES, audit_run, read_audit_sheet
from ehrlib.analysis.error_report import error_rows, sampling_sheet
from ehrlib.cli import main
from ehrlib.errors import DataError
from ehrlib.judge import evaluate_run


def _sheet(run, tmp_path, fill):
    """The run's harsh errors drawn into a sheet; ``fill(sheet)`` edits the frame before it is written back."""
    evaluate_run(run, modes=("harsh",), progress=False)
    path = sampling_sheet(error_rows(run, judge="matcher", mode="harsh"), tmp_path / "sheet.csv")
    sheet = pd.read_csv(path, keep_default_na=False, dtype=str)
    fill(sheet)
    sheet.to_csv(path, index=False)
    return path


def _audit_as(types):
    def fill(sheet):
        sheet["audit_type"] = [types.get(e, "") for e in sheet["entity_id"]]
    return fill


def test_audit_reports_confusion_and_agreement(tiny_run, tmp_path, capsys):
    run, _ = tiny_run
    path = _sheet(run, tmp_path, lambda s: None)
    rules = pd.read_csv(path, keep_default_na=False).set_index("entity_id")["error_type"].to_dict()
    # harsh: HR's label is wrong without reading evidence (g2), afebrile has no prediction (g3)
    assert rules == {"g2": "premature_conclusion", "g3": "not_extracted"}
    sheet = pd.read_csv(path, keep_default_na=False, dtype=str)
    # the auditor confirms g2's type (typed loosely) and re-types g3
    sheet["audit_type"] = sheet["entity_id"].map({"g2": "Premature Conclusion", "g3": "medical_knowledge"})
    sheet.to_csv(path, index=False)
    assert main(["judge", "--run", str(run), "--audit", str(path), "--mode", "harsh"]) == 0
    out = capsys.readouterr().out
    assert "audit_matcher_harsh.csv" in out
    confusion = pd.read_csv(run / "audit_matcher_harsh.csv").set_index("rule_type")
    assert confusion.loc["premature_conclusion", "premature_conclusion"] == 1
    assert confusion.loc["premature_conclusion", "agreement"] == 1.0
    assert confusion.loc["not_extracted", "medical_knowledge"] == 1 and confusion.loc["not_extracted", "agreement"] == 0
    assert list(confusion.index) == ["premature_conclusion", "not_extracted"] and confusion["total"].sum() == 2
    result = audit_run(run, path, judge="matcher", mode="harsh")
    summary = result.summary.iloc[0]
    assert summary["n_audited"] == 2 and summary["n_blank"] == 0 and summary["agreement"] == 0.5
    assert summary["n_rule_changed"] == 0
    assert "Error audit of run" in result.md_path.read_text()


def test_kappa_of_a_known_table(tmp_path):
    from ehrlib.analysis.audit import AuditRow, audit_summary

    # rules a,a,b,b; auditor a,b,b,b -> p_o = 3/4, p_e = .5*.25 + .5*.75 = .5, kappa = .5
    pairs = [("tool_usage", "tool_usage"), ("tool_usage", "other"), ("other", "other"), ("other", "other")]
    rows = [AuditRow(i + 2, "n", f"e{i}", r, a) for i, (r, a) in enumerate(pairs)]
    s = audit_summary(rows, blank=1)
    assert s["agreement"] == 0.75 and s["kappa"] == pytest.approx(0.5) and s["n_blank"] == 1


def test_blank_rows_are_counted_not_scored(tiny_run, tmp_path):
    run, _ = tiny_run
    path = _sheet(run, tmp_path, lambda s: s.__setitem__("audit_type", ["other"] + [""] * (len(s) - 1)))
    summary = audit_run(run, path, mode="harsh").summary.iloc[0]
    assert summary["n_audited"] == 1 and summary["n_blank"] == 1


@pytest.mark.parametrize(("fill", "message"), [
    (lambda s: s.__setitem__("audit_type", ["tool usage", "premature"]), "row 3: unknown audit_type 'premature'"),
    (lambda s: s.__delitem__("audit_type"), "lacks column(s) audit_type"),
    (lambda s: s.__setitem__("audit_type", [""] * len(s)), "no row has an audit_type yet"),
    (lambda s: s.__setitem__("entity_id", ["n9:e0", s["entity_id"][1]]) or s.__setitem__("audit_type", "other"),
     "row 2: entity 'n9:e0' of note"),
    (lambda s: s.__setitem__("entity_id", [s["entity_id"][0]] * 2) or s.__setitem__("audit_type", "other"),
     "row 3: entity"),
    (lambda s: s.__setitem__("error_type", ["other", "guess"]) or s.__setitem__("audit_type", "other"),
     "row 3: unknown error_type 'guess'"),
])
def test_bad_sheets_are_one_line_errors_naming_the_row(tiny_run, tmp_path, capsys, fill, message):
    run, _ = tiny_run
    path = _sheet(run, tmp_path, fill)
    with pytest.raises(DataError, match=None) as info:
        audit_run(run, path, mode="harsh")
    assert message in str(info.value) and "\n" not in str(info.value)
    assert main(["judge", "--run", str(run), "--audit", str(path), "--mode", "harsh"]) == 2
    assert message in capsys.readouterr().err
    assert not (run / "audit_matcher_harsh.csv").exists()


def test_sheet_of_another_judge_mode_does_not_belong(tiny_run, tmp_path):
    run, _ = tiny_run
    path = _sheet(run, tmp_path, lambda s: s.__setitem__("audit_type", "other"))
    with pytest.raises(DataError, match="no incorrect verdicts|is not an error of"):
        audit_run(run, path, mode="lenient")
    assert main(["judge", "--run", str(run), "--audit", str(path), "--mode", "both"]) == 2


def test_unreadable_sheets(tmp_path):
    big = tmp_path / "big.csv"
    big.write_bytes(b"note_id,entity_id,error_type,audit_type\n" + b"x" * MAX_SHEET_BYTES)
    with pytest.raises(DataError, match="over the"):
        read_audit_sheet(big)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("note_id,entity_id,error_type,audit_type\nn\xe9,e,other,other\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        read_audit_sheet(latin)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("note_id,entity_id,error_type,audit_type\nn,e,other,other,extra\n")
    with pytest.raises(DataError, match="row 2: more cells"):
        read_audit_sheet(ragged)
    with pytest.raises(DataError, match="no such audit sheet"):
        read_audit_sheet(tmp_path / "absent.csv")
    quoted = tmp_path / "quoted.csv"
    quoted.write_text("note_id,entity_id,error_type,audit_type\n'-n1,e,other,Tool-Usage\n")
    rows, blank = read_audit_sheet(quoted)
    assert rows[0].note_id == "-n1" and rows[0].audit_type == "tool_usage" and blank == 0


@pytest.mark.slow
def test_notebook_06_reads_an_audited_sheet_back_and_draws_figure_4_by_backbone(tmp_path):
    import json
    import shutil
    from pathlib import Path

    papermill = pytest.importorskip("papermill")
    nb = Path(__file__).resolve().parents[1] / "notebooks" / "06_error_analysis.ipynb"
    sheet, runs = tmp_path / "sheet.csv", tmp_path / "runs"
    base = {"work_dir": str(tmp_path / "work"), "runs_dir": str(runs), "figures_dir": str(tmp_path / "figures"),
            "sheet": str(sheet), "patients": 2, "notes_per_type": 1}

    def execute(name, **params):
        out = tmp_path / name
        papermill.execute_notebook(str(nb), str(out), parameters={**base, **params}, cwd=str(tmp_path),
                                   kernel_name="python3", progress_bar=False, log_output=False)
        outputs = [o for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"]
        return "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for o in outputs)

    shown = execute("first.ipynb")
    assert "Audit read-back skipped" in shown and "Figure 4 by backbone skipped" in shown
    filled = pd.read_csv(sheet, keep_default_na=False, dtype=str)
    assert len(filled) > 0
    filled["audit_type"] = filled["error_type"]   # the auditor agrees with every rule
    filled.to_csv(sheet, index=False)
    run = runs / "nb06-inspector"
    other = runs / "other"
    shutil.copytree(run, other)
    manifest = json.loads((other / "manifest.json").read_text())
    (other / "manifest.json").write_text(json.dumps({**manifest, "run_id": "other", "model": "qwen3-32b"}))
    shown = execute("second.ipynb", audited_sheet=str(sheet), backbone_runs=[str(other)])
    assert "Audit read-back skipped" not in shown and "n_audited" in shown and "kappa" in shown
    confusion = pd.read_csv(run / "audit_matcher_lenient.csv")
    assert (confusion["agreement"] == 1.0).all() and confusion["total"].sum() == len(filled)
    assert (tmp_path / "figures" / "06_error_types_by_backbone.png").exists()
