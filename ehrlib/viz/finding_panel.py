"""The panel of one finding in the viewer: verdict, confidence, reason, time, the evidence
rows (the deciding rows first, highlighted) and the tool trace. Styles are inline (see
:mod:`ehrlib.viz.viewer` for why).
"""
from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ehrlib.corpus.records import Judgement, Prediction, RowRef
from ehrlib.viz.evidence import MAX_ROWS, describe
from ehrlib.viz.ranking import method_verdict, raw_verdict
from ehrlib.viz.time_words import describe_time

__all__ = ["COLOURS", "LOW_CONFIDENCE", "evidence_order", "finding_panel", "items_text", "verdict_words"]

#: verdict -> (highlight background, panel border / legend text colour)
COLOURS = {"contradiction": ("#ffcdd2", "#c62828"), "missing": ("#ffe0b2", "#ef6c00"),
           "unverified": ("#e0e0e0", "#616161"), "consistent": ("#c8e6c9", "#2e7d32")}
#: how a finding withheld for low confidence reads
LOW_CONFIDENCE = "unverified (low confidence)"
_JUDGE_BADGE = {"correct": ("judge: correct", "#2e7d32"), "incorrect": ("judge: wrong label", "#c62828"),
                "unparsed": ("judge: unparsed", "#616161"), None: ("judge: no gold counterpart", "#ef6c00")}
_DECIDING_STYLE = "background-color:#fff59d;border-left:3px solid #f9a825;padding:1px 4px;margin:1px 0"
_CELL = "text-align:left;border:1px solid #dddddd;padding:1px 4px;vertical-align:top"


def esc(value: object) -> str:
    """HTML-escape any value (attributes included)."""
    return html.escape(str(value), quote=True)


def verdict_words(p: Prediction) -> str:
    """The verdict as shown: a withheld one reads "unverified (low confidence)"."""
    shown = method_verdict(p)
    return LOW_CONFIDENCE if shown == "unverified" and raw_verdict(p) != "unverified" else shown


def _key(r: RowRef) -> tuple[str, str]:
    return r.table, str(r.row_id)


def evidence_order(p: Prediction) -> list[RowRef]:
    """The deciding rows first, then the other evidence rows, each once."""
    seen: dict[tuple[str, str], RowRef] = {}
    for r in (*p.deciding_row_ids, *p.evidence_row_ids):
        seen.setdefault(_key(r), r)
    return list(seen.values())


def items_text(p: Prediction, rows: Sequence[Any] | None) -> str:
    """The items a finding is about: its own item list, else the items of its evidence rows
    (looked up: ``table:item label``; ids only: the tables), never "none" while it has rows.
    """
    if p.items:
        return ", ".join(f"{i.table}:{i.itemid} {i.label}" for i in p.items)
    refs = evidence_order(p)
    if not refs:
        return "none"
    found = [r for r in rows or () if getattr(r, "found", False)]
    named = [f"{r.table}:{r.item}" + (f" {r.label}" if r.label else "") if r.item is not None else str(r.table)
             for r in found]
    if named:
        return ", ".join(dict.fromkeys(named)) + " (from the evidence rows)"
    counts = Counter(r.table for r in refs)
    return ", ".join(f"{t} ({n} row{'' if n == 1 else 's'})" for t, n in counts.items()) + " (from the evidence rows)"


def _evidence_list(p: Prediction, rows: Sequence[Any] | None) -> str:
    refs = evidence_order(p)
    if not refs:
        return "none"
    deciding = {_key(r) for r in p.deciding_row_ids}
    items = []
    for k, ref in enumerate(refs[:MAX_ROWS]):
        row = rows[k] if rows is not None and k < len(rows) else None
        text = (f'<span style="color:#757575">{esc(ref.table)}#{esc(ref.row_id)}</span> {esc(describe(row))}'
                if row is not None else f"{esc(ref.table)}#{esc(ref.row_id)}")
        if _key(ref) in deciding:
            items.append(f'<li class="ev deciding" style="{_DECIDING_STYLE}"><span class="deciding-label" '
                         f'style="font-weight:bold;color:#5d4037;margin-right:4px">deciding</span>{text}</li>')
        else:
            items.append(f'<li class="ev">{text}</li>')
    more = len(refs) - MAX_ROWS
    tail = f"<li>… {more} more</li>" if more > 0 else ""
    return '<ul class="evidence" style="margin:2px 0;padding-left:1.2em">' + "".join(items) + tail + "</ul>"


def _trace_table(p: Prediction) -> str:
    if not p.tool_calls:
        return ('<p style="color:#757575">no tool calls' + (" (answered from the validation cache)"
                                                          if p.from_cache else "") + "</p>")
    head = "".join(f'<th style="{_CELL}">{h}</th>' for h in ("#", "tool", "args", "rows", "ms", "error"))
    rows = "".join(
        f'<tr><td style="{_CELL}">{i}</td><td style="{_CELL}">{esc(c.tool)}</td><td style="{_CELL}"><code>'
        f"{esc(json.dumps(dict(c.args), default=str)[:200])}</code></td><td style=\"{_CELL}\">{c.n_rows}</td>"
        f'<td style="{_CELL}">{c.ms:.0f}</td><td style="{_CELL}">{esc(c.error or "")}</td></tr>'
        for i, c in enumerate(p.tool_calls, 1))
    return (f'<table class="trace" style="font-size:85%;border-collapse:collapse;margin:4px 0">'
            f"<tr>{head}</tr>{rows}</table>")


def _confidence(p: Prediction) -> str:
    if p.confidence is None:
        return ""
    source = " (model)" if p.confidence_source == "logprobs" else ""
    title = ("the model's own probability of its verdict" if source else "the calibrator's probability that "
             "the verdict is right")
    return (f' <span class="conf" style="color:#424242;font-size:85%" title="{title}">'
            f"conf {p.confidence:.2f}{source}</span>")


def finding_panel(idx: int, p: Prediction, j: Judgement | None, judged: bool, evidence: Sequence[Any] | None,
                  located: bool) -> str:
    """``<details id="p<idx>" class="fd ...">`` of one finding; ``evidence`` are its rows in
    :func:`evidence_order` (None: no database, ids only).
    """
    verdict = method_verdict(p)
    bg, fg = COLOURS[verdict]
    badge = ""
    if judged:
        text, colour = _JUDGE_BADGE[j.verdict if j is not None else None]
        badge = (f' <span class="judge" data-judge="{esc(j.verdict if j else "unmatched")}" '
                 f'style="color:{colour};border:1px solid {colour};border-radius:3px;padding:0 3px;'
                 f'font-size:85%">{esc(text)}</span>')
    items = items_text(p, evidence)
    judge_reason = f"<p><b>judge ({esc(j.judge)}, {esc(j.mode)}):</b> {esc(j.reason)}</p>" if j is not None else ""
    where = "" if located else ' <span style="color:#757575">(text not found on this line)</span>'
    conf = "" if p.confidence is None else f"{p.confidence:.4f}"
    raw = raw_verdict(p)
    withheld = f" · <b>withheld by the run, the verifier said:</b> {raw}" if raw != verdict else ""
    return (f'<details id="p{idx}" class="fd fd-{verdict}" data-verdict="{verdict}" data-raw-verdict="{raw}" '
            f'data-confidence="{conf}" '
            f'style="margin:2px 0;padding:2px 6px;border-left:4px solid {fg};background-color:#fafafa">'
            f'<summary><span class="ent" style="background-color:{bg};padding:0 3px;border-radius:3px"><b>'
            f'{esc(p.entity)}</b></span> <span class="verdict" style="color:{fg};font-weight:bold">'
            f"{esc(verdict_words(p))}</span>{_confidence(p)}"
            f"{badge}{' · cached' if p.from_cache else ''}{where}</summary>"
            f"<p><b>reason:</b> {esc(p.reason or '—')}</p>{judge_reason}"
            f"<p><b>items:</b> {esc(items)}<br><b>status:</b> {esc(p.temporal_status)}"
            f' · <b>time:</b> <span class="time">{esc(describe_time(p.time_basis, p.time_window))}</span>'
            + (f" · <b>confidence:</b> {p.confidence:.2f}{withheld}" if p.confidence is not None else "")
            + (f" · <b>rule:</b> <code>{esc(p.rule_id)}</code>" if p.rule_id else "")
            + (f" · <b>failure:</b> {esc(p.failure)}" if p.failure else "")
            + f"</p><div><b>evidence rows:</b> {_evidence_list(p, evidence)}</div>"
            f"<div><b>tool trace:</b> {_trace_table(p)}</div></details>")
