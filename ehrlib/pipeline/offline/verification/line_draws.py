"""A results line reports one draw: the draw that dates a line whose window its values miss.

A writer copies a line of results from one draw ("WBC 6.9 Hgb 9.9 Hct 35.2 Plt 373"). When
the statement's window was inferred (the note's day, a section's default, the stay), not
written, and two or more values of the line miss it, but every one of them is charted at
one draw of the admission a day around that window, the window is what was wrong, not the
values: the line is dated by that draw. Values of the line that met the window must agree
with the draw too (or have no row at it); when the values split between draws, or only
one value misses the window, nothing changes and the window decides as before.

A draw is one charttime of one table (a laboratory panel's results share their time). A
line whose stamp names its draw (a results record, a results block's clock) is left to
that stamp (:mod:`.draws`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.clauses import mask_parentheticals
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.statement_time import stamp_clock
from ehrlib.pipeline.offline.timex import widen
from ehrlib.pipeline.offline.verification.deciding import time_distance
from ehrlib.pipeline.offline.verification.draws import block_clock
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.stated import stated_numbers
from ehrlib.pipeline.offline.verification.terms import tolerance_of
from ehrlib.pipeline.offline.verification.values import value_matches
from ehrlib.pipeline.offline.verification.windows import in_window

__all__ = ["Draw", "line_draw", "RULE"]

Rows = list[Mapping[str, Any]]

#: the bases of a window the note did not write: the line's time was inferred, so it may be wrong
_INFERRED = (None, "note_day", "section_default", "hospitalization")
#: how far around an inferred window the line's draw may lie (days)
_REACH = 1.0
#: one result of a line: a name and its value ("Hgb 9.9", "Hct: 35.2*", "Plt-373")
_RESULT = re.compile(r"(?<![\w/.\-])(?P<name>[A-Za-z][A-Za-z0-9]*)\s*[:=\-]?\s*(?P<v>" + NUMBER + r")\*?"
                     r"(?![\w/]|\.\d)")
#: at most this many results of a line are looked up (each is one item history)
_MAX_RESULTS = 12


@dataclass(frozen=True, slots=True)
class Draw:
    """The draw that dates a results line: its time, and the statement's rows at it."""

    time: str
    rows: Rows
    missed: int  # how many values of the line miss the window (the statement's included)


@dataclass(frozen=True, slots=True)
class _Result:
    value: float
    tol: float
    rows: Rows  # the item's rows a day around the window


def _key_time(r: Mapping[str, Any]) -> tuple[str, str]:
    return str(r.get("table")), str(r.get("time") or "")[:16]


def _meets(rows: Rows, value: float, tol: float) -> Rows:
    return [r for r in rows if r.get("valuenum") is not None and value_matches(value, float(r["valuenum"]), tol)]


def _siblings(c: Case, reach: TimeSpan) -> list[_Result]:
    """The other results of the statement's line whose name is a measurement the patient has
    items of, with their rows over ``reach``.
    """
    e, line, lex = c.entity, mask_parentheticals(c.line() or ""), load_lexicon()  # an aside is another time's
    ctx = c.ctx
    labels = list(zip((it.label for it in ctx.patient_items), ctx.patient_item_keys, strict=False))
    out: list[_Result] = []
    for m in _RESULT.finditer(line):
        if e.span is not None and e.span[0] <= m.start() < e.span[1]:
            continue  # the statement itself (its span is its name, or its name and value)
        concept = next((k for k in lex.concepts_for(m.group("name")) if k.kind == "measurement" and k.items), None)
        if concept is None or concept.items is None:
            continue
        keys = [k for label, k in labels if k and concept.items.search(str(label))][:3]
        if not keys:
            continue
        rows = [r for k in keys for r in c.session.rows(k, reach)[0] if r.get("valuenum") is not None]
        out.append(_Result(float(m.group("v")), tolerance_of(concept), rows))
        if len(out) >= _MAX_RESULTS:
            break
    return out


def line_draw(c: Case, tol: float) -> Draw | None:
    """The one draw that dates the statement's results line (see the module docstring), or
    None. The statement must state one plain value (``tol`` its tolerance) that its window's
    rows miss.
    """
    e, n = c.entity, c.claim_as(NumericClaim)
    line = c.line()
    numbers = stated_numbers(n)
    if (line is None or e.window is None or e.time_basis not in _INFERRED or len(numbers) != 1
            or numbers[0][0] != "value" or numbers[0][2] is not None or n.trend is not None
            or stamp_clock(line) is not None or block_clock(c) is not None):
        return None
    value = numbers[0][1]
    reach = widen(e.window, _REACH)
    own = [r for k in c.keys()[:6] for r in c.session.rows(k, reach)[0] if r.get("valuenum") is not None]
    if _meets([r for r in own if in_window(r, e.window)], value, tol):
        return None
    siblings = _siblings(c, reach)
    missing = [s for s in siblings if not _meets([r for r in s.rows if in_window(r, e.window)], s.value, s.tol)]
    if not missing:
        return None  # only this value misses the window: a wrong value, not a wrong time
    met = [s for s in siblings if s not in missing]
    draws: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in _meets(own, value, tol):
        draws.setdefault(_key_time(r), r)
    for draw, first in sorted(draws.items(), key=lambda kv: time_distance(kv[1], e.window)):  # nearest first
        def at(rows: Sequence[Mapping[str, Any]]) -> Rows:
            return [r for r in rows if _key_time(r) == draw]  # noqa: B023  # the draw of this turn
        if all(_meets(at(s.rows), s.value, s.tol) for s in missing) \
                and all(not at(s.rows) or _meets(at(s.rows), s.value, s.tol) for s in met):
            return Draw(draw[1], [first], len(missing) + 1)
    return None


RULE = Rule("time.line_draw", "A results line reports one draw: when two or more of its values miss an inferred "
            "window but all are charted at one draw within a day of it (the line's other values agreeing with that "
            "draw or absent from it), the line is dated by that draw; values split between draws change nothing.",
            line_draw)
