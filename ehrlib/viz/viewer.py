"""A per-note HTML findings viewer: the note with its verified entities highlighted.

Colours follow the judge's verdict on each prediction: green = matches a gold entity
with the right label, red = matches one with the wrong label, amber = no gold
counterpart (an extra finding or a different granularity), and grey dashed for gold
entities no prediction matched. Hovering a highlight shows the checker's reason;
clicking it jumps to the finding, which expands to the judge's reason, the evidence rows
and the tool trace. Plain HTML and CSS (no JavaScript), one self-contained file per note,
so it opens from a run folder, a mail attachment or JupyterLab's file browser alike.
"""
from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from ehrlib.corpus.io import write_text
from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.judge.evaluate import load_run, read_judgements

__all__ = ["prediction_verdicts", "findings_html", "write_findings_viewer"]

# Every rule is scoped to .ehrlib-viewer: the same markup is a standalone page and a
# fragment shown inline in a notebook, where unscoped rules would restyle JupyterLab itself.
_CSS = """
.ehrlib-viewer{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
.ehrlib-viewer table.note{border-collapse:collapse;width:100%}
.ehrlib-viewer table.note td{vertical-align:top;padding:2px 6px;border-bottom:1px solid #eee}
.ehrlib-viewer td.ln{color:#999;text-align:right;font-family:monospace;width:3em}
.ehrlib-viewer td.txt{font-family:monospace;white-space:pre-wrap;width:50%}
.ehrlib-viewer mark{padding:0 2px;border-radius:3px}
.ehrlib-viewer mark a{color:inherit;text-decoration:none}
.ehrlib-viewer .v-correct{background:#c8e6c9}.ehrlib-viewer .v-incorrect{background:#ffcdd2}.ehrlib-viewer .v-unmatched{background:#ffe0b2}
.ehrlib-viewer .v-missed{background:#eeeeee;border:1px dashed #757575}
.ehrlib-viewer details{margin:2px 0;padding:2px 6px;border-left:4px solid #ccc}
.ehrlib-viewer details.v-correct{border-color:#43a047}.ehrlib-viewer details.v-incorrect{border-color:#e53935}
.ehrlib-viewer details.v-unmatched{border-color:#fb8c00}.ehrlib-viewer details.v-missed{border-color:#757575}
.ehrlib-viewer details summary{cursor:pointer}
.ehrlib-viewer table.trace{font-size:85%;border-collapse:collapse;margin:4px 0}
.ehrlib-viewer table.trace td,.ehrlib-viewer table.trace th{border:1px solid #ddd;padding:1px 4px;text-align:left}
.ehrlib-viewer .legend span{margin-right:1em;padding:1px 6px}
.ehrlib-viewer .muted{color:#777}
"""


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


def _find_span(line: str, text: str) -> tuple[int, int] | None:
    """Where ``text`` (or its first word) occurs in ``line``, case-insensitively."""
    for needle in (text, *(text.split()[:1])):
        needle = needle.strip()
        if len(needle) < 2 and needle != text:
            continue
        m = re.search(re.escape(needle), line, flags=re.IGNORECASE) if needle else None
        if m:
            return m.span()
    return None


def _trace_table(p: Prediction) -> str:
    if not p.tool_calls:
        return '<p class="muted">no tool calls' + (" (answered from the validation cache)" if p.from_cache
                                                    else "") + "</p>"
    rows = "".join(
        f"<tr><td>{i}</td><td>{_esc(c.tool)}</td><td><code>{_esc(json.dumps(dict(c.args), default=str)[:200])}"
        f"</code></td><td>{c.n_rows}</td><td>{c.ms:.0f}</td><td>{_esc(c.error or '')}</td></tr>"
        for i, c in enumerate(p.tool_calls, 1))
    return ('<table class="trace"><tr><th>#</th><th>tool</th><th>args</th><th>rows</th><th>ms</th>'
            f"<th>error</th></tr>{rows}</table>")


def _finding(idx: int, p: Prediction, j: Judgement | None) -> tuple[str, str]:
    cls = f"v-{j.verdict}" if j is not None and j.verdict in ("correct", "incorrect") else "v-unmatched"
    verdict = j.verdict if j is not None else "no gold counterpart"
    items = ", ".join(f"{i.table}:{i.itemid} {i.label}" for i in p.items) or "none"
    evidence = ", ".join(f"{r.table}#{r.row_id}" for r in p.evidence_row_ids[:20]) or "none"
    if len(p.evidence_row_ids) > 20:
        evidence += f" … (+{len(p.evidence_row_ids) - 20} more)"
    judge = (f"<p><b>judge ({_esc(j.judge)}, {_esc(j.mode)}):</b> {_esc(j.reason)}</p>" if j is not None else "")
    body = (f'<details id="p{idx}" class="{cls}"><summary><b>{_esc(p.entity)}</b> — {_esc(p.label)}'
            f"{' (' + _esc(p.inconsistency_type) + ')' if p.inconsistency_type else ''} · {_esc(verdict)}"
            f"{' · cached' if p.from_cache else ''}</summary>"
            f"<p><b>reason:</b> {_esc(p.reason or '—')}</p>{judge}"
            f"{'<p><b>not verified:</b> ' + _esc(p.failure) + '</p>' if p.label == 'unverified' and p.failure else ''}"
            f"<p><b>items:</b> {_esc(items)}<br><b>evidence rows:</b> {_esc(evidence)}<br>"
            f"<b>status:</b> {_esc(p.temporal_status)}"
            f"{' · <b>failure:</b> ' + _esc(p.failure) if p.failure else ''}</p>{_trace_table(p)}</details>")
    return cls, body


def findings_html(note: Note, predictions: Sequence[tuple[int, Prediction]], gold: Sequence[GoldEntity],
                  judgements: Sequence[Judgement], *, title: str = "") -> str:
    """The viewer page for one note.

    ``predictions`` are (index in the run's predictions.jsonl, prediction) pairs, the index
    the judges' ``matched_prediction`` refers to; ``judgements`` should be one judge and mode.
    """
    by_pred = prediction_verdicts(judgements)
    judged = {(j.note_id, j.entity_id): j for j in judgements}
    missed = [g for g in gold if (j := judged.get((g.note_id, g.entity_id))) is None or j.matched_prediction is None]
    lines = note.lines
    spans: dict[int, list[tuple[int, int, str, str, str]]] = {}
    panels: dict[int, list[str]] = {}
    for idx, p in predictions:
        cls, body = _finding(idx, p, by_pred.get(idx))
        line = min(max(p.line, 0), len(lines) - 1)
        panels.setdefault(line, []).append(body)
        span = _find_span(lines[line], p.entity)
        if span:
            spans.setdefault(line, []).append((*span, cls, f"#p{idx}", p.reason or p.label))
    for g in missed:
        line = min(g.line, len(lines) - 1)
        why = judged.get((g.note_id, g.entity_id))
        panels.setdefault(line, []).append(
            f'<details class="v-missed"><summary><b>{_esc(g.entity)}</b> — gold {_esc(g.label)} · missed'
            f"</summary><p>{_esc(why.reason if why else 'not judged')}</p>"
            f"<p><b>annotator path:</b> {_esc(' → '.join(g.check_path) or '—')}</p></details>")
        span = _find_span(lines[line], g.entity)
        if span:
            spans.setdefault(line, []).append((*span, "v-missed", "", f"missed gold entity ({g.label})"))
    rows = []
    for n, text in enumerate(lines):
        out, pos = [], 0
        for start, end, cls, href, tip in sorted(spans.get(n, []), key=lambda s: (s[0], -s[1])):
            if start < pos:
                continue  # overlapping highlight: the finding stays listed on the right
            inner = _esc(text[start:end])
            inner = f'<a href="{href}">{inner}</a>' if href else inner
            out += [_esc(text[pos:start]), f'<mark class="{cls}" title="{_esc(tip)}">{inner}</mark>']
            pos = end
        out.append(_esc(text[pos:]))
        rows.append(f'<tr><td class="ln">{n}</td><td class="txt">{"".join(out)}</td>'
                    f'<td>{"".join(panels.get(n, []))}</td></tr>')
    counts = {c: sum(1 for i, _ in predictions if (by_pred.get(i).verdict if i in by_pred else "unmatched") == c)
              for c in ("correct", "incorrect", "unmatched")}
    judge_desc = f"{judgements[0].judge}, {judgements[0].mode}" if judgements else "not judged"
    legend = (f'<p class="legend"><span class="v-correct">correct {counts["correct"]}</span>'
              f'<span class="v-incorrect">wrong label {counts["incorrect"]}</span>'
              f'<span class="v-unmatched">no gold counterpart {counts["unmatched"]}</span>'
              f'<span class="v-missed">missed gold {len(missed)}</span> <span class="muted">judge: '
              f"{_esc(judge_desc)}</span></p>")
    head = (f"<h1>{_esc(title or note.note_id)}</h1><p class=\"muted\">{_esc(note.note_type)} · subject "
            f"{note.subject_id} · admission {note.hadm_id} · {_esc(note.chartdate)}</p>")
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{_esc(note.note_id)}</title>"
            f"<style>{_CSS}</style></head><body><div class=\"ehrlib-viewer\">{head}{legend}"
            f"<table class=\"note\">{''.join(rows)}</table></div></body></html>\n")


def write_findings_viewer(run_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, *,
                          corpus_dir: str | os.PathLike[str] | None = None, judge: str = "matcher",
                          mode: str = "lenient", note_ids: Sequence[str] | None = None) -> list[Path]:
    """Write ``<out_dir>/<note_id>.html`` for each note of a judged run, plus ``index.html``.

    ``out_dir`` defaults to ``<run_dir>/viewer``. Judgements come from the run's
    judgements.jsonl (run ``ehrlib judge`` first); without them, predictions are shown
    unjudged.
    """
    run = load_run(run_dir, corpus_dir)
    out = Path(out_dir) if out_dir is not None else run.run_dir / "viewer"
    chosen = [j for j in read_judgements(run.run_dir) if j.judge == judge and j.mode == mode]
    wanted = set(note_ids) if note_ids is not None else None
    paths, index = [], []
    for note in run.notes:
        if wanted is not None and note.note_id not in wanted:
            continue
        preds = [(i, p) for i, p in enumerate(run.predictions) if p.note_id == note.note_id]
        gold = [g for g in run.gold if g.note_id == note.note_id]
        js = [j for j in chosen if j.note_id == note.note_id]
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", note.note_id)
        paths.append(write_text(findings_html(note, preds, gold, js, title=f"{note.note_id} — run "
                                              f"{run.run_info.get('run_id')}"), out / f"{safe}.html"))
        n_ok = sum(1 for j in js if j.verdict == "correct")
        index.append(f'<li><a href="{_esc(safe)}.html">{_esc(note.note_id)}</a> · {_esc(note.note_type)} · '
                     f"{len(preds)} predictions · {n_ok}/{len(gold)} gold correct</li>")
    paths.append(write_text(f"<!doctype html><html><head><meta charset=\"utf-8\"><title>findings</title>"
                            f"<style>{_CSS}</style></head><body><div class=\"ehrlib-viewer\"><h1>Findings of run "
                            f"{_esc(run.run_info.get('run_id'))}</h1><p class=\"muted\">judge {_esc(judge)}, "
                            f"{_esc(mode)}</p><ul>{''.join(index)}</ul></div></body></html>\n", out / "index.html"))
    return paths
