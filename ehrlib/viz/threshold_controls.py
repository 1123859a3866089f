"""The abstention threshold a reviewer moves in the page: a slider and a number box, the
count of inconsistent findings that stay above it, and the plain script (inline, no
external assets) that re-labels findings below it "unverified (low confidence)" on every
page that lists findings: a note page's panels and review list, the index's per-note
counts and the findings page's rows.

The page is complete without the script: it is rendered at the run's own threshold, so
a notebook (whose sanitizer drops scripts) or a browser with scripts off shows the run's
verdicts; the script only recomputes when the reviewer moves the threshold, and carries
the chosen value to the pages it links (``?t=0.40``), so the index and every note agree.
"""
from __future__ import annotations

import json
from collections.abc import Sequence

from ehrlib.corpus.records import Prediction
from ehrlib.viz.finding_panel import COLOURS, LOW_CONFIDENCE
from ehrlib.viz.ranking import INCONSISTENT, VERDICTS, method_verdict, raw_verdict

__all__ = ["UNCALIBRATED", "remaining_text", "threshold_controls", "threshold_script"]

UNCALIBRATED = ("uncalibrated run: its findings carry no confidence, so nothing was withheld "
                "and there is no threshold to move")


def remaining_text(pairs: Sequence[tuple[str, str]], threshold: float) -> str:
    """What the counter says for ``(raw verdict, shown verdict)`` pairs (the script's twin)."""
    inc = [(r, s) for r, s in pairs if r in INCONSISTENT]
    con = [(r, s) for r, s in inc if r == "contradiction"]
    low = sum(1 for r, s in pairs if s == "unverified" and r != "unverified")
    return (f"{sum(r == s for r, s in inc)} of {len(inc)} inconsistent findings remain at confidence ≥ "
            f"{threshold:.2f} (contradictions {sum(r == s for r, s in con)} of {len(con)}); "
            f"{low} shown as {LOW_CONFIDENCE}")


def threshold_controls(predictions: Sequence[Prediction], threshold: float | None) -> str:
    """The slider, number box and counter; the "uncalibrated run" notice when ``threshold``
    is None (no finding has a confidence).
    """
    if threshold is None:
        return (f'<p class="uncalibrated" style="margin:6px 0;padding:3px 8px;border:1px solid #9e9e9e;'
                f'background-color:#f5f5f5;color:#424242;display:inline-block">{UNCALIBRATED}</p>')
    pairs = [(raw_verdict(p), method_verdict(p)) for p in predictions]
    value = f"{threshold:.2f}"
    return (f'<div class="threshold" style="margin:6px 0;padding:3px 8px;border:1px solid #90caf9;'
            f'background-color:#e3f2fd;display:inline-block">'
            f'<label for="threshold" style="margin-right:6px"><b>abstention threshold</b></label>'
            f'<input type="range" id="threshold" min="0" max="1" step="0.01" value="{value}" '
            f'style="vertical-align:middle;width:14em">'
            f'<input type="number" id="threshold-num" min="0" max="1" step="0.01" value="{value}" '
            f'style="width:4.5em;margin:0 8px" aria-label="abstention threshold">'
            f'<span id="remaining">{remaining_text(pairs, threshold)}</span></div>')


_SCRIPT = """
(function () {
  var COLOURS = %(colours)s, ORDER = %(order)s, INC = %(inc)s, LOW = %(low)s;
  var range = document.getElementById("threshold"), num = document.getElementById("threshold-num");
  if (!range || !num) { return; }
  function shown(raw, conf, t) { return (conf !== null && conf !== "" && Number(conf) < t) ? "unverified" : raw; }
  function isInc(v) { return INC.indexOf(v) >= 0; }
  function paint(el, v, raw) {
    var s = el.querySelector(".verdict, .rk-verdict");
    if (s) { s.textContent = (v === "unverified" && raw !== "unverified") ? LOW : v; s.style.color = COLOURS[v][1]; }
  }
  function apply(t) {
    var pairs = [], by = {}, counts = {};
    ORDER.forEach(function (v) { counts[v] = 0; });
    document.querySelectorAll("details.fd[data-raw-verdict]").forEach(function (d) {
      var raw = d.dataset.rawVerdict, v = shown(raw, d.dataset.confidence, t);
      by[d.id] = v; counts[v] += 1; pairs.push([raw, v]);
      d.className = "fd fd-" + v; d.dataset.verdict = v; d.style.borderLeftColor = COLOURS[v][1];
      paint(d, v, raw);
      var ent = d.querySelector(".ent"); if (ent) { ent.style.backgroundColor = COLOURS[v][0]; }
    });
    document.querySelectorAll("mark[data-findings]").forEach(function (m) {
      var best = null;
      m.dataset.findings.split(" ").forEach(function (id) {
        var v = by[id]; if (v && (best === null || ORDER.indexOf(v) < ORDER.indexOf(best))) { best = v; }
      });
      if (best) { m.className = "v-" + best; m.dataset.verdict = best; m.style.backgroundColor = COLOURS[best][0]; }
    });
    document.querySelectorAll("table.note tr").forEach(function (tr) {
      var ds = tr.querySelectorAll("details.fd"); if (!ds.length) { return; }
      var inc = false; ds.forEach(function (d) { inc = inc || isInc(d.dataset.verdict); });
      tr.classList.toggle("has-inc", inc); tr.classList.toggle("no-inc", !inc);
    });
    document.querySelectorAll("tr.rk[data-finding]").forEach(function (tr) {
      var v = by[tr.dataset.finding]; if (v) { paint(tr, v, tr.dataset.rawVerdict); }
    });
    document.querySelectorAll("tr.fr[data-raw-verdict]").forEach(function (tr) {  /* the findings page */
      var raw = tr.dataset.rawVerdict, v = shown(raw, tr.dataset.confidence, t);
      counts[v] += 1; pairs.push([raw, v]); tr.dataset.verdict = v; paint(tr, v, raw);
    });
    document.querySelectorAll(".legend .lg[data-verdict]").forEach(function (s) {
      var v = s.dataset.verdict; s.dataset.count = counts[v]; s.textContent = v + " " + counts[v];
    });
    document.querySelectorAll("tr[data-inc]").forEach(function (tr) {
      if (tr.dataset.status === "failed") { return; }  /* not checked: keeps its dash */
      var left = 0;
      JSON.parse(tr.dataset.inc).forEach(function (rc) {
        var v = shown(rc[0], rc[1], t); pairs.push([rc[0], v]); if (v === rc[0]) { left += 1; }
      });
      var cell = tr.querySelector(".n-remaining"); if (cell) { cell.textContent = left; }
    });
    var inc = pairs.filter(function (p) { return isInc(p[0]); });
    var con = inc.filter(function (p) { return p[0] === "contradiction"; });
    var kept = function (ps) { return ps.filter(function (p) { return p[0] === p[1]; }).length; };
    var low = pairs.filter(function (p) { return p[1] === "unverified" && p[0] !== "unverified"; }).length;
    var out = document.getElementById("remaining");
    out.dataset.remaining = kept(inc);
    out.textContent = kept(inc) + " of " + inc.length + " inconsistent findings remain at confidence \\u2265 " +
      t.toFixed(2) + " (contradictions " + kept(con) + " of " + con.length + "); " + low + " shown as " + LOW;
    out.dataset.contradictions = kept(con);
    document.dispatchEvent(new CustomEvent("ehrlib:threshold", {detail: t}));  /* filters re-apply */
  }
  function carry(t) {  /* links to the other pages keep the reviewer's threshold (?t=) */
    document.querySelectorAll("a.nav-prev, a.nav-next, a.nav-index, a.nav-findings, "
                              + "table.index a, table.findings a").forEach(function (a) {
      var href = a.getAttribute("href"), cut = href.search(/[?#]/), hash = href.indexOf("#");
      a.setAttribute("href", (cut < 0 ? href : href.slice(0, cut)) + "?t=" + t.toFixed(2) +
                     (hash < 0 ? "" : href.slice(hash)));
    });
  }
  function set(value) {
    var t = Math.min(1, Math.max(0, Number(value) || 0));
    range.value = t; num.value = t.toFixed(2); apply(t); carry(t);
  }
  range.addEventListener("input", function () { set(range.value); });
  num.addEventListener("input", function () { set(num.value); });
  var given = /[?&]t=([0-9.]+)/.exec(window.location.search);
  if (given) { set(given[1]); }
})();
"""


def threshold_script() -> str:
    """The ``<script>`` moving the threshold (after the viewer ``<div>``: notebooks drop it)."""
    body = _SCRIPT % {"colours": json.dumps(COLOURS), "order": json.dumps(list(VERDICTS)),
                      "inc": json.dumps(list(INCONSISTENT)), "low": json.dumps(LOW_CONFIDENCE)}
    return f"<script>{body}</script>"
