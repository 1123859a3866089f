"""The part of a day or the ongoing state an event statement is told in ("this AM",
"yesterday evening", "remains intubated"): the time words the event rules and the culture
collection rule read.
"""
from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta

from ehrlib.pipeline.offline.verification.clocktime import parse_clock
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import parse_time

__all__ = ["stated_day_part", "ongoing_state", "bounds_dwell"]


@functools.cache
def _day_parts() -> tuple[tuple[re.Pattern[str], float, float], ...]:
    return tuple((re.compile(k, re.I), float(v[0]), float(v[1])) for k, v in terms()["day_parts"].items())


def _day_part(time_text: str | None, window_end: str | None) -> tuple[datetime, datetime, str] | None:
    """(from, to, words) of the part of the stated day a time expression names ("this AM",
    "yesterday morning"); the stated day is the last day of the statement's window.
    """
    end = parse_time(window_end)
    if not time_text or end is None or parse_clock(time_text) is not None:
        return None
    day = datetime(end.year, end.month, end.day)
    for pat, lo, hi in _day_parts():
        m = pat.search(time_text)
        if m:
            slack = timedelta(hours=float(terms()["day_part_tolerance_hours"]))
            return day + timedelta(hours=lo) - slack, day + timedelta(hours=hi) + slack, m.group(0)
    return None


#: a preposition that makes a date a bound of the dwell ("until", "since")
_BOUND = re.compile(r"\b(?:until|till|through|thru|to|since|from|after|before)\s*$", re.I)


#: words saying a device's dwell goes on ("remained intubated", "still intubated"), and a time
#: word of the present ("intubated, now septic"): the state is dated, not its start or end
_ONGOING = re.compile(r"\b(?:remain(?:s|ed)?|still|stay(?:s|ed)?|kept|continues\s+to\s+be)\s+$", re.I)
_PRESENT = re.compile(r"^(?:now|currently|at\s+present)$", re.I)


def ongoing_state(c: Case) -> bool:
    """Whether the statement describes the device's dwell going on rather than an edge of it:
    an ongoing-state word right before the name, or a time of the present.
    """
    e = c.entity
    if _PRESENT.match((e.time_text or "").strip()):
        return True
    lines = getattr(c.ctx, "lines", ()) or ()
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    return e.span is not None and bool(_ONGOING.search(line[max(0, e.span[0] - 25):e.span[0]]))


def _words_before_time(c: Case) -> str:
    """The line's words right before the statement's time expression."""
    e = c.entity
    lines = getattr(c.ctx, "lines", ()) or ()
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    at = line.find(e.time_text or "", e.span[0] if e.span else 0)
    return line[max(0, at - 12):at].replace("`", "").rstrip(" [*") if at >= 0 else ""


def _time_words(c: Case) -> str | None:
    """The statement's time expression with the day-part word written right after it
    ("yesterday" + "morning": the day resolves the date, the part the hours).
    """
    e = c.entity
    if not e.time_text:
        return None
    lines = getattr(c.ctx, "lines", ()) or ()
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    at = line.find(e.time_text, e.span[0] if e.span else 0)
    if at < 0:
        return e.time_text
    nxt = re.match(r"\s+(?:in\s+the\s+)?([A-Za-z]+)", line[at + len(e.time_text):])
    return f"{e.time_text} {nxt.group(1)}" if nxt else e.time_text


def stated_day_part(c: Case) -> tuple[datetime, datetime, str] | None:
    """(from, to, words) of the part of the day a statement is dated by ("sent this AM",
    "yesterday morning"), with the day-part tolerance; None without one.
    """
    e = c.entity
    return None if e.window is None else _day_part(_time_words(c), e.window.end)


def bounds_dwell(c: Case) -> bool:
    """Whether the statement's date follows "until", "since", "from" ...: it bounds a dwell
    ("intubated until 11-1"), not an edge of it.
    """
    return bool(_BOUND.search(_words_before_time(c)))
