"""Which moment of the stay a relative phrase counts from, when the stay has several.

The table anchors give one time per name (the admission, the first ICU stay, the first
operation). A phrase often means another one:

* **Narrative dates.** A discharge summary tells the stay day by day: "overnight", "that
  morning", "at 2300" count from the latest date written before them in the paragraph, not
  from the day the summary was written; with no such date they name no day (the statement
  keeps the stay's window). A paragraph's date does not carry into the next paragraph.
* **ICU stays.** "in the ICU" is the time spent there, not the day of arrival; "on arrival
  to the ICU" is the start of the stay the text is at: the one holding (or last started
  before) the narrative's latest date, or, in a progress or nursing note, the one started
  last by the note's day.
* **Arrival.** In a progress or nursing note a bare "on arrival" is the patient's latest
  arrival by the note's day (the admission, or a later transfer to the unit): a note written
  in the unit after an operation means arrival to the unit, not to the hospital.

Pure functions over the resolved references and the stays' spans.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.records import TimeRef

__all__ = ["latest_before", "narrative_day", "stay_at", "stays_span", "latest_arrival", "stay_phrases",
           "NARRATIVE_RULE", "ICU_RULE", "ARRIVAL_RULE"]

#: "on arrival to the SICU": read before the admission's "on arrival", which would take its first words
_ICU_ARRIVAL = re.compile(r"\b(?:on|upon)\s+(?:arrival|transfer|admission)\s+to\s+the\s+(?:M|S|CV|T|CC)?ICU\b", re.I)
_IN_ICU = re.compile(r"\bin\s+the\s+(?:M|S|CV|T|CC)?ICU\b", re.I)
#: a bare arrival; one to the ED or the hospital is the admission's
_ARRIVAL = re.compile(r"\b(?:on|at|upon)\s+arrival\b"
                      r"(?!\s+(?:to|in|at)\s+(?:the\s+)?(?:ED|ER|emergency|hospital|floor))", re.I)


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.strip().replace("T", " "))
    except ValueError:
        return None


def latest_before(refs: Sequence[TimeRef], pos: int) -> TimeRef | None:
    """The reference of ``refs`` that ends last before ``pos``."""
    before = [r for r in refs if r.span is not None and r.span[1] <= pos]
    return max(before, key=lambda r: r.span or (0, 0)) if before else None


def narrative_day(dated: Sequence[TimeRef], pos: int) -> datetime | None:
    """The day of the latest date written before ``pos`` (``dated``: the text's explicit
    dates), or None when none is.
    """
    last = latest_before(dated, pos)
    return _moment(last.window.start) if last is not None else None


def stay_at(stays: Sequence[TimeSpan], when: datetime | None) -> TimeSpan | None:
    """The stay holding the day of ``when``, else the one started last by the end of that
    day; None without ``when`` or when every stay starts later.
    """
    if when is None:
        return None
    day_start = datetime(when.year, when.month, when.day)
    day_end = day_start + timedelta(days=1)
    started = [s for s in stays if (a := _moment(s.start)) is not None and a < day_end]
    holding = [s for s in started if (b := _moment(s.end)) is None or b >= day_start]
    pool = holding or started
    return max(pool, key=lambda s: s.start or "") if pool else None


def stays_span(stays: Sequence[TimeSpan]) -> TimeSpan | None:
    """From the first stay's start to the last one's end (None without stays)."""
    starts = [s.start for s in stays if s.start]
    ends = [s.end for s in stays if s.end]
    if not starts:
        return None
    return TimeSpan(min(starts), max(ends) if ends else None)


def latest_arrival(admission: datetime | None, stays: Sequence[TimeSpan], by: datetime) -> datetime | None:
    """The latest of the admission and the ICU stays' starts that is not after ``by``."""
    moments = [t for t in (admission, *(_moment(s.start) for s in stays)) if t is not None and t <= by]
    return max(moments) if moments else admission


Found = list[tuple[re.Match[str], TimeSpan, str]]


def stay_phrases(text: str, stays: Sequence[TimeSpan], day_at: Callable[[int], datetime | None],
                 first_icu: datetime | None, widened: Callable[[datetime], TimeSpan], *, narrative: bool,
                 admission: datetime | None, by: datetime) -> Found:
    """(match, window, anchor name) of every ICU and arrival phrase of ``text``.

    ``day_at(pos)`` is the day the text is at there (the note's, or in a ``narrative`` the
    latest written date; None: unknown); ``widened`` turns a moment into its anchor window.
    Outside a narrative a bare "on arrival" is the latest arrival by ``by``. With no stays,
    ``first_icu`` stands for them.
    """
    out: Found = []
    for m in _ICU_ARRIVAL.finditer(text):
        stay = stay_at(stays, day_at(m.start()))
        start = _moment(stay.start) if stay is not None else first_icu
        if start is not None:
            out.append((m, widened(start), "icu_admission"))
    for m in _IN_ICU.finditer(text):
        # the time spent in the unit: the stay the text is at; in a narrative with no day, every stay
        stay = stay_at(stays, day_at(m.start())) or (stays_span(stays) if narrative else None)
        window = stay if stay is not None else widened(first_icu) if first_icu is not None else None
        if window is not None:
            out.append((m, window, "icu_admission"))
    if not narrative and admission is not None:
        arrived = latest_arrival(admission, stays, by) or admission
        out += [(m, widened(arrived), "admission" if arrived == admission else "icu_admission")
                for m in _ARRIVAL.finditer(text)]
    return out


NARRATIVE_RULE = Rule("time.narrative_anchor", "In a discharge summary a relative day, part of the day or clock time "
                      "counts from the latest date written before it in its paragraph; with none it names no day and "
                      "the statement keeps the stay.", narrative_day)
ICU_RULE = Rule("time.icu_stay", "'In the ICU' is the stay in the unit, not its first day; 'on arrival to the ICU' is "
                "the start of the stay the text is at (the narrative's date, or the note's day).", stay_at)
ARRIVAL_RULE = Rule("time.latest_arrival", "In a progress or nursing note a bare 'on arrival' is the latest arrival "
                    "by the note's day: the admission or a later transfer to the unit.", latest_arrival)
