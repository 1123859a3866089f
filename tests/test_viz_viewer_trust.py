"""What lets a reviewer trust the viewer: review order by confidence, the threshold,
deciding evidence first, time in words, coverage marks, failed notes, safe page names.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from ehrlib.corpus.io import write_json, write_jsonl
from ehrlib.corpus.records import Note, Prediction, RowRef, TimeSpan
from ehrlib.viz.coverage import classify_lines, coverage_counts
from ehrlib.viz.finding_panel import evidence_order, finding_panel
from ehrlib.viz.page_names import FINDINGS_PAGE, INDEX_PAGE, MAX_SLUG, page_name
from ehrlib.viz.ranking import initial_threshold, ranked, raw_verdict, verdict_at
from ehrlib.viz.run_records import Dropped, NoteRecord, SegmentInfo, Statement, read_note_records
from ehrlib.viz.threshold_controls import UNCALIBRATED, threshold_controls
from ehrlib.viz.time_words import describe_time
from ehrlib.viz.viewer import findings_html


def _p(entity: str, label: str = "consistent", conf: float | None = None, kind: str | None = None,
       line: int = 0, **kw) -> Prediction:
    return Prediction("r", "n", line, entity, label, inconsistency_type=kind, confidence=conf, **kw)


# --- review order and threshold ----------------------------------------------------------

def test_findings_rank_inconsistent_first_by_confidence_none_last_stable():
    preds = list(enumerate([
        _p("ok-high", conf=0.99), _p("c-none", "inconsistent", None, "contradiction"),
        _p("c-low", "inconsistent", 0.40, "contradiction"), _p("m-high", "inconsistent", 0.95, "missing"),
        _p("ok-none"), _p("c-high", "inconsistent", 0.90, "contradiction"),
        _p("withheld", "unverified", 0.20, abstained_from="inconsistent", reason="low confidence"),
        _p("c-none-2", "inconsistent", None, "contradiction"), _p("ok-low", conf=0.10)]))
    order = [p.entity for _, p in ranked(preds)]
    assert order == ["m-high", "c-high", "c-low", "withheld", "c-none", "c-none-2", "ok-high", "ok-low", "ok-none"]


def test_threshold_withholds_below_and_restores_a_withheld_verdict():
    withheld = _p("HR", "unverified", 0.25, abstained_from="inconsistent", reason="low confidence")
    assert raw_verdict(withheld) == "contradiction"
    assert verdict_at(withheld, 0.30) == "unverified" and verdict_at(withheld, 0.20) == "contradiction"
    sure = _p("Na", "inconsistent", 0.80, "missing")
    assert verdict_at(sure, 0.80) == "missing" and verdict_at(sure, 0.81) == "unverified"
    assert verdict_at(_p("K", "inconsistent", None, "contradiction"), 1.0) == "contradiction"  # no confidence
    failed = _p("x", "unverified", 0.9, abstained_from="consistent", failure="timeout")
    assert raw_verdict(failed) == "unverified"  # a failure is never restored to a verdict


def test_initial_threshold_from_params_else_above_every_withheld():
    preds = [_p("a", "unverified", 0.27, abstained_from="consistent"), _p("b", conf=0.5),
             _p("c", "unverified", 0.3, abstained_from="inconsistent")]
    assert initial_threshold(preds) == pytest.approx(0.31)
    assert initial_threshold(preds, {"abstain_below": 0.35, "db": "x"}) == 0.35
    assert initial_threshold([_p("b", conf=0.5)]) == 0.0
    assert all(verdict_at(p, initial_threshold(preds)) == "unverified" for p in preds if p.abstained_from)


def test_uncalibrated_run_shows_a_notice_instead_of_the_slider():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80")
    plain = findings_html(note, [(0, _p("HR"))])
    assert UNCALIBRATED in plain and 'id="threshold"' not in plain and "threshold-num" not in plain
    calibrated = findings_html(note, [(0, _p("HR", conf=0.7))])
    assert UNCALIBRATED not in calibrated and 'type="range" id="threshold"' in calibrated
    assert calibrated.index("</div><script>") > calibrated.index('<div class="ehrlib-viewer"')
    assert re.search(r"<(?:script|link|img)[^>]+src=|https?://", calibrated) is None  # no external asset
    assert "0 of 0 inconsistent findings remain" in threshold_controls([_p("HR", conf=0.7)], 0.5)


def test_withheld_finding_reads_unverified_low_confidence_with_the_verifiers_label():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80 Na 140")
    page = findings_html(note, [(0, _p("HR", "unverified", 0.2, abstained_from="inconsistent")),
                                (1, _p("Na", "inconsistent", 0.9, "contradiction"))])
    assert 'data-raw-verdict="contradiction" data-confidence="0.2000"' in page
    assert "unverified (low confidence)" in page and "the verifier said:</b> contradiction" in page
    assert "1 of 2 inconsistent findings remain at confidence ≥ 0.21 (contradictions 1 of 2)" in page
    ranked_rows = re.findall(r'<tr class="rk" data-finding="(p\d)"', page)
    assert ranked_rows == ["p1", "p0"]


# --- deciding evidence and time ------------------------------------------------------------

def test_deciding_rows_come_first_and_are_highlighted():
    ev = (RowRef("chartevents", 1), RowRef("chartevents", 2), RowRef("chartevents", 3))
    p = _p("HR", "inconsistent", 0.9, "contradiction", evidence_row_ids=ev,
           deciding_row_ids=(RowRef("chartevents", 3),))
    assert [r.row_id for r in evidence_order(p)] == [3, 1, 2]
    html = finding_panel(0, p, None, False, None, True)
    items = re.findall(r'<li class="(ev[^"]*)"[^>]*>(.*?)</li>', html)
    assert [cls for cls, _ in items] == ["ev deciding", "ev", "ev"]
    assert ">deciding</span>chartevents#3" in items[0][1]
    # a deciding row the evidence list lacks is still shown, first
    q = replace(p, deciding_row_ids=(RowRef("labevents", 9),))
    assert [r.row_id for r in evidence_order(q)] == [9, 1, 2, 3]


def test_time_basis_in_words():
    note_day = TimeSpan("2150-01-05 00:00:00", "2150-01-05 19:00:00")
    assert describe_time("note_day", note_day) == "note day (2150-01-05, up to 19:00)"
    assert describe_time("explicit_time", TimeSpan("2150-01-05 08:00:00", "2150-01-05 09:00:00")) \
        == "stated date and time (2150-01-05 08:00 to 09:00)"
    assert describe_time("hospitalization", TimeSpan("2150-01-01 00:00:00", "2150-01-09 23:59:59")) \
        == "whole hospitalization (2150-01-01 00:00 to 2150-01-09 23:59)"
    assert describe_time(None, None) == "not recorded"
    assert describe_time("explicit_date", TimeSpan("2150-01-05 00:00:00", "2150-01-05 23:59:59")) \
        == "stated date (2150-01-05)"
    html = finding_panel(0, _p("HR", time_basis="note_day", time_window=note_day), None, False, None, True)
    assert '<b>time:</b> <span class="time">note day (2150-01-05, up to 19:00)</span>' in html


# --- coverage marks ------------------------------------------------------------------------

_LINES = ["PMH: CHF, DM", "HR 80", "", "home meds: lisinopril", "lasix given x2 (also glargine)", "Plan:",
          "follow up with PCP", "Comfortable."]
_RECORD = NoteRecord(
    "n", structure_recorded=True,
    segments=(SegmentInfo(0, 0, "PMH", "past_history"), SegmentInfo(1, 4, "Events", "events"),
              SegmentInfo(5, 6, "Plan", "plan"), SegmentInfo(7, 7, "Other", "other")),
    statements=(Statement("e1", 1, "HR"), Statement("e2", 3, "lisinopril", "past", "home medication cue"),
                Statement("e3", 4, "lasix")),
    dropped=(Dropped(4, "glargine", "nonstatement.drug_second_name"), Dropped(7, "x", "nonstatement.title")))


def test_coverage_classifies_every_line_with_its_reason():
    marks = classify_lines(_LINES, {1, 4}, _RECORD)
    assert [m.kind for m in marks] == ["out_of_scope", "checked", "blank", "out_of_scope", "checked",
                                       "out_of_scope", "out_of_scope", "out_of_scope"]
    assert marks[0].reason == "section rule: 'PMH' is a past_history section (history)"
    assert marks[3].reason == "scope: 'lisinopril' is past (home medication cue)"
    assert marks[6].reason == "section rule: 'Plan' is a plan section (plans and instructions)"
    assert marks[7].reason == "not a checkable statement: 'x' by nonstatement.title"
    plain = replace(_RECORD, dropped=())
    assert classify_lines(_LINES, {1, 4}, plain)[7].kind == "nothing"
    assert classify_lines(_LINES, {4}, plain)[1].reason.startswith("a statement was extracted here")
    assert coverage_counts(marks) == {"checked": 2, "out_of_scope": 5, "nothing": 0, "not_checked": 0,
                                      "not_recorded": 0, "blank": 1}


def test_coverage_claims_nothing_the_run_did_not_record_or_check():
    assert {m.kind for m in classify_lines(_LINES, {1}, None)} == {"checked", "not_recorded", "blank"}
    failed = NoteRecord("n", "failed", "DataError: admission 9 not found")
    marks = classify_lines(_LINES, set(), failed)
    assert {m.kind for m in marks} == {"not_checked", "blank"}
    assert marks[0].reason == "the run failed on this note: DataError: admission 9 not found"


def test_note_page_marks_lines_and_counts_them_in_its_header():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "\n".join(_LINES))
    page = findings_html(note, [(0, _p("HR", line=1)), (1, _p("lasix", line=4))], record=_RECORD)
    assert re.findall(r'data-coverage="(\w+)"', page) == ["out_of_scope", "checked", "blank", "out_of_scope",
                                                          "checked", "out_of_scope", "out_of_scope", "out_of_scope"]
    assert 'data-count="2" style="color:#2e7d32;margin-right:10px">✓ 2 checked' in page
    assert "⊘ 5 out of scope" in page and "0 nothing checkable found" in page
    # a run of lines with one reason spells it out once (line 5 and 6 share the plan section)
    assert page.count("is a plan section (plans and instructions)</p>") == 1


# --- failed notes ----------------------------------------------------------------------------

def _write_records(run: Path, ledger: list[dict], failures: list[dict], stages: list[dict]) -> None:
    run.mkdir(parents=True, exist_ok=True)
    for name, rows in (("progress.jsonl", ledger), ("failures.jsonl", failures), ("stages.jsonl", stages)):
        (run / name).write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"note_id": "torn', encoding="utf-8")


def test_note_records_read_failures_tolerantly(tmp_path):
    _write_records(tmp_path, [
        {"note_id": "a", "status": "failed", "n_failures": 1},
        {"note_id": "b", "status": "error"}, {"note_id": "b", "status": "ok"},  # retried on a rerun
        {"note_id": "c", "status": "failed", "failure": {"message": "note text empty"}},
        {"note_id": "d", "status": "ok"}, {"note_id": "e", "status": "ok"}],
        [{"note_id": "a", "stage": "note", "error": "DataError: admission 1 missing"},
         {"note_id": "b", "stage": "note", "error": "RuntimeError: boom"},
         {"note_id": "d", "stage": "patient_extraction", "entity_id": None, "error": "malformed reply"}],
        [{"note_id": "d", "stage": "patient_extraction", "failures": ["malformed reply"]},
         {"note_id": "e", "stage": "note", "failures": [], "output": {"segments": [
             {"start_line": 0, "end_line": 2, "title": "HPI", "section": "hpi"}]}}])
    recs = read_note_records(tmp_path)
    assert recs["a"].failed and recs["a"].failure == "DataError: admission 1 missing"
    assert not recs["b"].failed and recs["b"].status == "ok"
    assert recs["c"].failed and recs["c"].failure == "note text empty"
    assert not recs["d"].failed and recs["d"].stage_failures == ("patient_extraction: malformed reply",)
    assert recs["e"].structure_recorded and recs["e"].segments == (SegmentInfo(0, 2, "HPI", "hpi"),)
    assert read_note_records(tmp_path / "missing") == {}


def test_failed_note_page_says_so_and_never_reads_clean():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80\nBP ok")
    page = findings_html(note, [], record=NoteRecord("n", "failed", "DataError: admission 2 not found"))
    assert 'data-status="failed"' in page and "not checked (the run failed on it)" in page
    assert "<b>failed:</b> the run could not check this note (DataError: admission 2 not found)" in page
    assert "0 findings" not in page and "✓ 0 checked" in page and "✗ 2 not checked (note failed)" in page
    partial = findings_html(note, [], record=NoteRecord("n", stage_failures=("scope: no decision",),
                                                         structure_recorded=True))
    assert 'data-status="incomplete"' in partial and "<li>scope: no decision</li>" in partial


# --- page names ------------------------------------------------------------------------------

def test_page_names_are_safe_bounded_and_unique():
    ids = ["index", "a/b", "a_b", "a b", "x" * 300, "x" * 301, "..", "../../etc/passwd", "Ölwechsel-Ä", "日本",
           "", "A", "a", "n1.html", "CON", "-rf"]
    names = [page_name(i) for i in ids]
    assert len(set(names)) == len(ids) and INDEX_PAGE not in names
    for n in names:
        assert re.fullmatch(rf"[A-Za-z0-9_-]{{1,{MAX_SLUG}}}-[0-9a-f]{{10}}\.html", n), n
        assert len(n.encode()) <= 80 and ".." not in n and "/" not in n
    assert page_name("a/b") == page_name("a/b") and page_name("index").startswith("index-")


def _mini_run(tmp_path: Path, ids: list[str]) -> Path:
    notes = [Note(i, 1, 10 + k, "nursing", "2150-01-01", f"HR {80 + k}\nBP ok") for k, i in enumerate(ids)]
    corpus, run = tmp_path / "corpus", tmp_path / "runs" / "r"
    write_jsonl(notes, corpus / "notes.jsonl")
    preds = [Prediction("r", n.note_id, 0, "HR", "inconsistent" if k % 2 else "consistent",
                        inconsistency_type="contradiction" if k % 2 else None, confidence=k / 10)
             for k, n in enumerate(notes[:-1])]
    write_jsonl(preds, run / "predictions.jsonl")
    write_json({"run_id": "r", "method": "inspector", "params": {"corpus": str(corpus)}}, run / "manifest.json")
    _write_records(run, [{"note_id": i, "status": "ok"} for i in ids[:-1]] + [{"note_id": ids[-1], "status": "failed"}],
                   [{"note_id": ids[-1], "stage": "note", "error": "DataError: <no admission>"}], [])
    return run


def test_viewer_writes_one_page_per_note_id_and_the_index_links_them(tmp_path):
    from ehrlib.judge.evaluate import load_run
    from ehrlib.report.build import findings_ranked, notes_summary
    from ehrlib.viz.viewer_site import write_findings_viewer

    ids = ["index", "a/b", "a_b", "y" * 300, "..", "naïve <b>", "findings", "failed one"]
    run = _mini_run(tmp_path, ids)
    paths = write_findings_viewer(run)
    out = run / "viewer"
    assert len(paths) == len(set(paths)) == len(ids) + 2 and paths[-1] == out / INDEX_PAGE
    assert paths[-2] == out / FINDINGS_PAGE and FINDINGS_PAGE not in {page_name(i) for i in ids}
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)  # counts match pages written
    index = (out / INDEX_PAGE).read_text()
    links = re.findall(r'<a href="([^"]+)" style="color:#1565c0">', index)
    assert sorted(links) == sorted(page_name(i) for i in ids) and all((out / h).is_file() for h in links)
    page = (out / page_name("naïve <b>")).read_text()
    assert 'data-note="naïve &lt;b&gt;"' in page and "<b>naïve <b>" not in page
    # the failed note: first in the index, its reason shown, no counts pretending it is clean
    first = re.search(r'<tr class="[^"]+" data-note="([^"]+)" data-status="(\w+)"', index)
    assert first is not None and first.groups() == ("failed one", "failed")
    assert "DataError: &lt;no admission&gt;" in index
    failed_page = (out / page_name("failed one")).read_text()
    assert "the run could not check this note (DataError: &lt;no admission&gt;)" in failed_page
    table = notes_summary(load_run(run))
    row = table.set_index("note_id").loc["failed one"]
    assert row["status"] == "failed" and row["failure"] == "DataError: <no admission>"
    ranked_rows = findings_ranked(load_run(run))
    assert list(ranked_rows["confidence"]) == [0.5, 0.3, 0.1, 0.6, 0.4, 0.2, 0.0]  # contradictions first
    assert ranked_rows["page"].iloc[0] == f"viewer/{page_name('naïve <b>')}#p5"


def test_note_ids_mapping_to_one_page_are_refused(tmp_path, monkeypatch):
    from ehrlib.errors import DataError
    from ehrlib.viz import viewer_site

    run = _mini_run(tmp_path, ["a", "b"])
    monkeypatch.setattr(viewer_site, "page_name", lambda note_id: "same-0000000000.html")
    with pytest.raises(DataError, match="map to one page"):
        viewer_site.write_findings_viewer(run)
    assert not (run / "viewer").exists()


def test_notebook_view_drops_the_threshold_script_and_style(tmp_path):
    """A calibrated page carries the slider's script; a notebook cell shows the static view."""
    from ehrlib.viz.viewer import notebook_view

    page = tmp_path / "n.html"
    page.write_text('<html><body><div class="ehrlib-viewer"><style>td{}</style><p>WBC 20</p>'
                    '<script type="text/javascript">let t = 0.5;</script></div></body></html>', encoding="utf-8")
    html = notebook_view(page)._repr_html_()
    assert "<script" not in html and "<style" not in html and "<p>WBC 20</p>" in html
