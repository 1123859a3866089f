"""Findings viewer: one HTML page per note with what the method found, and an index.

Colours follow the *method's* verdict, because on real (unlabelled) notes that is all
there is: red = contradiction (a record disagrees), amber = missing (no record), grey =
unverified (the method could not decide), green = consistent. When the corpus has gold
labels the judge's verdict is a second layer: a badge on each finding (correct / wrong
label / no gold counterpart) and dashed outlines for gold entities nothing matched.

Every finding is highlighted at its own line and span (the k-th finding with the same
text on a line marks the k-th occurrence), links to a panel (:mod:`.finding_panel`) with
the reason, the time it was judged at, the evidence rows as charted (the deciding rows
first; read from the run's database, see :mod:`ehrlib.viz.evidence`) and the tool trace.
A note's findings are also listed in review order (:mod:`.ranking`: inconsistent first,
most confident first); a calibrated run gets a threshold to move (:mod:`.threshold_controls`),
an uncalibrated one says so. Every line carries a coverage mark (:mod:`.coverage`): checked,
out of scope (and why), nothing checkable found; a note the run failed on says so and why.
Pages have previous / next / index links in the index's order, a link to the findings page
across notes (:mod:`.findings_page`) and an "inconsistent only" switch; the pages and the
index are written by :mod:`.viewer_site`. Charted values are written by
:func:`ehrlib.viz.values.format_value`.

Rendering rules, so one file works everywhere: no network and no external asset; every
colour and alignment is an inline ``style`` attribute, using only properties JupyterLab's
HTML sanitizer keeps (background-color, border, color, text-align, white-space,
font-family, padding, ...), because an untrusted notebook (any papermill-executed one)
drops ``<style>`` and ``<script>`` elements and Lab's own table CSS would right-align the
note text. The ``<style>`` block carries only extras (the filter switch, hover cues); the
inline scripts (the threshold, expand / collapse all: :mod:`.expand_controls`) come after
the viewer ``<div>``, and the page is complete without them (rendered at the run's own
threshold, findings collapsed, the buttons hidden).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.viz.coverage import COVERAGE_KINDS, LineMark, classify_lines, coverage_counts
from ehrlib.viz.expand_controls import MARKER as EXPAND_MARKER
from ehrlib.viz.expand_controls import expand_controls, expand_script
from ehrlib.viz.finding_panel import COLOURS, esc, finding_panel, verdict_words
from ehrlib.viz.ranking import (
    INCONSISTENT,
    VERDICTS,
    calibrated,
    initial_threshold,
    method_verdict,
    ranked,
    raw_verdict,
)
from ehrlib.viz.run_records import NoteRecord
from ehrlib.viz.threshold_controls import threshold_controls, threshold_script

__all__ = [
    "COLOURS",
    "VERDICTS",
    "NotebookView",
    "findings_fragment",
    "findings_html",
    "method_verdict",
    "notebook_view",
    "page",
    "prediction_verdicts",
    "verdict_legend",
]

_MISSED_BORDER = "1px dashed #424242"
#: coverage mark -> (symbol, colour) of the narrow column beside the line numbers
_COVERAGE_STYLE = {"checked": ("✓", "#2e7d32"), "out_of_scope": ("⊘", "#6d4c41"), "nothing": ("·", "#9e9e9e"),
                   "not_checked": ("✗", "#c62828"), "not_recorded": ("?", "#9e9e9e"), "blank": ("", "#9e9e9e")}

# Extras only (see the module docs); every selector is scoped to .ehrlib-viewer so the
# block cannot restyle JupyterLab when a trusted notebook keeps it.
_CSS = """
.ehrlib-viewer #only-inconsistent:checked ~ table .fd-consistent,
.ehrlib-viewer #only-inconsistent:checked ~ table .fd-unverified,
.ehrlib-viewer #only-inconsistent:checked ~ table tr.no-inc{display:none}
.ehrlib-viewer #only-inconsistent:checked ~ table mark.v-consistent,
.ehrlib-viewer #only-inconsistent:checked ~ table mark.v-unverified{background-color:transparent !important}
.ehrlib-viewer mark a:hover{text-decoration:underline}
.ehrlib-viewer details > summary{cursor:pointer}
"""

_TD = "text-align:left;vertical-align:top;padding:2px 6px;border-bottom:1px solid #eeeeee"


def prediction_verdicts(judgements: Sequence[Judgement]) -> dict[int, Judgement]:
    """Prediction index -> the judgement that matched it (correct wins over incorrect)."""
    out: dict[int, Judgement] = {}
    for j in judgements:
        idx = j.matched_prediction
        if idx is None:
            continue
        if idx not in out or (j.verdict == "correct" and out[idx].verdict != "correct"):
            out[idx] = j
    return out


def _occurrences(line: str, text: str) -> list[tuple[int, int]]:
    """Every case-insensitive occurrence of ``text`` in ``line`` (of its first word if the
    whole text never occurs: a model may paraphrase the rest).
    """
    for needle in (text.strip(), *(text.split()[:1])):
        if len(needle) >= 2 or needle == text.strip():
            if not needle:
                continue
            spans = [m.span() for m in re.finditer(re.escape(needle), line, flags=re.IGNORECASE)]
            if spans:
                return spans
    return []


def _place(line: str, entities: Sequence[tuple[int, str]]) -> dict[int, tuple[int, int] | None]:
    """Span per finding on one line: findings with the same text take its occurrences in
    order (two "HR" findings mark the first and the second "HR"); a surplus finding shares
    the last occurrence.
    """
    out: dict[int, tuple[int, int] | None] = {}
    used: dict[str, int] = {}
    for key, text in entities:
        spans = _occurrences(line, text)
        norm = text.strip().lower()
        k = used.get(norm, 0)
        used[norm] = k + 1
        out[key] = spans[min(k, len(spans) - 1)] if spans else None
    return out


def verdict_legend(counts: Mapping[str, int], judged: bool = False, judge_counts: Mapping[str, int] | None = None,
                   judge_desc: str = "") -> str:
    """Findings per verdict, one coloured count each (the threshold script keeps them current)."""
    parts = [f'<span class="lg lg-{v}" data-verdict="{v}" data-count="{counts.get(v, 0)}" '
             f'style="background-color:{COLOURS[v][0]};'
             f'color:#212121;padding:1px 6px;margin-right:8px;border-radius:3px">{v} {counts.get(v, 0)}</span>'
             for v in VERDICTS]
    if judged and judge_counts is not None:
        parts.append(f'<span style="color:#616161">judge ({esc(judge_desc)}): correct {judge_counts["correct"]}, '
                     f'wrong label {judge_counts["incorrect"]}, no gold counterpart {judge_counts["unmatched"]}, '
                     f'<span style="border:{_MISSED_BORDER};padding:0 3px">missed gold {judge_counts["missed"]}'
                     f"</span></span>")
    return f'<p class="legend" style="margin:6px 0">{"".join(parts)}</p>'


def _nav(nav: Mapping[str, str | None] | None) -> str:
    if not nav:
        return ""
    link = 'style="margin-right:1.5em;color:#1565c0"'
    parts = [f'<a class="nav-{k}" href="{esc(v)}" {link}>{label}</a>' if v else
             f'<span class="nav-{k}" style="margin-right:1.5em;color:#bdbdbd">{label}</span>'
             for k, label, v in (("prev", "← previous", nav.get("prev")), ("index", "index", nav.get("index")),
                                 ("next", "next →", nav.get("next")))]
    if nav.get("findings"):  # the run's findings page, when there is one
        parts.append(f'<a class="nav-findings" href="{esc(nav["findings"])}" {link}>all findings</a>')
    return f'<p class="nav" style="margin:0 0 6px 0">{"".join(parts)}</p>'


def _filter_switch() -> str:
    return ('<input type="checkbox" id="only-inconsistent" class="filter">'
            '<label for="only-inconsistent" style="margin-left:4px">inconsistent only</label>')


def page(title: str, body: str, script: str = "") -> str:
    """A standalone page around viewer markup: the threshold script if it has a slider, the
    expand script if it has the buttons, then ``script`` (a page's own).
    """
    script = ((threshold_script() if 'id="threshold"' in body else "")
              + (expand_script() if EXPAND_MARKER in body else "") + script)
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{_CSS}</style></head><body>{body}{script}</body></html>\n")


def _coverage_cell(mark: LineMark, first: bool) -> tuple[str, str]:
    """The mark beside a line; an out-of-scope reason is spelled out at the first line of
    a run of lines sharing it (every line keeps it as a tooltip).
    """
    symbol, colour = _COVERAGE_STYLE[mark.kind]
    words = COVERAGE_KINDS[mark.kind] + (f": {mark.reason}" if mark.reason and mark.kind != "checked" else "")
    return (f'<td class="cov cov-{mark.kind}" data-coverage="{mark.kind}" title="{esc(words)}" '
            f'style="{_TD};color:{colour};width:1.2em;text-align:center">{symbol}</td>'), (
        f'<p class="cov-why" style="color:{colour};font-size:85%;margin:0">{esc(words)}</p>'
        if first and mark.kind in ("out_of_scope", "not_checked") else "")


def _coverage_head(counts: Mapping[str, int]) -> str:
    parts = [f'<span class="cn cn-{k}" data-count="{counts[k]}" style="color:{_COVERAGE_STYLE[k][1]};'
             f'margin-right:10px">{_COVERAGE_STYLE[k][0]} {counts[k]} {COVERAGE_KINDS[k]}</span>'
             for k in COVERAGE_KINDS if counts[k] or k in ("checked", "out_of_scope", "nothing")]
    return f'<p class="coverage" style="margin:2px 0;color:#424242">lines: {"".join(parts)}</p>'


def _status_banner(record: NoteRecord | None) -> str:
    if record is None:
        return ""
    if record.failed:
        return (f'<p class="note-failed" style="margin:6px 0;padding:4px 8px;border:2px solid #c62828;'
                f'background-color:#ffebee;color:#b71c1c"><b>failed:</b> the run could not check this note '
                f"({esc(record.failure)}); it has no findings because it was not checked, not because "
                f"it is consistent.</p>")
    if record.stage_failures:
        items = "".join(f"<li>{esc(f)}</li>" for f in record.stage_failures)
        return (f'<div class="note-incomplete" style="margin:6px 0;padding:4px 8px;border:2px solid #ef6c00;'
                f'background-color:#fff3e0;color:#e65100"><b>incomplete:</b> {len(record.stage_failures)} '
                f'stage failure(s); part of this note may be unchecked<ul style="margin:2px 0">{items}</ul></div>')
    return ""


def _ranking(predictions: Sequence[tuple[int, Prediction]]) -> str:
    """The note's findings in review order: inconsistent first, most confident first."""
    cell = "text-align:left;padding:1px 6px;border-bottom:1px solid #eeeeee"
    rows = []
    for k, (idx, p) in enumerate(ranked(predictions), 1):
        v = method_verdict(p)
        conf = "—" if p.confidence is None else f"{p.confidence:.2f}"
        rows.append(f'<tr class="rk" data-finding="p{idx}" data-raw-verdict="{raw_verdict(p)}"><td style="{cell}">'
                    f'{k}</td><td style="{cell}">{conf}</td><td style="{cell}"><span class="rk-verdict" '
                    f'style="color:{COLOURS[v][1]};font-weight:bold">{esc(verdict_words(p))}</span></td>'
                    f'<td style="{cell}"><a href="#p{idx}" style="color:#1565c0">{esc(p.entity)}</a></td>'
                    f'<td style="{cell};color:#9e9e9e">line {p.line}</td></tr>')
    head = "".join(f'<th style="{cell}">{h}</th>' for h in ("#", "confidence", "verdict", "finding", "where"))
    return (f'<details class="ranking" style="margin:4px 0"><summary>findings in review order '
            f'({len(rows)}: inconsistent first, most confident first)</summary><table class="ranked" '
            f'style="border-collapse:collapse;margin:4px 0"><tr>{head}</tr>{"".join(rows)}</table></details>')


def findings_fragment(note: Note, predictions: Sequence[tuple[int, Prediction]], gold: Sequence[GoldEntity] = (),
                      judgements: Sequence[Judgement] = (), *, title: str = "", judged: bool | None = None,
                      evidence: Mapping[int, Sequence[Any]] | None = None,
                      nav: Mapping[str, str | None] | None = None, record: NoteRecord | None = None,
                      threshold: float | None = None, calibrated_run: bool | None = None) -> str:
    """The ``<div class="ehrlib-viewer">`` of one note (all styling inline; see module docs).

    ``predictions`` are (index in the run's predictions.jsonl, prediction) pairs, the index
    the judges' ``matched_prediction`` refers to; ``judgements`` one judge and mode;
    ``judged`` (default: whether there is gold) switches the judge layer on; ``evidence``
    maps a prediction index to its looked-up rows in evidence order (None: show row ids
    only); ``record`` is what the run recorded about the note (outcome, segments, scope:
    the coverage marks; None: coverage not recorded); ``calibrated_run`` (default: whether
    a finding has a confidence) and ``threshold`` (default: the findings' own) set up the
    threshold control.
    """
    judged = bool(gold) if judged is None else judged
    by_pred = prediction_verdicts(judgements)
    by_gold = {(j.note_id, j.entity_id): j for j in judgements}
    missed = [g for g in gold if (j := by_gold.get((g.note_id, g.entity_id))) is None or j.matched_prediction is None] \
        if judged else []
    lines = note.lines
    on_line: dict[int, list[tuple[int, Prediction]]] = {}
    for idx, p in predictions:
        on_line.setdefault(min(max(p.line, 0), len(lines) - 1), []).append((idx, p))
    rank = {v: i for i, v in enumerate(VERDICTS)}
    marks_of = classify_lines(lines, set(on_line), record)
    rows = []
    for n, text in enumerate(lines):
        here = on_line.get(n, [])  # in the run's order: the k-th same-text finding takes the k-th occurrence
        placed = _place(text, [(idx, p.entity) for idx, p in here])
        marks: dict[tuple[int, int], list[tuple[int, Prediction]]] = {}
        for idx, p in here:
            if (where := placed[idx]) is not None:
                marks.setdefault(where, []).append((idx, p))
        spans: list[tuple[int, int, str, Any]] = [(s, e, "pred", group) for (s, e), group in marks.items()]
        gold_here = [g for g in missed if min(g.line, len(lines) - 1) == n]
        for g in gold_here:
            occ = _occurrences(text, g.entity)
            if occ:
                spans.append((*occ[0], "gold", g))
        kept: list[tuple[int, int, str, Any]] = []
        for start, end, kind, what in sorted(spans, key=lambda s: (s[0], -s[1])):
            if kept and start < kept[-1][1]:
                # overlaps an earlier highlight: a finding joins that mark (its link and tip list
                # every finding on the span); a missed gold entity stays listed beside the line
                if kind == "pred" and kept[-1][2] == "pred":
                    kept[-1] = (*kept[-1][:3], [*kept[-1][3], *what])
                continue
            kept.append((start, end, kind, what))
        out, pos = [], 0
        for start, end, kind, what in kept:
            inner = esc(text[start:end])
            if kind == "pred":
                group = sorted(what, key=lambda ip: rank[method_verdict(ip[1])])
                verdict = method_verdict(group[0][1])
                tip = " | ".join(f"{method_verdict(p)}: {p.reason or p.label}" for _, p in group)
                ids = " ".join(f"p{i}" for i, _ in group)
                out += [esc(text[pos:start]),
                        f'<mark class="v-{verdict}" data-verdict="{verdict}" data-findings="{ids}" title="{esc(tip)}" '
                        f'style="background-color:{COLOURS[verdict][0]};padding:0 2px;border-radius:3px;color:#212121">'
                        f'<a href="#p{group[0][0]}" style="color:#212121;text-decoration:none">{inner}</a></mark>']
            else:
                out += [esc(text[pos:start]),
                        f'<mark class="v-missed" title="missed gold entity ({esc(what.label)})" '
                        f'style="background-color:transparent;border:{_MISSED_BORDER};padding:0 2px">{inner}</mark>']
            pos = end
        out.append(esc(text[pos:]))
        panels = [finding_panel(idx, p, by_pred.get(idx), judged, (evidence or {}).get(idx) if evidence is not None
                                else None, placed[idx] is not None) for idx, p in ranked(here)]
        for g in gold_here:
            why = by_gold.get((g.note_id, g.entity_id))
            panels.append(f'<details class="fd-missed" style="margin:2px 0;padding:2px 6px;border-left:4px dashed '
                          f'#424242"><summary><b>{esc(g.entity)}</b> — gold {esc(g.label)} · missed</summary>'
                          f"<p>{esc(why.reason if why else 'not judged')}</p><p><b>annotator path:</b> "
                          f"{esc(' → '.join(g.check_path) or '—')}</p></details>")
        inconsistent = any(method_verdict(p) in INCONSISTENT for _, p in here)
        cov, cov_why = _coverage_cell(marks_of[n], n == 0 or marks_of[n - 1] != marks_of[n])
        rows.append(f'<tr class="{"has-inc" if inconsistent else "no-inc" if here else "plain"}">'
                    f'<td class="ln" style="{_TD};color:#9e9e9e;font-family:monospace;width:3em">{n}</td>{cov}'
                    f'<td class="txt" style="{_TD};font-family:monospace;white-space:pre-wrap;width:50%">'
                    f'{"".join(out)}</td><td class="panel" style="{_TD}">{cov_why}{"".join(panels)}</td></tr>')
    counts = {v: sum(1 for _, p in predictions if method_verdict(p) == v) for v in VERDICTS}
    judge_counts = {"correct": sum(1 for i, _ in predictions if i in by_pred and by_pred[i].verdict == "correct"),
                    "incorrect": sum(1 for i, _ in predictions if i in by_pred and by_pred[i].verdict == "incorrect"),
                    "unmatched": sum(1 for i, _ in predictions if i not in by_pred), "missed": len(missed)}
    judge_desc = f"{judgements[0].judge}, {judgements[0].mode}" if judgements else "not judged"
    found = ("not checked (the run failed on it)" if record is not None and record.failed
             else f"{len(predictions)} findings")
    head = (f'<h1 style="font-size:1.4em;margin:4px 0">{esc(title or note.note_id)}</h1>'
            f'<p class="meta" style="color:#757575;margin:2px 0">{esc(note.note_type)} · subject {note.subject_id} · '
            f"admission {note.hadm_id} · {esc(note.charttime or note.chartdate)} · {found}</p>")
    plain = [p for _, p in predictions]
    if calibrated_run is None:
        calibrated_run = calibrated(plain)
    if calibrated_run and threshold is None:
        threshold = initial_threshold(plain)
    controls = threshold_controls(plain, threshold if calibrated_run else None)
    status = "failed" if record is not None and record.failed else (
        "incomplete" if record is not None and record.stage_failures else "ok")
    return (f'<div class="ehrlib-viewer" data-note="{esc(note.note_id)}" data-status="{status}" '
            f'style="font-family:sans-serif;color:#212121;text-align:left;margin:1em">{_nav(nav)}{head}'
            f'{_status_banner(record)}{_coverage_head(coverage_counts(marks_of))}'
            f'{verdict_legend(counts, judged, judge_counts, judge_desc)}<div>{controls}</div>{_ranking(predictions)}'
            f'{_filter_switch()}{expand_controls()}<table class="note" style="border-collapse:collapse;width:100%;'
            f'margin-top:6px">{"".join(rows)}</table></div>')


def findings_html(note: Note, predictions: Sequence[tuple[int, Prediction]], gold: Sequence[GoldEntity] = (),
                  judgements: Sequence[Judgement] = (), *, title: str = "", **kwargs: Any) -> str:
    """The standalone page of one note (see :func:`findings_fragment` for the arguments)."""
    return page(note.note_id, findings_fragment(note, predictions, gold, judgements, title=title, **kwargs))


@dataclass(frozen=True, slots=True)
class NotebookView:
    """A viewer page's ``<div>``, shown as HTML by Jupyter (``_repr_html_``); no IPython needed."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


def notebook_view(page: str | os.PathLike[str]) -> NotebookView:
    """A viewer page for a notebook cell: its ``<div>``, rendered by Jupyter as HTML.

    Styles are inline, so the page renders the same in an untrusted notebook (where
    JupyterLab drops ``<style>``); the "inconsistent only" switch needs the page itself
    (open the file from Lab's file browser), as the sanitizer disables inputs.
    """
    text = Path(page).read_text(encoding="utf-8")
    start, end = text.find('<div class="ehrlib-viewer"'), text.rfind("</body>")
    body = text[start:end] if start >= 0 and end > start else text
    # the threshold slider's script and style live in the page: a notebook shows the static view
    return NotebookView(re.sub(r"<(script|style)\b[^>]*>.*?</\1\s*>", "", body, flags=re.S | re.I))
