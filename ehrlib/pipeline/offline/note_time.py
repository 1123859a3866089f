"""The note's own time: what a statement in a progress or nursing note can be judged on.

A note is written at some moment and can only report what was charted up to then. A
statement of a physician, nursing or radiology note is therefore judged only on rows
charted up to the note's **cutoff**: its ``charttime`` plus :data:`CHARTING_SLACK`, or the
end of its chart date when it has no clock time. Two exceptions keep their own window:

* a discharge summary looks back on the whole stay (its window is the hospitalization);
* a statement that itself names a time after the note's ("tomorrow", a date or clock time
  past the cutoff) is about that time: ``time_basis = "later_time"``.

Parts of a day are resolved here too, against the note's moment: "this shift" is the
nursing shift that ends at the note (:data:`SHIFT` before it), "overnight" the previous
evening to the morning, "this morning/afternoon/evening" their hours of the note's day
(``verification_terms.yaml``: ``parts_of_day``), "since midnight" the note's day up to the
note. :func:`settle` applies all of it once to every entity, whatever extracted it, and
records how the window was resolved (:data:`ehrlib.corpus.records.TIME_BASES`).
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ehrlib.corpus.records import TimeBasis, TimeSpan
from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.timex import CLOCK_SPAN, clock_span, fmt, parse_datetime
from ehrlib.pipeline.records import Entity, Segment

if TYPE_CHECKING:
    from ehrlib.pipeline.stages import NoteContext

__all__ = ["CHARTING_SLACK", "SHIFT", "PART_TOLERANCE", "NoteTime", "note_time", "note_time_of", "part_of_day_span",
           "is_shift",
           "time_basis", "settle", "clipped", "is_clock_span", "until_cutoff", "judged_part", "judged_until"]

#: how long after a note's ``charttime`` a row may still be one the note saw: a value read at
#: the bedside is often charted a little after the note is signed, and the note's stamp is
#: itself rounded; an hour covers that without reaching the next draw of a routine lab
CHARTING_SLACK = timedelta(minutes=60)
#: a nursing shift ("this shift", "during my shift"): the twelve hours that end at the note
SHIFT = timedelta(hours=12)
#: a part of the day is met by rows within this of its hours (point-charted rows record the
#: hour's amount at its end): the verification's clock tolerance
PART_TOLERANCE = timedelta(hours=2)

_LATER = re.compile(r"\b(?:tomorrow|tmrw|tomorow|later\s+today|next\s+(?:week|day|am|morning)|in\s+the\s+am\b|"
                    r"(?:on|in)\s+\d+\s+days?|plan(?:ned)?\s+for|scheduled\s+for)\b", re.I)
_SHIFT = re.compile(r"^(?:this|my|during\s+(?:this|my|the))\s+shift$|^(?:on|over)\s+(?:this|my)\s+shift$"
                    r"|^(?:for\s+(?:the\s+)?|on\s+)shift$", re.I)
_SINCE_MIDNIGHT = re.compile(r"^(?:since|after)\s+(?:midnight|MN|12\s*am)$", re.I)
_DATE = re.compile(r"\[\*\*|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/-]\d{1,2}\b")
_CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\b(?:[01]\d|2[0-3])[0-5]\d\b|\b\d{1,2}\s*[ap]\.?m\b", re.I)


@dataclass(frozen=True, slots=True)
class NoteTime:
    """When a note was written: its clock time if charted, else only its day."""

    note_type: str
    #: the note's charttime (None: only a chart date is known)
    moment: datetime | None
    #: midnight of the note's chart date
    day: datetime | None
    slack: timedelta = CHARTING_SLACK
    #: the admission (admittime, dischtime), to tell a summary's day markers from its default
    stay: TimeSpan | None = None

    @property
    def cutoff(self) -> datetime | None:
        """The last moment a row may be charted and still judge the note's statements, or
        None (a discharge summary, or a note with no date at all).
        """
        if self.note_type == "discharge_summary":
            return None
        if self.moment is not None:
            return self.moment + self.slack
        if self.day is not None:
            return self.day + timedelta(days=1) - timedelta(seconds=1)
        return None


def note_time(note_type: str, charttime: str | None, chartdate: str | None,
              slack: timedelta = CHARTING_SLACK, stay: TimeSpan | None = None) -> NoteTime:
    """A :class:`NoteTime` from a note's stamps. A charttime of exactly midnight is read as
    a date only (MIMIC writes date-only notes with a 00:00:00 time).
    """
    moment = parse_datetime(charttime) if charttime and len(charttime.strip()) > 10 else None
    if moment is not None and moment.hour == moment.minute == moment.second == 0:
        moment = None
    day = parse_datetime((chartdate or charttime or "")[:10] or None)
    if day is None and moment is not None:
        day = datetime(moment.year, moment.month, moment.day)
    return NoteTime(note_type, moment, day, slack, stay)


def note_time_of(ctx: NoteContext, slack: timedelta = CHARTING_SLACK) -> NoteTime:
    """The :class:`NoteTime` of a note under inspection."""
    return note_time(ctx.note_type, ctx.note.charttime, ctx.chartdate or ctx.note.chartdate, slack, ctx.admission)


def _phrase(text: str | None) -> str:
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def is_shift(text: str | None) -> bool:
    """Whether a time expression names the nursing shift ("this shift", "for the shift")."""
    return bool(_SHIFT.match(_phrase(text)))


def part_of_day_span(text: str | None, nt: NoteTime) -> tuple[datetime, datetime] | None:
    """The hours a part-of-day phrase spans for this note (the whole time expression must be
    that phrase), or None. "this shift" needs the note's clock time; without it the note's
    day stands for the shift. A discharge summary's part of a day belongs to the day its
    narrative is at, which the time resolver has already dated (.stay_anchors): None.
    """
    phrase = _phrase(text)
    if nt.day is None or not phrase or nt.note_type == "discharge_summary":
        return None
    end_of_day = nt.day + timedelta(days=1) - timedelta(seconds=1)
    if _SHIFT.match(phrase):
        return (nt.moment - SHIFT, nt.moment) if nt.moment is not None else (nt.day, end_of_day)
    if _SINCE_MIDNIGHT.match(phrase):
        return nt.day, nt.moment or end_of_day
    if (m := CLOCK_SPAN.fullmatch(phrase)) is not None:  # "2000-0600": the one the time tagger reads
        return clock_span(m, nt.moment or nt.day, nt.slack)
    for pattern, (first, last) in load_data("verification_terms.yaml").get("parts_of_day", {}).items():
        if re.fullmatch(pattern, phrase):
            return nt.day + timedelta(hours=float(first)), nt.day + timedelta(hours=float(last))
    return None


def is_clock_span(text: str | None) -> bool:
    """Whether a time expression is a span between two clock times ("2000-0600"): it names the
    flowsheet columns from its first hour to its last, both included.
    """
    return CLOCK_SPAN.fullmatch(_phrase(text)) is not None


def clipped(window: TimeSpan, cutoff: datetime | None) -> TimeSpan:
    """``window`` ending no later than ``cutoff`` (an open or earlier end is kept)."""
    end = parse_datetime(window.end) if window.end else None
    if cutoff is None or (end is not None and end <= cutoff):
        return window
    return TimeSpan(window.start, fmt(cutoff))


def _stated_clock(text: str, day: datetime) -> datetime | None:
    """The moment a dated clock time names ("[**2130-1-12**] 23:30", "1/12 at 11pm") on ``day``."""
    m = _CLOCK.search(_DATE.sub(" ", text))
    if m is None:
        return None
    digits = re.sub(r"\D", "", m.group(0))
    hour, minute = (int(digits[:-2]), int(digits[-2:])) if len(digits) >= 3 else (int(digits), 0)
    if re.search(r"p\.?m", m.group(0), re.I) and hour < 12:
        hour += 12
    if re.search(r"a\.?m", m.group(0), re.I) and hour == 12:
        hour = 0
    return day.replace(hour=hour, minute=minute) if hour < 24 and minute < 60 else None


def _names_later(text: str | None, window: TimeSpan | None, nt: NoteTime) -> bool:
    """Whether the statement's own time lies after the note's: a later-day word, a window
    that starts after the cutoff, a written date after the note's day, or a date whose stated
    clock time is past the cutoff (a date's window is its whole day, so the clock decides).
    """
    if text and _LATER.search(text):
        return True
    start = parse_datetime(window.start) if window is not None and window.start else None
    cutoff = nt.cutoff
    if cutoff is None or start is None:
        return False
    if start > cutoff:
        return True
    if not (text and _DATE.search(text)):
        return False
    if nt.day is not None and start.date() > nt.day.date():
        return True
    moment = _stated_clock(text, start)
    return moment is not None and moment > cutoff


def time_basis(entity: Entity, nt: NoteTime, segment: Segment | None) -> TimeBasis:
    """How the entity's window was resolved, from its time words and its segment."""
    text = entity.time_text
    if _names_later(text, entity.window, nt):
        return "later_time"
    if text:
        if part_of_day_span(text, nt) is not None:
            return "part_of_day"
        if _DATE.search(text):
            return "explicit_time" if _CLOCK.search(_DATE.sub(" ", text)) else "explicit_date"
        if _CLOCK.search(text):
            return "explicit_time"
        return "relative_day"
    seg_window = segment.default_window if segment is not None else None
    if seg_window is not None and entity.window is not None and entity.window != seg_window:
        return "relative_day"  # a presentation's day, a series reaching back (extract.py)
    lo, hi = (parse_datetime(seg_window.start or ""), parse_datetime(seg_window.end or "")) if seg_window else (None,
                                                                                                             None)
    if nt.note_type == "discharge_summary":
        # a summary's day marker ("HD 3:", "[**10-23**]:") gives its segment days, not the whole stay
        a, b = (parse_datetime(nt.stay.start or ""), parse_datetime(nt.stay.end or "")) if nt.stay else (None, None)
        shorter = lo and hi and a and b and (hi - lo) + timedelta(hours=12) < b - a
        return "section_default" if shorter else "hospitalization"
    if nt.day is not None:
        if (lo is not None and lo > nt.day + timedelta(days=1)) or (hi is not None and hi < nt.day - timedelta(days=1)):
            return "section_default"  # a day marker's or a results heading's own day
    return "note_day"


def settle(entity: Entity, nt: NoteTime, segment: Segment | None) -> Entity:
    """The entity with its time basis recorded and its window judged up to the note's time:
    a part of the day starting at its first hour, and every window but a discharge summary's
    or a later time's ending at the note's cutoff.
    """
    basis = time_basis(entity, nt, segment)
    window = entity.window
    if window is not None and window.end and len(window.end.strip()) == 10:  # a bare date ends with its day
        window = TimeSpan(window.start, f"{window.end.strip()} 23:59:59")
    if window is not None and basis != "later_time":
        if basis == "part_of_day" and (part := part_of_day_span(entity.time_text, nt)) is not None:
            # from the part's start to the note: a value told for the morning is often resulted
            # and charted later in the day, and the annotation reads it so
            window = TimeSpan(fmt(part[0] - PART_TOLERANCE), window.end)
        window = clipped(window, nt.cutoff)
    return dataclasses.replace(entity, window=window, time_basis=basis)


def until_cutoff(rows: Iterable[Mapping[str, Any]], nt: NoteTime) -> list[Mapping[str, Any]]:
    """The rows charted up to the note's cutoff (time-less rows belong to the admission)."""
    cutoff = nt.cutoff
    out = []
    for r in rows:
        t = parse_datetime(str(r.get("time"))) if r.get("time") else None
        if cutoff is None or t is None or t <= cutoff:
            out.append(r)
    return out


def judged_until(ctx: NoteContext) -> datetime | None:
    """The note's cutoff (:attr:`NoteTime.cutoff`) for a rule that builds its own span."""
    return note_time_of(ctx).cutoff


def judged_part(text: str | None, ctx: NoteContext) -> tuple[datetime, datetime] | None:
    """:func:`part_of_day_span` for a rule that widens the span by :data:`PART_TOLERANCE`
    itself: its end is pulled back so the widened span still ends at the note's cutoff (a
    part that starts after the cutoff is a later time and is kept whole).
    """
    nt = note_time_of(ctx)
    span = part_of_day_span(text, nt)
    if span is None or nt.cutoff is None:
        return span
    last = nt.cutoff - PART_TOLERANCE
    return (span[0], min(span[1], last)) if last > span[0] else span
