"""The findings viewer in a real browser (headless Chromium through Playwright).

Real notes without gold, end to end: hand-written notes for MIMIC-III demo admissions are
written out as NOTEEVENTS rows, imported with ``ehrlib notes import`` (one per type),
run offline against the demo database, reported, and the viewer pages are opened in
Chromium. The checks read the rendered DOM: counts against the predictions, the
computed colours of a contradiction and a consistent finding, the links, the
"inconsistent only" switch, evidence rows with their charted content, no network use,
and the page once more as an untrusted notebook shows it (no ``<style>``, JupyterLab's
right-aligned table cells). Then the same run with calibrated findings (confidences, some
withheld, deciding rows) and one note recorded as failed: the threshold is moved and the
counts and labels follow, the deciding row is first and highlighted, the failed note is
marked, every line carries a coverage mark. Screenshots go to ``runs/viewer-browser-test/``
and, for the calibrated run, a temporary folder.

Skips (with the reason) only when Playwright or a Chromium binary is absent;
``.ci/run`` installs both.
"""
from __future__ import annotations

import csv
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.corpus.io import read_notes, read_predictions
from ehrlib.viz.page_names import page_name
from ehrlib.viz.ranking import INCONSISTENT, raw_verdict, verdict_at
from ehrlib.viz.viewer import COLOURS, method_verdict

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "runs" / "viewer-browser-test"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _chromium() -> str:
    candidates = [os.environ.get("EHRLIB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                  shutil.which("chromium-browser")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.skip("no Chromium binary (apt-get install chromium, or set EHRLIB_CHROMIUM)")


def _rgb(hex_colour: str) -> str:
    h = hex_colour.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(h[i:i + 2], 16) for i in (0, 2, 4)))


@pytest.fixture(scope="module")
def viewer(tmp_path_factory, mimic3_demo_db) -> tuple[Path, list]:
    """(viewer folder, predictions) of an offline run over imported, unlabelled notes."""
    tmp = tmp_path_factory.mktemp("viewer_browser")
    notes = read_notes(REPO / "tests" / "fixtures" / "realnotes" / "notes.jsonl")
    category = {"discharge_summary": "Discharge summary", "physician": "Physician ", "nursing": "Nursing/other"}
    src = tmp / "NOTEEVENTS.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY",
                    "DESCRIPTION", "CGID", "ISERROR", "TEXT"))
        for i, n in enumerate(notes, start=1):
            w.writerow((i, n.subject_id, n.hadm_id, n.chartdate, n.charttime or "", "", category[n.note_type],
                        "Report", "", "", n.text))
    corpus, runs = tmp / "corpus", tmp / "runs"
    assert main(["notes", "import", str(src), str(corpus), "--per-type", "1", "--seed", "0",
                 "--db", str(mimic3_demo_db), "--no-progress"]) == 0
    assert not (corpus / "gold.jsonl").exists()
    assert main(["run", "--corpus", str(corpus), "--db", str(mimic3_demo_db), "--backend", "offline",
                 "--run-id", "unlabelled", "--runs-dir", str(runs), "--no-progress",
                 "--calibrator", "none"]) == 0   # uncalibrated on purpose; `calibrated` below adds confidences
    assert main(["report", "--run", str(runs / "unlabelled"), "--figures", "", "--no-progress"]) == 0
    return runs / "unlabelled" / "viewer", read_predictions(runs / "unlabelled" / "predictions.jsonl")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (pip install -e '.[dev]')")
    executable = _chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    requests: list[str] = []
    pg.on("request", lambda r: requests.append(r.url))
    pg.requests = requests
    yield pg
    ctx.close()


def _visible(page, selector: str) -> int:
    return page.eval_on_selector_all(selector, "els => els.filter(e => e.offsetParent !== null).length")


def test_index_lists_notes_most_inconsistent_first(viewer, page):
    folder, preds = viewer
    page.goto((folder / "index.html").as_uri())
    rows = page.eval_on_selector_all("table.index tr[data-note]", """rows => rows.map(r => ({
        note: r.dataset.note, href: r.querySelector('a').getAttribute('href'),
        counts: Array.from(r.querySelectorAll('td')).slice(3, 7).map(td => Number(td.textContent))}))""")
    want = {}
    for p in preds:
        want.setdefault(p.note_id, Counter())[method_verdict(p)] += 1
    assert {r["note"] for r in rows} == set(want) and len(rows) == 3  # one note per type
    for r in rows:
        c = want[r["note"]]
        assert r["counts"] == [c["contradiction"], c["missing"], c["unverified"], c["consistent"]]
    inconsistent = [r["counts"][0] + r["counts"][1] for r in rows]
    assert inconsistent == sorted(inconsistent, reverse=True)
    assert all((folder / r["href"]).is_file() for r in rows)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "index.png"), full_page=True)
    page.click(f"a[href='{rows[0]['href']}']")
    assert page.url.endswith(rows[0]["href"])
    assert page.eval_on_selector(".ehrlib-viewer", "d => d.dataset.note") == rows[0]["note"]
    assert all(u.startswith("file://") for u in page.requests), page.requests  # nothing from the network


def test_note_page_counts_colours_links_and_filter(viewer, page):
    folder, preds = viewer
    page.goto((folder / "index.html").as_uri())
    hrefs = page.eval_on_selector_all("table.index tr[data-note] a", "as => as.map(a => a.getAttribute('href'))")
    first = hrefs[0]
    page.goto((folder / first).as_uri())
    note_id = page.eval_on_selector(".ehrlib-viewer", "d => d.dataset.note")
    mine = [p for p in preds if p.note_id == note_id]
    counts = Counter(method_verdict(p) for p in mine)
    # one panel per finding, legend counts as in predictions.jsonl
    assert page.eval_on_selector_all("details.fd", "els => els.length") == len(mine)
    legend = page.eval_on_selector_all(".legend .lg", "els => els.map(e => [e.className, Number(e.dataset.count)])")
    assert {cls.split("lg-")[1]: n for cls, n in legend} == {v: counts[v] for v in COLOURS}
    # every finding located in its line is highlighted: marks reference all but the unlocated
    marked = page.eval_on_selector_all("mark[data-findings]", "ms => ms.flatMap(m => m.dataset.findings.split(' '))")
    unlocated = page.eval_on_selector_all("details.fd", "ds => ds.filter(d => d.querySelector('summary')"
                                                        ".textContent.includes('not found on this line')).length")
    assert len(set(marked)) + unlocated == len(mine) and unlocated < len(mine) / 4
    # colours: a contradiction is red, a consistent finding green, computed by the browser
    bg = "m => getComputedStyle(m).backgroundColor"
    assert counts["contradiction"] and counts["consistent"]
    red = page.eval_on_selector("mark.v-contradiction", bg)
    green = page.eval_on_selector("mark.v-consistent", bg)
    assert red == _rgb(COLOURS["contradiction"][0]) and green == _rgb(COLOURS["consistent"][0]) and red != green
    # evidence rows carry charted content (time · item · value), not bare ids
    evidence = page.eval_on_selector_all("li.ev", "els => els.map(e => e.textContent)")
    assert evidence and any(" · " in e and any(ch.isdigit() for ch in e.split(" · ")[-1]) for e in evidence)
    assert page.eval_on_selector_all("table.trace", "ts => ts.length") > 0  # tool trace per finding
    # a mark's link opens its finding
    target = page.eval_on_selector("mark.v-contradiction a", "a => a.getAttribute('href')")
    page.click("mark.v-contradiction a")
    assert page.url.endswith(target)
    page.screenshot(path=str(SHOTS / "note.png"), full_page=False)
    # navigation: the first page has no previous, its next is the index's second row
    assert page.eval_on_selector(".nav-prev", "e => e.tagName") == "SPAN"
    assert page.eval_on_selector(".nav-next", "a => a.getAttribute('href')") == hrefs[1]
    assert page.eval_on_selector(".nav-index", "a => a.getAttribute('href')") == "index.html"
    # the filter: only inconsistent findings stay visible, consistent highlights fade
    page.check("#only-inconsistent")
    assert _visible(page, "details.fd-consistent") == 0
    assert _visible(page, "details.fd-contradiction") == counts["contradiction"]
    assert _visible(page, "details.fd-missing") == counts["missing"]
    assert page.eval_on_selector("mark.v-consistent", bg) == "rgba(0, 0, 0, 0)"
    assert page.eval_on_selector("mark.v-contradiction", bg) == red
    page.screenshot(path=str(SHOTS / "note-inconsistent-only.png"), full_page=False)
    page.click(".nav-next")
    assert page.url.endswith(hrefs[1])
    page.click(".nav-prev")
    assert page.url.endswith(first)
    assert all(u.startswith("file://") for u in page.requests), page.requests


def test_notebook_rendering_survives_sanitising(viewer, page):
    """As an untrusted JupyterLab output: our <style> dropped, Lab's td{text-align:right}."""
    from ehrlib.viz.viewer import notebook_view

    folder, _ = viewer
    first = sorted(p for p in folder.glob("*.html") if p.name not in ("index.html", "findings.html"))[0]
    fragment = notebook_view(first)._repr_html_()
    assert "<style" not in fragment and "<script" not in fragment
    page.set_content(f"<html><head><style>td{{text-align:right}} mark{{background-color:yellow}}</style></head>"
                     f"<body class='jp-RenderedHTMLCommon'>{fragment}</body></html>")
    assert page.eval_on_selector("td.txt", "td => getComputedStyle(td).textAlign") == "left"
    colours = page.eval_on_selector_all("mark[data-verdict]", "ms => ms.map(m => [m.dataset.verdict, "
                                                              "getComputedStyle(m).backgroundColor])")
    assert colours and all(c == _rgb(COLOURS[v][0]) for v, c in colours)
    page.screenshot(path=str(SHOTS / "notebook-sanitised.png"), full_page=False)


@pytest.fixture(scope="module")
def calibrated(viewer, tmp_path_factory) -> tuple[Path, list, str, Path]:
    """(viewer folder, predictions, failed note id, screenshot folder) of the run above with
    calibrated findings and its first note (by id) recorded as failed.
    """
    from viewer_kit import calibrated_copy

    folder, preds = viewer
    failed = sorted({p.note_id for p in preds})[0]
    tmp = tmp_path_factory.mktemp("viewer_calibrated")
    run = calibrated_copy(folder.parent, tmp / "calibrated", failed_note=failed)
    shutil.rmtree(run / "viewer")
    assert main(["report", "--run", str(run), "--figures", "", "--no-progress"]) == 0
    shots = tmp / "screenshots"
    shots.mkdir()
    return run / "viewer", read_predictions(run / "predictions.jsonl"), failed, shots


def test_uncalibrated_run_says_so_instead_of_a_slider(viewer, page):
    folder, _ = viewer
    page.goto((folder / "index.html").as_uri())
    assert _visible(page, ".uncalibrated") == 1 and page.query_selector("#threshold") is None
    page.click("table.index tr[data-note] a")
    assert "uncalibrated run" in page.text_content(".uncalibrated") and page.query_selector("#threshold") is None


def _set_threshold(page, value: float) -> str:
    page.fill("#threshold-num", f"{value:.2f}")
    return page.text_content("#remaining")


def test_threshold_moves_counts_and_labels(calibrated, page):
    folder, preds, _, shots = calibrated
    note_id = Counter(p.note_id for p in preds if raw_verdict(p) in INCONSISTENT).most_common(1)[0][0]
    mine = [p for p in preds if p.note_id == note_id]
    page.goto((folder / page_name(note_id)).as_uri())
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    inc = [p for p in mine if raw_verdict(p) in INCONSISTENT]
    for t in (0.0, 0.5, 0.95):
        text = _set_threshold(page, t)
        kept = sum(verdict_at(p, t) == raw_verdict(p) for p in inc)
        assert text.startswith(f"{kept} of {len(inc)} inconsistent findings remain at confidence ≥ {t:.2f}"), text
        assert int(page.eval_on_selector("#remaining", "e => e.dataset.remaining")) == kept
        shown = Counter(verdict_at(p, t) for p in mine)
        legend = page.eval_on_selector_all(".legend .lg", "els => els.map(e => [e.dataset.verdict, +e.dataset.count])")
        assert dict(legend) == {v: shown[v] for v in COLOURS}
        low = page.eval_on_selector_all("details.fd .verdict", "els => els.filter(e => e.textContent === "
                                                               "'unverified (low confidence)').length")
        assert low == sum(verdict_at(p, t) == "unverified" and raw_verdict(p) != "unverified" for p in mine)
    assert kept < len(inc)  # at 0.95 most contradictions are withheld
    red = page.eval_on_selector_all("mark.v-contradiction", "ms => ms.length")
    assert red == 0 or all(c == _rgb(COLOURS["contradiction"][0]) for c in page.eval_on_selector_all(
        "mark.v-contradiction", "ms => ms.map(m => getComputedStyle(m).backgroundColor)"))
    # the slider and the number box stay in step
    page.eval_on_selector("#threshold", "r => { r.value = '0.3'; r.dispatchEvent(new Event('input')); }")
    assert page.input_value("#threshold-num") == "0.30" and "≥ 0.30" in page.text_content("#remaining")
    page.screenshot(path=str(shots / "threshold-0.30.png"), full_page=False)
    assert not errors and all(u.startswith("file://") for u in page.requests), (errors, page.requests)


def test_deciding_row_first_and_highlighted(calibrated, page):
    folder, preds, _, shots = calibrated
    idx, p = next((i, p) for i, p in enumerate(preds) if p.deciding_row_ids and len(p.evidence_row_ids) > 1
                  and raw_verdict(p) == "contradiction")
    page.goto((folder / page_name(p.note_id)).as_uri() + f"#p{idx}")
    page.eval_on_selector(f"#p{idx}", "d => { d.open = true; d.scrollIntoView(); }")
    items = page.eval_on_selector_all(f"#p{idx} li.ev", """els => els.map(e => ({cls: e.className,
        text: e.textContent, bg: getComputedStyle(e).backgroundColor}))""")
    deciding = p.deciding_row_ids[0]
    assert items[0]["cls"] == "ev deciding" and items[0]["text"].startswith(f"deciding{deciding.table}#")
    assert items[0]["bg"] == "rgb(255, 245, 157)" and all(i["cls"] == "ev" for i in items[1:])
    assert len(items) == min(len(p.evidence_row_ids), 20)
    assert "note day" in page.text_content(f"#p{idx} .time")
    page.screenshot(path=str(shots / "deciding.png"), full_page=False)


def test_failed_note_and_coverage_marks(calibrated, page):
    folder, _, failed, shots = calibrated
    page.goto((folder / "index.html").as_uri())
    first = page.eval_on_selector("table.index tr[data-note]", "r => [r.dataset.note, r.dataset.status, "
                                                               "r.querySelector('.status').textContent]")
    assert first == [failed, "failed", "failed: DataError: admission 1 not in the database"]
    before = page.eval_on_selector_all(".n-remaining", "cs => cs.map(c => c.textContent)")
    _set_threshold(page, 0.99)
    after = page.eval_on_selector_all(".n-remaining", "cs => cs.map(c => c.textContent)")
    assert before[0] == after[0] == "—" and before != after
    page.screenshot(path=str(shots / "index.png"), full_page=True)
    page.click(f"a[href^='{page_name(failed)}']")
    assert page.url.endswith(f"{page_name(failed)}?t=0.99")  # the threshold goes along
    assert page.eval_on_selector(".ehrlib-viewer", "d => d.dataset.status") == "failed"
    assert _visible(page, ".note-failed") == 1 and page.query_selector("details.fd") is None
    kinds = set(page.eval_on_selector_all("td.cov", "cs => cs.map(c => c.dataset.coverage)"))
    assert kinds <= {"not_checked", "blank"} and "not_checked" in kinds
    page.click(".nav-next")
    assert page.input_value("#threshold-num") == "0.99" and "≥ 0.99" in page.text_content("#remaining")
    marks = page.eval_on_selector_all("td.cov", "cs => cs.map(c => c.dataset.coverage)")
    assert len(marks) == page.eval_on_selector_all("table.note > tbody > tr", "rs => rs.length")
    header = dict(page.eval_on_selector_all(".coverage .cn", "els => els.map(e => [e.className.split('cn-')[1], "
                                                             "+e.dataset.count])"))
    assert {k: n for k, n in Counter(marks).items()} == {k: n for k, n in header.items() if n}
    assert header["checked"] > 0 and header["out_of_scope"] + header["nothing"] > 0
    page.screenshot(path=str(shots / "coverage.png"), full_page=False)


# --- the findings page across notes --------------------------------------------------------

_ROWS = """rows => rows.filter(r => r.style.display !== 'none').map(r => ({
    note: r.dataset.note, verdict: r.dataset.verdict, raw: r.dataset.rawVerdict, rank: +r.dataset.rank,
    conf: r.dataset.confidence, statement: r.querySelector('.f-statement').dataset.key,
    words: r.querySelector('.verdict').textContent, href: r.querySelector('.f-note a').getAttribute('href'),
    text: r.textContent.toLowerCase()}))"""


def _rows(page) -> list[dict]:
    return page.eval_on_selector_all("table.findings tbody tr.fr", _ROWS)


def test_findings_page_lists_sorts_filters_and_links_to_the_finding(viewer, page):
    folder, preds = viewer
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / "index.html").as_uri())
    page.click("a.nav-findings")
    assert page.url.endswith("/findings.html")
    rows = _rows(page)
    order = ["contradiction", "missing", "unverified", "consistent"]
    assert len(rows) == len(preds) and Counter(r["verdict"] for r in rows) == Counter(method_verdict(p) for p in preds)
    assert [order.index(r["raw"]) for r in rows] == sorted(order.index(r["raw"]) for r in rows)  # contradictions first
    assert {r["href"] for r in rows} == {f"{page_name(p.note_id)}#p{i}" for i, p in enumerate(preds)}
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "findings.png"), full_page=False)
    # sorting: a heading sorts ascending, a second click descending; ties keep the review order
    page.click("th[data-sort='statement']")
    names = [r["statement"] for r in _rows(page)]
    assert names == sorted(names) and page.get_attribute("th[data-sort='statement']", "aria-sort") == "ascending"
    page.click("th[data-sort='statement']")
    assert [r["statement"] for r in _rows(page)] == sorted(names, reverse=True)
    page.click("th[data-sort='note']")
    assert [r["note"].lower() for r in _rows(page)] == sorted(r["note"].lower() for r in rows)
    page.click("th[data-sort='rank']")  # back to the review order
    assert [r["rank"] for r in _rows(page)] == list(range(1, len(rows) + 1))
    # filtering: by verdict, by words, both; the counter says how many are shown
    page.select_option("#verdict-filter", "contradiction")
    shown = _rows(page)
    n_con = sum(method_verdict(p) == "contradiction" for p in preds)
    assert len(shown) == n_con and {r["verdict"] for r in shown} == {"contradiction"}
    assert page.text_content("#shown-count") == f"showing {n_con} of {len(preds)} findings"
    page.select_option("#verdict-filter", "inconsistent")
    assert len(_rows(page)) == sum(method_verdict(p) in INCONSISTENT for p in preds)
    page.select_option("#verdict-filter", "all")
    word = rows[0]["statement"]
    page.fill("#finding-search", word.upper())
    found = _rows(page)
    assert found and all(word in r["text"] for r in found)
    assert len(found) == sum(1 for r in rows if word in r["text"])
    page.fill("#finding-search", "no such words anywhere")
    assert _rows(page) == [] and page.text_content("#shown-count").startswith("showing 0 of")
    page.fill("#finding-search", "")
    # a row's link opens its finding on the note page
    first = _rows(page)[0]
    page.click("table.findings tbody tr.fr >> nth=0 >> .f-note a")
    assert page.url.endswith(first["href"])
    anchor = first["href"].split("#")[1]
    assert page.eval_on_selector(f"#{anchor}", "d => d.open") and _visible(page, f"#{anchor} p") > 0
    assert page.eval_on_selector(".ehrlib-viewer", "d => d.dataset.note") == first["note"]
    assert page.eval_on_selector("a.nav-findings", "a => a.getAttribute('href')") == "findings.html"
    assert not errors and all(u.startswith("file://") for u in page.requests), (errors, page.requests)


def test_note_page_expands_and_collapses_every_finding(viewer, page):
    folder, preds = viewer
    note_id = Counter(p.note_id for p in preds).most_common(1)[0][0]
    page.goto((folder / page_name(note_id)).as_uri())
    n = sum(p.note_id == note_id for p in preds)
    opened = "ds => ds.filter(d => d.open).length"
    assert page.eval_on_selector_all("table.note details.fd", opened) == 0  # collapsed at first
    assert _visible(page, "button.expand-all") == 1 and _visible(page, "button.collapse-all") == 1
    page.click("button.expand-all")
    assert page.eval_on_selector_all("table.note details.fd", opened) == n
    assert _visible(page, "table.note details.fd .evidence, table.note details.fd p") > n
    page.screenshot(path=str(SHOTS / "note-expanded.png"), full_page=False)
    page.click("button.collapse-all")
    assert page.eval_on_selector_all("table.note details", opened) == 0
    # items are never "none" for a finding with evidence rows
    page.click("button.expand-all")
    items = page.eval_on_selector_all("details.fd", """ds => ds.map(d => [d.querySelectorAll('li.ev').length,
        Array.from(d.querySelectorAll('p')).map(p => p.textContent).find(t => t.startsWith('items:'))])""")
    assert items and all(not (n_ev and text.startswith("items: none")) for n_ev, text in items)


def test_findings_page_threshold_moves_the_contradiction_count(calibrated, page):
    folder, preds, failed, shots = calibrated
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / "findings.html").as_uri())
    assert not any(r["note"] == failed for r in _rows(page))  # the failed note has no findings to list
    contradictions = [p for p in preds if raw_verdict(p) == "contradiction"]
    page.select_option("#verdict-filter", "contradiction")
    counts = []
    for t in (0.0, 0.5, 0.95):
        text = _set_threshold(page, t)
        kept = sum(verdict_at(p, t) == "contradiction" for p in contradictions)
        counts.append(kept)
        assert f"(contradictions {kept} of {len(contradictions)})" in text, text
        assert int(page.eval_on_selector("#remaining", "e => e.dataset.contradictions")) == kept
        shown = _rows(page)  # the filter follows the verdicts the threshold leaves
        assert len(shown) == kept and all(r["words"] == "contradiction" for r in shown)
        low = page.eval_on_selector_all("tr.fr .verdict", "els => els.filter(e => e.textContent === "
                                                          "'unverified (low confidence)').length")
        assert low == sum(verdict_at(p, t) == "unverified" and raw_verdict(p) != "unverified" for p in preds)
        legend = page.eval_on_selector_all(".legend .lg", "els => els.map(e => [e.dataset.verdict, +e.dataset.count])")
        assert dict(legend) == {v: sum(verdict_at(p, t) == v for p in preds) for v in COLOURS}
    assert counts[0] == len(contradictions) > counts[-1]  # the threshold moved the count
    page.screenshot(path=str(shots / "findings-0.95.png"), full_page=False)
    # sorting by confidence: most confident first
    page.select_option("#verdict-filter", "all")
    page.click("th[data-sort='confidence']")
    confs = [float(r["conf"]) for r in _rows(page) if r["conf"]]
    assert confs == sorted(confs, reverse=True)
    # the threshold goes along to the note page, which opens the finding
    href = page.eval_on_selector("table.findings tbody tr.fr .f-note a", "a => a.getAttribute('href')")
    assert "?t=0.95#p" in href
    page.click("table.findings tbody tr.fr >> nth=0 >> .f-note a")
    assert page.input_value("#threshold-num") == "0.95"
    assert page.eval_on_selector(f"#{href.split('#')[1]}", "d => d.open")
    assert not errors and all(u.startswith("file://") for u in page.requests), (errors, page.requests)
