"""The time inside the note's day that a finding is stated for.

Nursing and exam phrases date a state within the shift: "cough weak overnight, strong this
AM", "LS rhonchi -> clear at bases by 1900", "gag intact at 0800", "BS present since 0300".
The time words follow the state in its own phrase (up to the next comma, semicolon, period,
bracket or change of state), and they decide which chartings the state is compared with:

* a **part of the day** ("overnight", "this AM", "tonight"; ``verification_terms.yaml``
  ``parts_of_day``, the same hour spans the medication and procedure rules use) keeps the
  chartings inside its hours, give or take the charting delay;
* a **clock time** keeps, for each item, the charting nearest to it within three hours
  ("at 1400", "by 1900", "~0300"); after "since"/"after"/"from" the chartings from it to
  the day's end, after "until"/"before" those from the day's start to it.

The note's day is the protocol's default window (the note date). When the stated time keeps
no charting of an item, that item is judged on its whole window, as an undated state is.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ehrlib.pipeline.offline.finding_sites import STATE_CHANGE
from ehrlib.pipeline.offline.timex import parse_datetime
from ehrlib.pipeline.offline.verification.clocktime import CHARTING_DELAY, parse_clock
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.terms import terms

__all__ = ["NEAREST", "RowsOf", "at_stated_time", "stated_time", "rows_at", "timed_rows_of"]

Rows = list[Mapping[str, Any]]
RowsOf = list[tuple[str, Sequence[Mapping[str, Any]]]]

#: how far the charting nearest a stated clock time may be from it (flowsheets chart every 2-4 h)
NEAREST = timedelta(hours=3)
_END = re.compile(r"[,;.(]|" + STATE_CHANGE.pattern, re.I)
_BOUND = re.compile(r"(since|after|from|until|till|before)\b", re.I)


def stated_time(line: str | None, span: tuple[int, int] | None) -> str | None:
    """The time words of a finding's own phrase after its state ("overnight", "by 1900"),
    or None when it states no part of the day or clock time.
    """
    if not line or span is None:
        return None
    m = _END.search(line, span[1])
    own = line[span[0]:span[1]]
    inner = list(STATE_CHANGE.finditer(own))  # a statement spanning a change: its later state's words
    tail = own[inner[-1].end():] if inner else re.split(r"[,;]", own)[-1]
    tail += line[span[1]:m.start() if m else len(line)]
    for pattern in terms().get("parts_of_day", {}):
        if found := re.search(rf"\b{pattern}\b", tail, re.I):
            return found.group(0)
    clock = re.search(r"(?:\b(?:at|by|since|after|from|until|till|before|around)\s+)?~?\s*"
                      r"(?:\b(?:[01]\d|2[0-3])[0-5]\d\b|\b(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s*[ap]\.?m\b)", tail, re.I)
    return clock.group(0).strip() if clock else None


def _part_of_day(text: str, day: datetime) -> tuple[datetime, datetime] | None:
    for pattern, (first, last) in terms().get("parts_of_day", {}).items():
        if re.fullmatch(pattern, re.sub(r"\s+", " ", text.strip().lower())):
            return day + timedelta(hours=float(first)), day + timedelta(hours=float(last))
    return None


def rows_at(rows: Sequence[Mapping[str, Any]], when: str, day: str | None) -> Rows:
    """The rows of one item that the stated time ``when`` keeps on the note's ``day``."""
    ref = parse_datetime(day[:10]) if day else None
    if ref is None:
        return []
    midnight = datetime(ref.year, ref.month, ref.day)
    # a charting at midnight is a charting (clocktime.is_timed reads midnight as a date-only order)
    timed = [(t, r) for r in rows if (t := parse_datetime(str(r.get("time") or ""))) is not None]
    if (span := _part_of_day(when, midnight)) is not None:
        a, b = span[0] - CHARTING_DELAY, span[1] + CHARTING_DELAY
        return [r for t, r in timed if a <= t <= b]
    claim = parse_clock(when)
    if claim is None:
        return []
    moment = midnight.replace(hour=claim.hour, minute=claim.minute)
    if (bound := _BOUND.match(when)) is not None:
        after = bound.group(1).lower() in ("since", "after", "from")
        end = midnight + timedelta(days=1)
        return [r for t, r in timed if (moment - timedelta(hours=1) <= t < end if after else midnight <= t <= moment)]
    near = [(abs((t - moment).total_seconds()), t, r) for t, r in timed if abs(t - moment) <= NEAREST]
    if not near:
        return []
    best = min(near, key=lambda x: x[0])[1]
    return [r for _, t, r in near if t == best]


def timed_rows_of(line: str | None, span: tuple[int, int] | None, day: str | None,
                  rows_of: RowsOf) -> tuple[RowsOf, bool]:
    """(rows per item the statement is judged on, whether it states a time of its own): the
    rows its stated time keeps, per item, or the window's where it keeps none.
    """
    when = stated_time(line, span)
    if when is None:
        return rows_of, False
    return [(label, rows_at(rows, when, day) or rows) for label, rows in rows_of], True


def at_stated_time(c: Case, rows_of: RowsOf) -> tuple[RowsOf, bool]:
    """:func:`timed_rows_of` for a statement under verification, on its note's day (a
    discharge summary's parts of day name no one day).
    """
    day = None if c.ctx.note_type == "discharge_summary" else c.ctx.default_window().start
    return timed_rows_of(c.line(), c.entity.span, day, rows_of) if day else (rows_of, False)
