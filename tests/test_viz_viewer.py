"""Findings viewer markup: method verdicts, repeated spans, the judge layer, unlabelled runs."""
from __future__ import annotations

import re
from dataclasses import replace

from ehrlib.corpus.records import Judgement, Note, Prediction
from ehrlib.viz.page_names import page_name
from ehrlib.viz.viewer import COLOURS, findings_html, method_verdict


def _p(line, entity, label="consistent", kind=None, **kw):
    return Prediction("r", "n", line, entity, label, inconsistency_type=kind, **kw)


def test_method_verdict_covers_every_label():
    assert method_verdict(_p(0, "x")) == "consistent"
    assert method_verdict(_p(0, "x", "inconsistent", "contradiction")) == "contradiction"
    assert method_verdict(_p(0, "x", "inconsistent")) == "contradiction"
    assert method_verdict(_p(0, "x", "inconsistent", "missing")) == "missing"
    assert method_verdict(_p(0, "x", failure="timeout")) == "unverified"
    # a label another stage may emit is shown as unverified, never as a confirmed value
    assert method_verdict(replace(_p(0, "x"), label="unverified")) == "unverified"


def test_repeated_text_on_a_line_marks_each_occurrence():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80 at 08:00, HR 140 at 12:00\nBP ok")
    preds = [(0, _p(0, "HR")), (1, _p(0, "HR", "inconsistent", "contradiction")), (2, _p(1, "HR"))]
    page = findings_html(note, preds)
    marks = re.findall(r'<mark class="v-(\w+)"[^>]*data-findings="(p\d)"[^>]*>(?:<a[^>]*>)?([^<]*)', page)
    assert marks == [("consistent", "p0", "HR"), ("contradiction", "p1", "HR")]
    line0 = page.split('<td class="txt"')[1]
    assert line0.index('data-findings="p0"') < line0.index(" at 08:00") < line0.index('data-findings="p1"')
    assert "text not found on this line" in page  # finding 2 says so instead of vanishing
    assert f"background-color:{COLOURS['contradiction'][0]}" in page


def test_judge_layer_only_with_gold():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80")
    preds = [(0, _p(0, "HR"))]
    plain = findings_html(note, preds)
    assert "data-judge" not in plain and "judge (" not in plain
    from ehrlib.corpus.records import GoldEntity

    gold = [GoldEntity("n", "g1", 0, "HR", "inconsistent")]
    judged = findings_html(note, preds, gold, [Judgement("n", "g1", "lenient", "matcher", "incorrect",
                                                           matched_prediction=0)])
    assert 'data-judge="incorrect"' in judged and "wrong label 1" in judged
    # the text stays coloured by the method (consistent), whatever the judge says
    assert '<mark class="v-consistent"' in judged


def test_unlabelled_report_writes_findings_and_viewer(tiny_run, capsys):
    from ehrlib.cli import main

    run, corpus = tiny_run
    (corpus / "gold.jsonl").unlink()
    assert main(["judge", "--run", str(run), "--no-progress"]) == 0
    assert "nothing to judge" in capsys.readouterr().out
    assert main(["report", "--run", str(run), "--figures", "", "--no-progress"]) == 0
    assert not (run / "judgements.jsonl").exists() and not (run / "metrics.csv").exists()
    findings = (run / "notes_summary.csv").read_text().splitlines()
    assert findings[0] == ("note_id,note_type,hadm_id,contradiction,missing,unverified,consistent,total,status,"
                           "failure,lines_checked,lines_out_of_scope,lines_nothing_found,page")
    # the missing furosemide first; the hand-built run recorded no segments: nothing claimed beyond checked lines
    assert findings[1] == f"n2,nursing,22,0,1,0,1,2,ok,,2,0,0,viewer/{page_name('n2')}"
    index = (run / "viewer" / "index.html").read_text()
    assert "no gold labels" in index and index.index('data-note="n2"') < index.index('data-note="n1"')
    report = (run / "report.md").read_text()
    assert "no gold labels" in report and "[viewer/index.html](viewer/index.html)" in report
    assert f"[viewer/{page_name('n1')}](viewer/{page_name('n1')})" in report


def test_rule_behind_an_offline_verdict_is_shown():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80")
    page = findings_html(note, [(0, replace(_p(0, "HR"), rule_id="verify.value.in_range"))])
    assert "<b>rule:</b> <code>verify.value.in_range</code>" in page


def test_a_finding_whose_span_overlaps_another_joins_its_mark():
    # "Cr 0.9 at discharge" is not on the line as written; its first occurrence found overlaps
    # "Cr 1.3 on admission": both findings must be reachable from the one mark
    note = Note(note_id="n1", subject_id=1, hadm_id=2, note_type="physician", chartdate="2107-01-12",
                text="# ARF: Cr 1.3 on admission, improved to 0.9 at discharge.")
    preds = [Prediction(run_id="r", note_id="n1", line=0, entity="Cr 1.3 on admission", label="consistent"),
             Prediction(run_id="r", note_id="n1", line=0, entity="Cr 1.3", label="inconsistent")]
    page = findings_html(note, list(enumerate(preds)))
    marks = re.findall(r'<mark [^>]*data-findings="([^"]+)"', page)
    assert len(marks) == 1 and set(marks[0].split()) == {"p0", "p1"}
