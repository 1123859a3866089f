"""Which rows a stated value is compared with when the note itself times it more finely
than the statement's window: the draw a results record's stamp names, and the earlier
values of a series the note writes in order (:mod:`.numbers` uses both).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.pipeline.offline.statement_time import stamp_clock
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.windows import parse_time, widened_back

__all__ = ["series_rows", "at_stamp"]

Rows = list[Mapping[str, Any]]

#: a value followed by an arrow and a number ("0.9 -> 1.5"): an earlier value of a stated series
_SERIES_NEXT = re.compile(r"\s*\*?\s*(?:-+>|→|=>)\s*\(?\d")
#: how far before a statement's window an earlier value of its series may lie (days; as the trend rules)
_SERIES_LOOK_BACK = 3


def series_rows(c: Case) -> Rows | None:
    """"Lactate 0.9 -> 1.5 this AM": a value a later one follows in the note's own series was
    measured before it, so it is looked for from three days before the statement's window
    (the trend rules' look-back) to the window's end; None for any other value.
    """
    e, line = c.entity, c.line()
    if line is None or e.span is None or not _SERIES_NEXT.match(line, e.span[1]):
        return None
    back = widened_back(e.window, _SERIES_LOOK_BACK)
    return [r for k in c.keys()[:6] for r in c.session.rows(k, back)[0] if r.get("valuenum") is not None]


#: how far a row's charted clock time may lie from a results record's stamp (minutes)
_STAMP_SLACK_MIN = 5


def at_stamp(c: Case, numeric: Rows) -> Rows:
    """The rows of the draw a results record's stamp names (:func:`.statement_time.stamp_clock`,
    ``___ 11:34PM BLOOD K-5.3``): those charted at its clock time on any day of the window;
    all of ``numeric`` when the line has no stamp or no row of the item is at that clock.
    """
    line = c.line()
    clock = stamp_clock(line) if line is not None else None
    if clock is None:
        return numeric
    want = clock[0] * 60 + clock[1]
    at: Rows = []
    for r in numeric:
        t = parse_time(r.get("time"))
        if t is not None and min(abs(t.hour * 60 + t.minute - want), 1440 - abs(t.hour * 60 + t.minute - want)) \
                <= _STAMP_SLACK_MIN:
            at.append(r)
    return at or numeric
