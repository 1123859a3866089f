"""The findings page across notes, expand-all, values at their recorded precision, and items
shown whenever a finding has evidence rows.
"""
from __future__ import annotations

import re
from decimal import Decimal

import pytest

from ehrlib.corpus.records import ItemRef, Note, Prediction, RowRef
from ehrlib.viz.evidence import EvidenceRow, describe
from ehrlib.viz.finding_panel import finding_panel, items_text
from ehrlib.viz.findings_page import findings_order, findings_page
from ehrlib.viz.page_names import page_name
from ehrlib.viz.threshold_controls import threshold_controls
from ehrlib.viz.values import format_value
from ehrlib.viz.viewer import findings_html


def _p(note: str, entity: str, verdict: str = "consistent", conf: float | None = None, line: int = 0,
       **kw) -> Prediction:
    label, kind = ("inconsistent", verdict) if verdict in ("contradiction", "missing") else (verdict, None)
    return Prediction("r", note, line, entity, label, inconsistency_type=kind, confidence=conf, **kw)


# --- values --------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text, shown", [
    # single-precision noise, in the text column, the numeric column or both
    (None, "96.599998474121094", "96.6"), (96.599998474121094, None, "96.6"), (96.6, "96.599998474121094", "96.6"),
    (99.5999984741211, None, "99.6"), (None, "3.7699999809265137", "3.77"), (None, "0.30000001192092896", "0.3"),
    (None, "240.0000183105", "240"), (None, "59.9999954224", "60"), (None, "-2.5000000001", "-2.5"),
    (None, "0.0186154749", "0.018615475"), (None, "12345678.9", "12345679"),
    (0.1 + 0.2, None, "0.3"),
    # integers and whole floats
    (7, None, "7"), (140.0, None, "140"), (4294967296.0, None, "4294967296"), (0, None, "0"), (-0.0, None, "0"),
    # short values as recorded: a text keeps its own spelling
    (7.1, None, "7.1"), (None, "7.1", "7.1"), (None, "140.0", "140.0"), (None, "19.966833", "19.966833"),
    (None, "0.5002639", "0.5002639"), (1e-05, None, "0.00001"), (Decimal("96.600"), None, "96.6"),
    # text values
    (None, "Negative", "Negative"), (None, "<0.5", "<0.5"), (None, "11-20", "11-20"), (3.0, " pos ", "pos"),
    # nothing
    (None, None, None), (None, "", None), (None, "  ", None), (float("nan"), None, "nan"),
])
def test_values_read_at_their_recorded_precision(value, text, shown):
    assert format_value(value, text) == shown


def test_evidence_lines_use_the_value_formatter():
    row = EvidenceRow("inputevents_cv", 1, "2150-01-05 04:00:00", None, "30112", "Amiodarone", "80", "mg",
                      {"route": "IV Drip", "rate": 0.5000000074505806, "rate_unit": "mgmin"})
    assert describe(row) == "2150-01-05 04:00 · Amiodarone · 80 mg · route IV Drip · rate 0.5 mgmin"


# --- items -----------------------------------------------------------------------------------

def test_items_come_from_the_evidence_rows_when_the_finding_lists_none():
    ev = (RowRef("labevents", 1), RowRef("labevents", 2), RowRef("chartevents", 3))
    p = _p("n", "Hgb", "contradiction", evidence_row_ids=ev)
    rows = [EvidenceRow("labevents", 1, item="51222", label="Hemoglobin"),
            EvidenceRow("labevents", 2, item="51222", label="Hemoglobin"),
            EvidenceRow("chartevents", 3, found=False)]
    assert items_text(p, rows) == "labevents:51222 Hemoglobin (from the evidence rows)"
    assert items_text(p, None) == "labevents (2 rows), chartevents (1 row) (from the evidence rows)"
    assert items_text(p, [EvidenceRow("labevents", 1, found=False)]) == items_text(p, None)
    assert items_text(_p("n", "Hgb"), None) == "none"  # no evidence: nothing to derive
    listed = _p("n", "Hgb", items=(ItemRef("labevents", "Hemoglobin", 51222),), evidence_row_ids=ev)
    assert items_text(listed, rows) == "labevents:51222 Hemoglobin"
    html = finding_panel(0, p, None, False, rows, True)
    assert "<b>items:</b> labevents:51222 Hemoglobin (from the evidence rows)" in html and "items:</b> none" not in html


# --- expand all --------------------------------------------------------------------------------

def test_note_page_has_expand_and_collapse_buttons_shown_by_its_script():
    note = Note("n", 1, 2, "nursing", "2150-01-01", "HR 80\nNa 140")
    page = findings_html(note, [(0, _p("n", "HR")), (1, _p("n", "Na", "contradiction"))])
    controls = re.search(r'<p class="expand-controls" hidden style="display:none[^"]*">(.*?)</p>', page)
    assert controls is not None and ">expand all</button>" in controls.group(1) and ">collapse all</button>" in page
    assert page.index("expand-controls") < page.index('<table class="note"')
    script = page[page.index("</div><script>"):]
    assert 'querySelectorAll("table.note details")' in script and "hashchange" in script
    assert sorted(re.findall(r'<details id="(p\d)" class="fd[^"]*"', page)) == ["p0", "p1"]  # start collapsed
    assert "<details open" not in page


# --- the findings page -----------------------------------------------------------------------

_RUN = [
    (0, _p("a", "HR", "consistent", 0.99)), (1, _p("a", "K", "contradiction", 0.40)),
    (2, _p("b", "Na", "missing", 0.95)), (3, _p("b", "Hgb", "contradiction", 0.90)),
    (4, _p("a", "WBC", "unverified", 0.20, abstained_from="inconsistent", reason="low confidence")),
    (5, _p("b", "Cr", "contradiction")), (6, _p("a", "Lasix", "contradiction", 0.90)),
    (7, _p("b", "BP")),
]


def test_findings_order_contradictions_first_then_by_confidence():
    order = [p.entity for _, p in findings_order(_RUN, {"b": 0, "a": 1})]
    # contradictions (the withheld WBC among them, by its confidence), none last; ties: note order
    assert order == ["Hgb", "Lasix", "K", "WBC", "Cr", "Na", "HR", "BP"]
    assert [p.entity for _, p in findings_order(_RUN, {"a": 0, "b": 1})][:2] == ["Lasix", "Hgb"]
    assert [p.entity for _, p in findings_order(_RUN)][:2] == ["Hgb", "Lasix"]  # no note order: the run's


def test_findings_page_rows_links_and_threshold():
    plain = [p for _, p in _RUN]
    html = findings_page(_RUN, title="Findings", controls=threshold_controls(plain, 0.3), note_order={"b": 0, "a": 1},
                         index_href="index.html", note_lines={"a": ["HR 99, K 5.1", "x"], "b": ["Na 140"]})
    rows = re.findall(r'<tr class="fr" data-rank="(\d+)" data-raw-verdict="(\w+)" data-verdict="(\w+)" '
                      r'data-confidence="([\d.]*)" data-note="(\w)"', html)
    assert [r[0] for r in rows] == [str(k) for k in range(1, 9)]
    assert rows[0][1:] == ("contradiction", "contradiction", "0.9000", "b")
    assert ("contradiction", "unverified", "0.2000", "a") in [r[1:] for r in rows]  # withheld: shown unverified
    links = re.findall(r'<td class="f-note"[^>]*><a href="([^"]+)"', html)
    assert links[0] == f"{page_name('b')}#p3" and len(links) == len(_RUN)
    assert "unverified (low confidence)" in html and 'class="f-context"' in html and "HR 99, K 5.1" in html
    assert '<a class="nav-index" href="index.html"' in html
    assert "5 of 6 inconsistent findings remain at confidence ≥ 0.30 (contradictions 4 of 5); 1 shown as" in html
    # legend at the run's verdicts; sorting headers; filter controls hidden until the script runs
    assert 'data-verdict="contradiction" data-count="4"' in html and 'data-verdict="unverified" data-count="1"' in html
    assert re.findall(r'<th data-sort="(\w+)"', html) == ["rank", "statement", "note", "verdict", "confidence",
                                                         "reason"]
    assert '<p class="finding-filters" hidden style="display:none' in html and 'id="verdict-filter"' in html
    # scripts: the shared threshold script (it paints findings-page rows), then the table's own
    assert html.index('tr.fr[data-raw-verdict]') < html.index('document.querySelector("table.findings")')
    assert re.search(r"<(?:script|link|img)[^>]+src=|https?://", html) is None  # no external resource


def test_findings_page_of_an_uncalibrated_run_has_no_threshold():
    html = findings_page([(0, _p("a", "HR")), (1, _p("a", "K", "contradiction"))], title="F",
                         controls=threshold_controls([], None))
    assert "uncalibrated run" in html and 'id="threshold"' not in html and "threshold-num" not in html
    assert 'data-confidence=""' in html and '<td class="f-confidence"' in html and ">—</td>" in html


def test_findings_page_escapes_statements_reasons_and_note_ids():
    evil = '"><script>alert(1)</script>'
    preds = [(0, _p(f"n{evil}", f"HR {evil}", "contradiction", 0.9, reason=f"reason {evil} & <b>"))]
    html = findings_page(preds, title=f"run {evil}", subtitle=evil, note_lines={f"n{evil}": [f"line {evil}"]})
    assert "<script>alert" not in html and '"><script' not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # title, subtitle, statement, line, note, reason
    assert "reason &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in html
    assert f'href="{page_name("n" + evil)}#p0"' in html and re.fullmatch(r"[\w-]+\.html", page_name("n" + evil))


def test_a_notebook_shows_the_findings_page_as_a_static_list(tmp_path):
    from ehrlib.viz.viewer import notebook_view

    path = tmp_path / "findings.html"
    path.write_text(findings_page(_RUN, title="F", controls=threshold_controls([p for _, p in _RUN], 0.3)),
                    encoding="utf-8")
    html = notebook_view(path)._repr_html_()
    assert html.startswith('<div class="ehrlib-viewer" data-page="findings"') and "<script" not in html
    assert html.count('<tr class="fr"') == len(_RUN)


def test_one_notes_page_renders_without_a_run_folder():
    """What an in-memory caller (a notebook, an API) needs: a note and its findings, no files."""
    from ehrlib.viz.evidence import EvidenceReader
    from ehrlib.viz.viewer import findings_fragment
    from ehrlib.viz.viewer_site import note_evidence

    note = Note("n", 1, 2, "nursing", "2150-01-01", "Hgb 7.1")
    preds = [(0, _p("n", "Hgb", "contradiction", 0.8, evidence_row_ids=(RowRef("labevents", 5),)))]
    with EvidenceReader(None) as reader:
        evidence = note_evidence(reader, note.subject_id, preds)
    div = findings_fragment(note, preds, evidence=evidence)
    assert evidence is None and div.startswith('<div class="ehrlib-viewer" data-note="n"') and "<script" not in div
    assert "labevents#5" in div and "labevents (1 row) (from the evidence rows)" in div
