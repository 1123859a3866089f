"""What a new user meets first: where `report` writes figures, one-line hints for a wrong
--corpus or a mistyped --backend, help on every `run` option, and a run summary that
counts the findings by verdict."""
from __future__ import annotations

import argparse
import json
import re

import pytest

from ehrlib import cli
from ehrlib.corpus.records import Prediction
from ehrlib.pipeline.stages import unknown_backend_message
from ehrlib.pipeline.summary import FindingCounts, count_findings


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_report_keeps_figures_in_the_run_folder(tiny_run, tmp_path, monkeypatch):
    run, _ = tiny_run
    monkeypatch.chdir(tmp_path)
    argv = ["report", "--run", str(run), "--no-viewer", "--formats", "png", "--n-bootstrap", "20", "--no-progress"]
    assert cli.main(argv) == 0
    assert (run / "figures" / "main_results.png").exists()
    assert not (tmp_path / "figures").exists()   # the checkout's figures/ stays clean
    assert cli.main([*argv, "--figures", str(tmp_path / "mine")]) == 0
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == \
        sorted(f"r1_{p.name}" for p in (run / "figures").iterdir())


def test_report_with_empty_figures_writes_no_figure(tiny_run, tmp_path, monkeypatch):
    run, _ = tiny_run
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "--run", str(run), "--figures", "", "--no-viewer", "--n-bootstrap", "20",
                     "--no-progress"]) == 0
    assert (run / "report.md").exists()
    assert not list(run.rglob("*.png")) and not list(tmp_path.rglob("*.png"))


def test_report_compares_into_the_first_run_by_default(tiny_run, tmp_path, monkeypatch):
    import shutil

    run, _ = tiny_run
    other = run.parent / "r2"
    shutil.copytree(run, other)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["report", "--run", str(run), "--run", str(other), "--no-viewer", "--formats", "png",
                     "--n-bootstrap", "20", "--no-progress"]) == 0
    assert (run / "figures" / "compare_main_results.png").exists()
    assert not (tmp_path / "figures").exists()


@pytest.mark.parametrize("name", ["NOTEEVENTS.csv.gz", "discharge.CSV"])
def test_a_notes_csv_as_corpus_points_to_notes_import(tmp_path, synth_db, capsys, name):
    csv = tmp_path / name
    csv.write_bytes(b"ROW_ID,TEXT\n1,x\n")
    assert cli.main(["run", "--corpus", str(csv), "--db", str(synth_db), "--runs-dir", str(tmp_path / "runs"),
                     "--no-progress"]) == 2
    line = _one_error_line(capsys)
    assert f"ehrlib notes import {csv} OUT_DIR" in line and "--corpus OUT_DIR" in line
    assert not (tmp_path / "runs").exists()


def test_a_folder_without_notes_says_what_a_corpus_holds(tmp_path, synth_db, capsys):
    folder = tmp_path / "empty"
    folder.mkdir()
    assert cli.main(["run", "--corpus", str(folder), "--db", str(synth_db), "--runs-dir", str(tmp_path / "runs"),
                     "--no-progress"]) == 2
    line = _one_error_line(capsys)
    assert "no notes.jsonl; a corpus folder holds notes.jsonl" in line and "ehrlib notes import" in line


def test_a_mistyped_backend_gets_a_suggestion_and_no_test_backend():
    message = unknown_backend_message("ofline")
    assert message.startswith("unknown backend 'ofline'; did you mean 'offline'? backends: ")
    assert "scripted" not in message and "gemini" in message
    assert "did you mean" not in unknown_backend_message("zzz")


def test_run_with_a_mistyped_backend_is_one_line(tmp_path, synth_db, capsys):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "notes.jsonl").write_text(json.dumps({
        "note_id": "n1", "subject_id": 1, "hadm_id": 1, "note_type": "nursing", "chartdate": "2150-01-01",
        "text": "HR 80."}) + "\n", encoding="utf-8")
    assert cli.main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--backend", "ofline",
                     "--runs-dir", str(tmp_path / "runs"), "--no-progress"]) == 2
    assert "did you mean 'offline'?" in _one_error_line(capsys)


def _bare_options(parser: argparse.ArgumentParser, path: str) -> list[str]:
    out = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            out += [o for name, sp in a.choices.items() for o in _bare_options(sp, f"{path} {name}")]
        elif not a.help or a.help == argparse.SUPPRESS:
            out.append(f"{path} {'/'.join(a.option_strings) or a.dest}")
    return out


def test_every_option_of_every_command_has_help():
    assert _bare_options(cli.build_parser(), "ehrlib") == []


def _pred(label, **kw) -> Prediction:
    return Prediction(run_id="r", note_id="n", line=0, entity="HR", label=label, **kw)


def test_findings_are_counted_by_verdict():
    preds = [_pred("inconsistent", inconsistency_type="contradiction"), _pred("inconsistent"),
             _pred("inconsistent", inconsistency_type="missing"),
             _pred("unverified", abstained_from="inconsistent", confidence=0.3), _pred("unverified"),
             _pred("inconsistent", inconsistency_type="contradiction", failure="timeout"),
             _pred("consistent")]
    counts = count_findings(preds)
    assert counts == FindingCounts(contradictions=2, missing=1, unverified=3, withheld=1, consistent=1)
    assert counts.describe() == ("7 findings: 2 contradictions, 1 missing, 3 unverified "
                                 "(1 withheld for low confidence), 1 consistent")


def _one_note_corpus(tmp_path, synth_db, note_type: str, text: str):
    """A corpus folder with one note about the database's first admission."""
    import duckdb

    con = duckdb.connect(str(synth_db), read_only=True)
    sid, hadm, day = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS "
                                 "ORDER BY HADM_ID LIMIT 1").fetchone()
    con.close()
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "notes.jsonl").write_text(json.dumps({
        "note_id": "n1", "subject_id": sid, "hadm_id": hadm, "note_type": note_type, "chartdate": str(day),
        "text": text}) + "\n", encoding="utf-8")
    return corpus


def test_run_summary_line_counts_findings(tmp_path, synth_db, capsys):
    corpus = _one_note_corpus(tmp_path, synth_db, "nursing", "HR 80 this morning.\nWBC 12.")
    assert cli.main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--method", "surface",
                     "--runs-dir", str(tmp_path / "runs"), "--run-id", "s", "--no-progress"]) == 0
    out = capsys.readouterr().out
    from ehrlib.pipeline.summary import run_findings

    counts = run_findings(tmp_path / "runs" / "s")
    assert counts.total > 0
    assert f"1 notes, {counts.describe()}; " in out


def test_progress_bar_and_summary_count_the_same_findings(tmp_path, synth_db, capsys):
    # the plan's statement is an entity the scope filter sets aside: not a finding
    corpus = _one_note_corpus(tmp_path, synth_db, "physician", "HR 80 this morning.\nWBC 12.\n"
                              "Plan: start vancomycin tomorrow, recheck WBC in the morning.")
    assert cli.main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--runs-dir", str(tmp_path / "runs"),
                     "--run-id", "p"]) == 0
    captured = capsys.readouterr()
    bar = [int(n) for n in re.findall(r"findings=(\d+)", captured.err)]
    said = re.search(r"1 notes, (\d+) findings", captured.out)
    progress = json.loads((tmp_path / "runs" / "p" / "progress.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert progress["n_entities"] > progress["n_predictions"]   # the case the two counts used to disagree on
    assert bar and said and bar[-1] == int(said.group(1)) == progress["n_predictions"]
