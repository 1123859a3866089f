"""Findings viewer: one HTML page per note with what the method found, and an index.

Colours follow the *method's* verdict, because on real (unlabelled) notes that is all
there is: red = contradiction (a record disagrees), amber = missing (no record), grey =
unverified (the method could not decide), green = consistent. When the corpus has gold
labels the judge's verdict is a second layer: a badge on each finding (correct / wrong
label / no gold counterpart) and dashed outlines for gold entities nothing matched.

Every finding is highlighted at its own line and span (the k-th finding with the same
text on a line marks the k-th occurrence), links to a panel with the reason, the
evidence rows as charted (time, item, value and unit; drug, dose and route; read from
the run's database, see :mod:`ehrlib.viz.evidence`) and the tool trace. Pages have
previous / next / index links in the index's order (most inconsistent notes first) and
an "inconsistent only" switch.

Rendering rules, so one file works everywhere: no JavaScript, no network; every colour
and alignment is an inline ``style`` attribute, using only properties JupyterLab's HTML
sanitizer keeps (background-color, border, color, text-align, white-space, font-family,
padding, ...), because an untrusted notebook (any papermill-executed one) drops
``<style>`` elements and Lab's own table CSS would right-align the note text. The
``<style>`` block carries only extras: the filter switch and hover cues.
"""
from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import write_text
from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.judge.evaluate import load_run, read_judgements
from ehrlib.viz.evidence import MAX_ROWS, EvidenceReader, describe

__all__ = [
    "VERDICTS",
    "NotebookView",
    "findings_html",
    "index_html",
    "method_verdict",
    "notebook_view",
    "prediction_verdicts",
    "write_findings_viewer",
]

#: method verdicts, most urgent first (the order of legends, counts and merged highlights)
VERDICTS = ("contradiction", "missing", "unverified", "consistent")
INCONSISTENT = ("contradiction", "missing")
#: verdict -> (highlight background, panel border / legend text colour)
COLOURS = {"contradiction": ("#ffcdd2", "#c62828"), "missing": ("#ffe0b2", "#ef6c00"),
           "unverified": ("#e0e0e0", "#616161"), "consistent": ("#c8e6c9", "#2e7d32")}
_JUDGE_BADGE = {"correct": ("judge: correct", "#2e7d32"), "incorrect": ("judge: wrong label", "#c62828"),
                "unparsed": ("judge: unparsed", "#616161"), None: ("judge: no gold counterpart", "#ef6c00")}
_MISSED_BORDER = "1px dashed #424242"

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


def method_verdict(p: Prediction) -> str:
    """consistent | contradiction | missing | unverified, from the prediction's own fields.

    ``unverified`` is a label of its own where the pipeline emits one; a prediction that
    failed (``failure`` set) or carries a label this viewer does not know counts as
    unverified too, so it is never shown as a confirmed value.
    """
    if p.failure or p.label == "unverified":
        return "unverified"
    if p.label == "consistent":
        return "consistent"
    if p.label == "inconsistent":
        return "missing" if p.inconsistency_type == "missing" else "contradiction"
    return "unverified"


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


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _occurrences(line: str, text: str) -> list[tuple[int, int]]:
    """Every case-insensitive occurrence of ``text`` in ``line`` (of its first word if the
    whole text never occurs: a model may paraphrase the rest)."""
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
    the last occurrence."""
    out: dict[int, tuple[int, int] | None] = {}
    used: dict[str, int] = {}
    for key, text in entities:
        spans = _occurrences(line, text)
        norm = text.strip().lower()
        k = used.get(norm, 0)
        used[norm] = k + 1
        out[key] = spans[min(k, len(spans) - 1)] if spans else None
    return out


def _trace_table(p: Prediction) -> str:
    if not p.tool_calls:
        return ('<p style="color:#757575">no tool calls' + (" (answered from the validation cache)"
                                                          if p.from_cache else "") + "</p>")
    cell = "text-align:left;border:1px solid #dddddd;padding:1px 4px;vertical-align:top"
    head = "".join(f'<th style="{cell}">{h}</th>' for h in ("#", "tool", "args", "rows", "ms", "error"))
    rows = "".join(
        f'<tr><td style="{cell}">{i}</td><td style="{cell}">{_esc(c.tool)}</td><td style="{cell}"><code>'
        f"{_esc(json.dumps(dict(c.args), default=str)[:200])}</code></td><td style=\"{cell}\">{c.n_rows}</td>"
        f'<td style="{cell}">{c.ms:.0f}</td><td style="{cell}">{_esc(c.error or "")}</td></tr>'
        for i, c in enumerate(p.tool_calls, 1))
    return (f'<table class="trace" style="font-size:85%;border-collapse:collapse;margin:4px 0">'
            f"<tr>{head}</tr>{rows}</table>")


def _evidence_list(p: Prediction, rows: Sequence[Any] | None) -> str:
    if not p.evidence_row_ids:
        return "none"
    if rows is None:  # no database to read them from: ids only, said so
        items = [f"{_esc(r.table)}#{_esc(r.row_id)}" for r in p.evidence_row_ids[:MAX_ROWS]]
    else:
        items = [f'<span style="color:#757575">{_esc(r.table)}#{_esc(r.row_id)}</span> {_esc(describe(r))}'
                 for r in rows]
    more = len(p.evidence_row_ids) - MAX_ROWS
    tail = f"<li>… {more} more</li>" if more > 0 else ""
    return '<ul class="evidence" style="margin:2px 0;padding-left:1.2em">' + "".join(
        f'<li class="ev">{x}</li>' for x in items) + tail + "</ul>"


def _finding(idx: int, p: Prediction, j: Judgement | None, judged: bool, evidence: Sequence[Any] | None,
             located: bool) -> str:
    verdict = method_verdict(p)
    bg, fg = COLOURS[verdict]
    badge = ""
    if judged:
        text, colour = _JUDGE_BADGE[j.verdict if j is not None else None]
        badge = (f' <span class="judge" data-judge="{_esc(j.verdict if j else "unmatched")}" '
                 f'style="color:{colour};border:1px solid {colour};border-radius:3px;padding:0 3px;'
                 f'font-size:85%">{_esc(text)}</span>')
    items = ", ".join(f"{i.table}:{i.itemid} {i.label}" for i in p.items) or "none"
    judge_reason = (f"<p><b>judge ({_esc(j.judge)}, {_esc(j.mode)}):</b> {_esc(j.reason)}</p>" if j is not None else "")
    where = "" if located else ' <span style="color:#757575">(text not found on this line)</span>'
    return (f'<details id="p{idx}" class="fd fd-{verdict}" data-verdict="{verdict}" '
            f'style="margin:2px 0;padding:2px 6px;border-left:4px solid {fg};background-color:#fafafa">'
            f'<summary><span style="background-color:{bg};padding:0 3px;border-radius:3px"><b>{_esc(p.entity)}'
            f'</b></span> <span class="verdict" style="color:{fg};font-weight:bold">{verdict}</span>'
            f"{badge}{' · cached' if p.from_cache else ''}{where}</summary>"
            f"<p><b>reason:</b> {_esc(p.reason or '—')}</p>{judge_reason}"
            f"<p><b>items:</b> {_esc(items)}<br><b>status:</b> {_esc(p.temporal_status)}"
            + (f" · <b>window:</b> {_esc(p.time_window.start)} → {_esc(p.time_window.end)}" if p.time_window else "")
            + (f" · <b>rule:</b> <code>{_esc(p.rule_id)}</code>" if getattr(p, "rule_id", None) else "")
            + (f" · <b>failure:</b> {_esc(p.failure)}" if p.failure else "")
            + f"</p><div><b>evidence rows:</b> {_evidence_list(p, evidence)}</div>"
            f"<div><b>tool trace:</b> {_trace_table(p)}</div></details>")


def _legend(counts: Mapping[str, int], judged: bool, judge_counts: Mapping[str, int], judge_desc: str) -> str:
    parts = [f'<span class="lg lg-{v}" data-count="{counts.get(v, 0)}" style="background-color:{COLOURS[v][0]};'
             f'color:#212121;padding:1px 6px;margin-right:8px;border-radius:3px">{v} {counts.get(v, 0)}</span>'
             for v in VERDICTS]
    if judged:
        parts.append(f'<span style="color:#616161">judge ({_esc(judge_desc)}): correct {judge_counts["correct"]}, '
                     f'wrong label {judge_counts["incorrect"]}, no gold counterpart {judge_counts["unmatched"]}, '
                     f'<span style="border:{_MISSED_BORDER};padding:0 3px">missed gold {judge_counts["missed"]}'
                     f"</span></span>")
    return f'<p class="legend" style="margin:6px 0">{"".join(parts)}</p>'


def _nav(nav: Mapping[str, str | None] | None) -> str:
    if not nav:
        return ""
    link = 'style="margin-right:1.5em;color:#1565c0"'
    parts = [f'<a class="nav-{k}" href="{_esc(v)}" {link}>{label}</a>' if v else
             f'<span class="nav-{k}" style="margin-right:1.5em;color:#bdbdbd">{label}</span>'
             for k, label, v in (("prev", "← previous", nav.get("prev")), ("index", "index", nav.get("index")),
                                 ("next", "next →", nav.get("next")))]
    return f'<p class="nav" style="margin:0 0 6px 0">{"".join(parts)}</p>'


def _filter_switch() -> str:
    return ('<input type="checkbox" id="only-inconsistent" class="filter">'
            '<label for="only-inconsistent" style="margin-left:4px">inconsistent only</label>')


def _page(title: str, body: str) -> str:
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            f"<style>{_CSS}</style></head><body>{body}</body></html>\n")


def findings_fragment(note: Note, predictions: Sequence[tuple[int, Prediction]], gold: Sequence[GoldEntity] = (),
                      judgements: Sequence[Judgement] = (), *, title: str = "", judged: bool | None = None,
                      evidence: Mapping[int, Sequence[Any]] | None = None,
                      nav: Mapping[str, str | None] | None = None) -> str:
    """The ``<div class="ehrlib-viewer">`` of one note (all styling inline; see module docs).

    ``predictions`` are (index in the run's predictions.jsonl, prediction) pairs, the index
    the judges' ``matched_prediction`` refers to; ``judgements`` one judge and mode;
    ``judged`` (default: whether there is gold) switches the judge layer on; ``evidence``
    maps a prediction index to its looked-up rows (None: show row ids only).
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
    rows = []
    for n, text in enumerate(lines):
        here = on_line.get(n, [])
        placed = _place(text, [(idx, p.entity) for idx, p in here])
        marks: dict[tuple[int, int], list[tuple[int, Prediction]]] = {}
        for idx, p in here:
            if placed[idx] is not None:
                marks.setdefault(placed[idx], []).append((idx, p))
        spans = [(s, e, "pred", group) for (s, e), group in marks.items()]
        gold_here = [g for g in missed if min(g.line, len(lines) - 1) == n]
        for g in gold_here:
            occ = _occurrences(text, g.entity)
            if occ:
                spans.append((*occ[0], "gold", g))
        out, pos = [], 0
        for start, end, kind, what in sorted(spans, key=lambda s: (s[0], -s[1])):
            if start < pos:
                continue  # overlaps an earlier highlight: the finding stays listed beside the line
            inner = _esc(text[start:end])
            if kind == "pred":
                group = sorted(what, key=lambda ip: rank[method_verdict(ip[1])])
                verdict = method_verdict(group[0][1])
                tip = " | ".join(f"{method_verdict(p)}: {p.reason or p.label}" for _, p in group)
                ids = " ".join(f"p{i}" for i, _ in group)
                out += [_esc(text[pos:start]),
                        f'<mark class="v-{verdict}" data-verdict="{verdict}" data-findings="{ids}" title="{_esc(tip)}" '
                        f'style="background-color:{COLOURS[verdict][0]};padding:0 2px;border-radius:3px;color:#212121">'
                        f'<a href="#p{group[0][0]}" style="color:#212121;text-decoration:none">{inner}</a></mark>']
            else:
                out += [_esc(text[pos:start]),
                        f'<mark class="v-missed" title="missed gold entity ({_esc(what.label)})" '
                        f'style="background-color:transparent;border:{_MISSED_BORDER};padding:0 2px">{inner}</mark>']
            pos = end
        out.append(_esc(text[pos:]))
        panels = [_finding(idx, p, by_pred.get(idx), judged, (evidence or {}).get(idx) if evidence is not None
                           else None, placed[idx] is not None) for idx, p in here]
        for g in gold_here:
            why = by_gold.get((g.note_id, g.entity_id))
            panels.append(f'<details class="fd-missed" style="margin:2px 0;padding:2px 6px;border-left:4px dashed '
                          f'#424242"><summary><b>{_esc(g.entity)}</b> — gold {_esc(g.label)} · missed</summary>'
                          f"<p>{_esc(why.reason if why else 'not judged')}</p><p><b>annotator path:</b> "
                          f"{_esc(' → '.join(g.check_path) or '—')}</p></details>")
        inconsistent = any(method_verdict(p) in INCONSISTENT for _, p in here)
        rows.append(f'<tr class="{"has-inc" if inconsistent else "no-inc" if here else "plain"}">'
                    f'<td class="ln" style="{_TD};color:#9e9e9e;font-family:monospace;width:3em">{n}</td>'
                    f'<td class="txt" style="{_TD};font-family:monospace;white-space:pre-wrap;width:50%">'
                    f'{"".join(out)}</td><td class="panel" style="{_TD}">{"".join(panels)}</td></tr>')
    counts = {v: sum(1 for _, p in predictions if method_verdict(p) == v) for v in VERDICTS}
    judge_counts = {"correct": sum(1 for i, _ in predictions if i in by_pred and by_pred[i].verdict == "correct"),
                    "incorrect": sum(1 for i, _ in predictions if i in by_pred and by_pred[i].verdict == "incorrect"),
                    "unmatched": sum(1 for i, _ in predictions if i not in by_pred), "missed": len(missed)}
    judge_desc = f"{judgements[0].judge}, {judgements[0].mode}" if judgements else "not judged"
    head = (f'<h1 style="font-size:1.4em;margin:4px 0">{_esc(title or note.note_id)}</h1>'
            f'<p class="meta" style="color:#757575;margin:2px 0">{_esc(note.note_type)} · subject {note.subject_id} · '
            f"admission {note.hadm_id} · {_esc(note.charttime or note.chartdate)} · {len(predictions)} findings</p>")
    return (f'<div class="ehrlib-viewer" data-note="{_esc(note.note_id)}" style="font-family:sans-serif;color:#212121;'
            f'text-align:left;margin:1em">{_nav(nav)}{head}{_legend(counts, judged, judge_counts, judge_desc)}'
            f'{_filter_switch()}<table class="note" style="border-collapse:collapse;width:100%;margin-top:6px">'
            f'{"".join(rows)}</table></div>')


def findings_html(note: Note, predictions: Sequence[tuple[int, Prediction]], gold: Sequence[GoldEntity] = (),
                  judgements: Sequence[Judgement] = (), *, title: str = "", **kwargs: Any) -> str:
    """The standalone page of one note (see :func:`findings_fragment` for the arguments)."""
    return _page(note.note_id, findings_fragment(note, predictions, gold, judgements, title=title, **kwargs))


def index_html(rows: Sequence[Mapping[str, Any]], *, title: str, subtitle: str = "", judged: bool = False) -> str:
    """The index page: one row per note with its counts, in the given (review) order."""
    cell = "text-align:left;padding:2px 8px;border-bottom:1px solid #eeeeee"
    cols = [*VERDICTS, "total"] + (["gold correct"] if judged else [])
    head = f'<th style="{cell}">note</th><th style="{cell}">type</th>' + "".join(
        f'<th style="{cell}">{c}</th>' for c in cols)
    body = []
    for r in rows:
        counts = "".join(
            f'<td class="n-{v}" style="{cell};background-color:{COLOURS[v][0] if r[v] else "transparent"}">{r[v]}</td>'
            for v in VERDICTS)
        gold = f'<td style="{cell}">{r["gold_correct"]}/{r["n_gold"]}</td>' if judged else ""
        inc = sum(r[v] for v in INCONSISTENT)
        body.append(f'<tr class="{"has-inc" if inc else "no-inc"}" data-note="{_esc(r["note_id"])}">'
                    f'<td style="{cell}"><a href="{_esc(r["href"])}" style="color:#1565c0">{_esc(r["note_id"])}</a></td>'
                    f'<td style="{cell}">{_esc(r["note_type"])}</td>{counts}<td style="{cell}">{r["total"]}</td>'
                    f"{gold}</tr>")
    div = (f'<div class="ehrlib-viewer" style="font-family:sans-serif;color:#212121;text-align:left;margin:1em">'
           f'<h1 style="font-size:1.4em">{_esc(title)}</h1><p style="color:#757575">{_esc(subtitle)}</p>'
           f'{_filter_switch()}<table class="index" style="border-collapse:collapse;margin-top:6px">'
           f'<tr>{head}</tr>{"".join(body)}</table></div>')
    return _page(title, div)


def _safe_name(note_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", note_id)


def write_findings_viewer(run_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, *,
                          corpus_dir: str | os.PathLike[str] | None = None, judge: str = "matcher",
                          mode: str = "lenient", note_ids: Sequence[str] | None = None,
                          db: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write ``<out_dir>/<note_id>.html`` for each note of a run, plus ``index.html``
    (the index first in the returned list is not guaranteed; it is always the last).

    ``out_dir`` defaults to ``<run_dir>/viewer``; ``db`` to the run's database (its
    manifest), from which evidence rows are read; without a readable database the pages
    show row ids. The judge layer appears when the corpus has gold labels and the run
    has judgements by ``judge`` in ``mode`` (``ehrlib judge`` / ``ehrlib report``).
    """
    run = load_run(run_dir, corpus_dir)
    out = Path(out_dir) if out_dir is not None else run.run_dir / "viewer"
    chosen = [j for j in read_judgements(run.run_dir) if j.judge == judge and j.mode == mode]
    judged = run.labelled and bool(chosen)
    wanted = set(note_ids) if note_ids is not None else None
    notes = [n for n in run.notes if wanted is None or n.note_id in wanted]
    by_note: dict[str, list[tuple[int, Prediction]]] = {}
    for i, p in enumerate(run.predictions):
        by_note.setdefault(p.note_id, []).append((i, p))
    rows = []
    for order, note in enumerate(notes):
        preds = by_note.get(note.note_id, [])
        counts = {v: sum(1 for _, p in preds if method_verdict(p) == v) for v in VERDICTS}
        js = [j for j in chosen if j.note_id == note.note_id]
        rows.append({"note_id": note.note_id, "note_type": note.note_type, "href": f"{_safe_name(note.note_id)}.html",
                     **counts, "total": len(preds), "order": order,
                     "gold_correct": sum(1 for j in js if j.verdict == "correct"),
                     "n_gold": sum(1 for g in run.gold if g.note_id == note.note_id)})
    rows.sort(key=lambda r: (-(r["contradiction"] + r["missing"]), r["order"]))
    db_path = db if db is not None else ((run.manifest.get("params") or {}).get("db")
                                         or (run.manifest.get("data_source") or {}).get("db"))
    paths = []
    notes_by_id = {n.note_id: n for n in notes}
    with EvidenceReader(db_path if db_path and Path(db_path).is_file() else None) as reader:
        for k, r in enumerate(rows):
            note = notes_by_id[r["note_id"]]
            preds = by_note.get(note.note_id, [])
            evidence = ({i: reader.rows(note.subject_id, p.evidence_row_ids) for i, p in preds}
                        if reader.error is None else None)
            nav = {"prev": rows[k - 1]["href"] if k else None, "index": "index.html",
                   "next": rows[k + 1]["href"] if k + 1 < len(rows) else None}
            page = findings_html(note, preds, [g for g in run.gold if g.note_id == note.note_id] if judged else [],
                                 [j for j in chosen if j.note_id == note.note_id],
                                 title=f"{note.note_id} — run {run.run_info.get('run_id')}", judged=judged,
                                 evidence=evidence, nav=nav)
            paths.append(write_text(page, out / r["href"]))
    subtitle = (f"{len(rows)} notes, most inconsistent first · judge {judge}, {mode}" if judged else
                f"{len(rows)} notes, most inconsistent first · no gold labels: method verdicts only")
    if db_path is None or not Path(str(db_path)).is_file():
        subtitle += " · evidence rows shown as ids (database not found)"
    paths.append(write_text(index_html(rows, title=f"Findings of run {run.run_info.get('run_id')}",
                                       subtitle=subtitle, judged=judged), out / "index.html"))
    return paths


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
    return NotebookView(text[start:end] if start >= 0 and end > start else text)
