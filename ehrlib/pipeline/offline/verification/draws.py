"""Which rows a stated value is compared with when the note itself times it more finely
than the statement's window: the draw a results record's stamp names, and the earlier
values of a series the note writes in order (:mod:`.numbers` uses both).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.pipeline.offline.results_blocks import block_stamp, in_aside
from ehrlib.pipeline.offline.statement_time import stamp_clock
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.windows import parse_time, widened_back

__all__ = ["series_rows", "at_stamp", "masked_draw", "block_clock"]

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


def _at_clock(rows: Rows, clock: tuple[int, int]) -> Rows:
    want = clock[0] * 60 + clock[1]
    at: Rows = []
    for r in rows:
        t = parse_time(r.get("time"))
        if t is not None and min(abs(t.hour * 60 + t.minute - want), 1440 - abs(t.hour * 60 + t.minute - want)) \
                <= _STAMP_SLACK_MIN:
            at.append(r)
    return at


#: a results record whose stamp's date is de-identified (``___ 02:52AM BLOOD ...``)
_MASKED_STAMP = re.compile(r"\s*(?:[A-Z][A-Z ()]{2,40}\s+)?_{2,}\s+\d{1,2}:\d{2}")


def masked_draw(c: Case) -> Rows:
    """The rows of the draw a results record names when its date is de-identified: the item's
    numeric rows at the stamp's clock time on any day of the stay (the line may report a
    draw from the stay's last day under an admission heading); empty for any other line.
    """
    line = c.line()
    clock = stamp_clock(line) if line is not None else None
    if clock is None or line is None or not _MASKED_STAMP.match(line):
        return []
    stay = [r for k in c.keys()[:6] for r in c.session.rows(k, None)[1] if r.get("valuenum") is not None]
    return _at_clock(stay, clock)


def block_clock(c: Case) -> tuple[int, int] | None:
    """The clock of the results block's stamp that dates the statement (``Labs (0453):`` over
    its indented lines, :mod:`..results_blocks`); None when the statement is in no block,
    the stamp writes no clock, or the statement has a time of its own words.
    """
    line, span = c.line(), c.entity.span
    stamp = block_stamp(c.ctx.lines, c.entity.line) if line is not None else None
    if stamp is None or stamp.clock is None or line is None or span is None or in_aside(line, span[0]):
        return None  # a value in an aside ("WBC 8.2 (from 7.0)") is another draw's
    own = c.entity.time_text
    written = c.ctx.lines[stamp.line][stamp.span[0]:stamp.span[1]]
    return stamp.clock if own is None or own.strip() in written else None


def at_stamp(c: Case, numeric: Rows) -> Rows:
    """The rows of the draw a results record's stamp names (:func:`.statement_time.stamp_clock`,
    ``___ 11:34PM BLOOD K-5.3``) or the stamp heading its results block (:func:`block_clock`):
    those charted at its clock time on any day of the stay when the date is de-identified
    (:func:`masked_draw`: a wrong day's draw at that clock is no evidence against it), else
    on any day of the window; all of ``numeric`` when the line has no stamp or no row of
    the item is at that clock.
    """
    line = c.line()
    clock = stamp_clock(line) if line is not None else None
    if clock is None:
        clock = block_clock(c)
        return numeric if clock is None else _at_clock(numeric, clock) or numeric
    return masked_draw(c) or _at_clock(numeric, clock) or numeric
