"""The findings page: every finding of a run on one page, across notes.

A reviewer of many notes wants the contradictions, not the notes: this page lists each
finding with its statement (and the note line it stands on), note (linked to the finding's
panel on the note page), verdict, confidence and reason; contradictions first, then
missing, unverified and consistent, each by confidence (highest first, none last).
Clicking a column heading sorts by it (again: the other way); a verdict filter and a text
search narrow the rows. The abstention threshold is the note pages' own control
(:mod:`.threshold_controls`): rows below it read "unverified (low confidence)" and its
counter says how many contradictions remain.

Sorting and filtering are a small inline script (no network, works from ``file://``);
without it the page is the full list in review order at the run's threshold.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ehrlib.corpus.records import Prediction
from ehrlib.viz.finding_panel import COLOURS, esc, verdict_words
from ehrlib.viz.page_names import page_name
from ehrlib.viz.ranking import INCONSISTENT, VERDICTS, method_verdict, raw_verdict
from ehrlib.viz.viewer import page, verdict_legend

__all__ = ["FILTERS", "findings_order", "findings_page"]

#: verdict filter value -> the shown verdicts it keeps
FILTERS = {"all": VERDICTS, "inconsistent": INCONSISTENT, **{v: (v,) for v in VERDICTS}}
_CELL = "text-align:left;vertical-align:top;padding:2px 8px;border-bottom:1px solid #eeeeee"
#: column key, heading, what the sort compares
_COLUMNS = (("rank", "#", "number"), ("statement", "statement", "text"), ("note", "note", "text"),
            ("verdict", "verdict", "verdict"), ("confidence", "confidence", "confidence"),
            ("reason", "reason", "text"))


def findings_order(predictions: Sequence[tuple[int, Prediction]],
                   note_order: Mapping[str, int] | None = None) -> list[tuple[int, Prediction]]:
    """``(index, prediction)`` pairs in the page's order: by verdict before abstention
    (contradictions first), then confidence (highest first, none last), then the notes'
    order (``note_order``, e.g. the index's) and the run's order.
    """
    order = note_order or {}
    return sorted(predictions, key=lambda ip: (VERDICTS.index(raw_verdict(ip[1])), ip[1].confidence is None,
                                               -(ip[1].confidence or 0.0), order.get(ip[1].note_id, 1 << 30),
                                               ip[0]))


#: characters of the note line shown under a statement
CONTEXT_CHARS = 160


def _context(p: Prediction, lines: Sequence[str] | None) -> str:
    """The note line the statement stands on, cut at :data:`CONTEXT_CHARS`."""
    if not lines or not 0 <= p.line < len(lines):
        return ""
    text = " ".join(lines[p.line].split())
    text = text if len(text) <= CONTEXT_CHARS else text[:CONTEXT_CHARS - 1] + "…"
    return f'<div class="f-context" style="color:#757575;font-size:85%;font-family:monospace">{esc(text)}</div>'


def _row(rank: int, idx: int, p: Prediction, lines: Sequence[str] | None) -> str:
    shown = method_verdict(p)
    conf = "" if p.confidence is None else f"{p.confidence:.4f}"
    href = f"{page_name(p.note_id)}#p{idx}"
    return (f'<tr class="fr" data-rank="{rank}" data-raw-verdict="{raw_verdict(p)}" data-verdict="{shown}" '
            f'data-confidence="{conf}" data-note="{esc(p.note_id)}" data-line="{p.line}">'
            f'<td class="f-rank" style="{_CELL};color:#9e9e9e">{rank}</td>'
            f'<td class="f-statement" data-key="{esc(p.entity.lower())}" style="{_CELL}"><b>{esc(p.entity)}</b>'
            f"{_context(p, lines)}</td>"
            f'<td class="f-note" style="{_CELL};white-space:nowrap"><a href="{esc(href)}" style="color:#1565c0">'
            f'{esc(p.note_id)}</a> <span style="color:#9e9e9e">line {p.line}</span></td>'
            f'<td class="f-verdict" style="{_CELL};white-space:nowrap"><span class="verdict" '
            f'style="color:{COLOURS[shown][1]};font-weight:bold">{esc(verdict_words(p))}</span></td>'
            f'<td class="f-confidence" style="{_CELL}">{"—" if p.confidence is None else f"{p.confidence:.2f}"}</td>'
            f'<td class="f-reason" style="{_CELL}">{esc(p.reason or "—")}</td></tr>')


def _filters(n: int) -> str:
    options = "".join(f'<option value="{k}">{"all verdicts" if k == "all" else k}</option>' for k in FILTERS)
    return (f'<p class="finding-filters" hidden style="display:none;margin:6px 0">'
            f'<label for="verdict-filter">verdict </label><select id="verdict-filter">{options}</select> '
            f'<label for="finding-search" style="margin-left:12px">search </label>'
            f'<input type="search" id="finding-search" placeholder="statement, note or reason" style="width:18em"> '
            f'<span id="shown-count" data-shown="{n}" style="margin-left:12px;color:#616161">'
            f"showing {n} of {n} findings</span></p>")


def findings_page(predictions: Sequence[tuple[int, Prediction]], *, title: str, subtitle: str = "",
                  controls: str = "", note_order: Mapping[str, int] | None = None,
                  index_href: str | None = None, note_lines: Mapping[str, Sequence[str]] | None = None) -> str:
    """The standalone findings page of ``(index in predictions.jsonl, prediction)`` pairs;
    ``controls`` is the threshold control (or the uncalibrated notice), ``index_href`` the
    link back to the index, ``note_lines`` each note's lines (the line under a statement).
    """
    lines = note_lines or {}
    rows = [_row(k, idx, p, lines.get(p.note_id))
            for k, (idx, p) in enumerate(findings_order(predictions, note_order), 1)]
    counts = {v: sum(1 for _, p in predictions if method_verdict(p) == v) for v in VERDICTS}
    head = "".join(f'<th data-sort="{key}" data-type="{kind}" title="sort by {words}" style="{_CELL};'
                   f'cursor:pointer;white-space:nowrap">{words}</th>' for key, words, kind in _COLUMNS)
    back = (f'<p class="nav" style="margin:0 0 6px 0"><a class="nav-index" href="{esc(index_href)}" '
            f'style="color:#1565c0">index</a></p>' if index_href else "")
    div = (f'<div class="ehrlib-viewer" data-page="findings" style="font-family:sans-serif;color:#212121;'
           f'text-align:left;margin:1em">{back}<h1 style="font-size:1.4em;margin:4px 0">{esc(title)}</h1>'
           f'<p style="color:#757575;margin:2px 0">{esc(subtitle)}</p>{verdict_legend(counts)}<div>{controls}</div>'
           f'{_filters(len(rows))}<table class="findings" style="border-collapse:collapse;margin-top:6px">'
           f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
    return page(title, div, findings_script())


_SCRIPT = """
(function () {
  var ORDER = %(order)s, FILTERS = %(filters)s;
  var table = document.querySelector("table.findings"), box = document.querySelector("p.finding-filters");
  if (!table || !box) { return; }
  var body = table.tBodies[0], select = document.getElementById("verdict-filter");
  var search = document.getElementById("finding-search"), shownCount = document.getElementById("shown-count");
  box.hidden = false; box.style.display = "";
  function text(tr, key) {
    var td = tr.querySelector(".f-" + key);
    return td ? (td.dataset.key || td.textContent).toLowerCase() : "";
  }
  function value(tr, key, kind) {  /* null sorts last whichever the direction */
    if (kind === "number") { return Number(tr.dataset.rank); }
    if (kind === "verdict") { return ORDER.indexOf(tr.dataset.verdict); }
    if (kind === "confidence") { return tr.dataset.confidence === "" ? null : Number(tr.dataset.confidence); }
    if (key === "note") { return [tr.dataset.note.toLowerCase(), Number(tr.dataset.line)]; }
    return text(tr, key);
  }
  function compare(a, b) {
    if (Array.isArray(a)) { return compare(a[0], b[0]) || compare(a[1], b[1]); }
    return a < b ? -1 : a > b ? 1 : 0;
  }
  var sorted = {key: "rank", dir: 1};
  function sortBy(th) {
    var key = th.dataset.sort, kind = th.dataset.type;
    var first = kind === "confidence" ? -1 : 1;  /* most confident first */
    var dir = sorted.key === key ? -sorted.dir : first;
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var va = value(a, key, kind), vb = value(b, key, kind);
      if (va === null || vb === null) {
        if (va !== vb) { return va === null ? 1 : -1; }
      } else {
        var c = compare(va, vb); if (c) { return dir * c; }
      }
      return Number(a.dataset.rank) - Number(b.dataset.rank);
    });
    rows.forEach(function (tr) { body.appendChild(tr); });
    sorted = {key: key, dir: dir};
    table.querySelectorAll("th[data-sort]").forEach(function (h) {
      if (h === th) { h.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending"); }
      else { h.removeAttribute("aria-sort"); }
    });
  }
  function filter() {
    var keep = FILTERS[select.value] || ORDER, words = search.value.trim().toLowerCase(), n = 0;
    Array.prototype.forEach.call(body.rows, function (tr) {
      var hay = [tr.querySelector(".f-statement").textContent, tr.dataset.note, text(tr, "reason")]
        .join(" ").toLowerCase();
      var show = keep.indexOf(tr.dataset.verdict) >= 0 && (!words || hay.indexOf(words) >= 0);
      tr.style.display = show ? "" : "none"; if (show) { n += 1; }
    });
    shownCount.dataset.shown = n;
    shownCount.textContent = "showing " + n + " of " + body.rows.length + " findings";
  }
  table.querySelectorAll("th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th); });
  });
  select.addEventListener("change", filter);
  search.addEventListener("input", filter);
  document.addEventListener("ehrlib:threshold", filter);  /* a row's verdict moved with the threshold */
  filter();
})();
"""


def findings_script() -> str:
    """The ``<script>`` sorting and filtering the findings table."""
    body = _SCRIPT % {"order": json.dumps(list(VERDICTS)), "filters": json.dumps({k: list(v) for k, v in
                                                                                   FILTERS.items()})}
    return f"<script>{body}</script>"
