"""Opening a note page's findings: "expand all" / "collapse all", and the finding a link names.

Every finding is a ``<details>`` panel that starts collapsed, so a note reads as its text.
The two buttons open or close them all at once; a link to ``page.html#p5`` (from the
findings page, or a highlight) opens finding 5 and scrolls to it. The buttons start hidden
and the script shows them, so where scripts do not run (a notebook's sanitised output)
there is no button that does nothing.
"""
from __future__ import annotations

__all__ = ["MARKER", "expand_controls", "expand_script"]

#: what :func:`ehrlib.viz.viewer.page` looks for to add the script
MARKER = 'class="expand-controls"'
_BUTTON = "margin-right:6px;padding:1px 8px;cursor:pointer"


def expand_controls() -> str:
    """The two buttons (hidden until the script shows them)."""
    return (f'<p {MARKER} hidden style="display:none;margin:4px 0">'
            f'<button type="button" class="expand-all" style="{_BUTTON}">expand all</button>'
            f'<button type="button" class="collapse-all" style="{_BUTTON}">collapse all</button></p>')


_SCRIPT = """
(function () {
  function panels() { return document.querySelectorAll("table.note details"); }
  function setAll(open) { panels().forEach(function (d) { d.open = open; }); }
  document.querySelectorAll("p.expand-controls").forEach(function (p) {
    p.hidden = false; p.style.display = "";
    p.querySelector(".expand-all").addEventListener("click", function () { setAll(true); });
    p.querySelector(".collapse-all").addEventListener("click", function () { setAll(false); });
  });
  function openTarget() {  /* page.html#p5 opens finding 5 */
    var id, d;
    try { id = decodeURIComponent(window.location.hash.slice(1)); } catch (e) { return; }
    d = id && document.getElementById(id);
    if (d && d.tagName === "DETAILS") { d.open = true; d.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
"""


def expand_script() -> str:
    """The ``<script>`` behind the buttons and the opened link target."""
    return f"<script>{_SCRIPT}</script>"
