"""Clock-time precision for start/stop statements ("levo started at 0300", "off propofol
since 0400", "heparin resumed ~1600", "CVL placed ~9pm").

A clock time is a claim to the hour, not to the day: a row anywhere in the day must not
confirm it. The rules:

* **Tolerance**: an explicit clock time is met within ±2 h, an approximate one ("~",
  "around", "approx") within ±3 h; 12-hour times honour AM/PM (12 AM = 00h).
* **Candidate moments**: the clock time on every calendar day of the entity's window (a
  night-shift note's "at 2300" may be the evening before its date).
* **Runs, not rows**: MIMIC splits one infusion into a row per rate change, so a row's
  start or end is not the infusion's. Rows of one item whose intervals touch (gap
  ≤ 1 h) form a run; "started" compares run starts, "stopped/off" run ends.
* **Date-only rows** (prescriptions: midnight start dates) cannot confirm a clock time
  when timed rows exist; alone they confirm only the date.
* **Parts of day** ("overnight", "this afternoon") are hour spans of the note's day
  (``verification_terms.yaml``), met by a timed row overlapping them give or take two hours
  of charting delay, the clock tolerance (:func:`ehrlib.pipeline.offline.note_time.judged_part`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.note_time import PART_TOLERANCE
from ehrlib.pipeline.offline.timex import clock_of, parse_datetime

__all__ = ["ClockClaim", "parse_clock", "clock_moments", "infusion_runs", "edge_matches", "ran_before", "RUN_GAP",
           "timed_within", "is_timed"]

#: rows of one item closer than this are one administration (rate changes, bag changes)
RUN_GAP = timedelta(hours=1)
#: how far a charted administration may be from the part of day it was given in (the clock
#: tolerance: point-charted rows record the hour's amount at its end)
CHARTING_DELAY = PART_TOLERANCE

_CLOCK_TEXT = re.compile(
    r"(?P<approx>~|\bapprox(?:\.|imately)?\s*|\baround\s+|\babout\s+|\bca\.?\s*)?"
    r"(?<![\d.:/\-])(?:(?P<hh>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)|(?P<hh4>[01]\d|2[0-3])(?P<mi4>[0-5]\d)"
    r"|(?P<h12>1[0-2]|0?[1-9])(?=\s*[ap]\.?m\b))"
    r"\s*(?P<ampm>[ap]\.?m\b\.?)?(?![\d/]|-\d)", re.I)  # never a year: [**2155-01-02**]


@dataclass(frozen=True, slots=True)
class ClockClaim:
    """A stated clock time: 24-hour ``hour``/``minute`` and whether it was approximate."""

    hour: int
    minute: int
    approx: bool

    @property
    def tolerance(self) -> timedelta:
        """How far a charted time may be from the stated one: 2 h, 3 h when approximate."""
        return timedelta(hours=3 if self.approx else 2)


def parse_clock(text: str | None) -> ClockClaim | None:
    """The first clock time of a time expression ("at 0700", "~9pm", "10:51PM"), or None."""
    if not text:
        return None
    m = _CLOCK_TEXT.search(text)
    if m is None:
        return None
    hour, minute = clock_of(m)
    return ClockClaim(hour, minute, bool(m.group("approx")))


def clock_moments(claim: ClockClaim, window: TimeSpan | None) -> list[datetime]:
    """The clock time on each calendar day the window touches (within tolerance of it)."""
    if window is None:
        return []
    a, b = parse_datetime(window.start or ""), parse_datetime(window.end or "")
    if a is None or b is None:
        return []
    out: list[datetime] = []
    day = datetime(a.year, a.month, a.day)
    while day <= b:
        moment = day.replace(hour=claim.hour, minute=claim.minute)
        if a - claim.tolerance <= moment <= b + claim.tolerance:
            out.append(moment)
        day += timedelta(days=1)
    return out


def is_timed(row: Mapping[str, Any]) -> bool:
    """Whether a row carries a time of day (not a prescription's midnight date)."""
    t = parse_datetime(str(row.get("time") or ""))
    if t is None:
        return False
    return not (str(row.get("table")) == "prescriptions" or (t.hour == 0 and t.minute == 0 and t.second == 0
                                                             and not row.get("end")))


def infusion_runs(rows: Iterable[Mapping[str, Any]], merge: bool = True
                  ) -> list[tuple[datetime, datetime, list[Mapping[str, Any]]]]:
    """Timed rows merged per item into runs (gap ≤ :data:`RUN_GAP`), sorted by start;
    ``merge=False`` keeps each row its own event (procedures: two lines may overlap).
    """
    by_item: dict[str, list[tuple[datetime, datetime, Mapping[str, Any]]]] = {}
    for r in rows:
        if not is_timed(r):
            continue
        a = parse_datetime(str(r.get("time")))
        b = parse_datetime(str(r.get("end") or "")) or a
        if a is None or b is None:
            continue
        key = f"{r.get('table')}|{r.get('label') or r.get('item') or ''}"
        by_item.setdefault(key, []).append((a, max(a, b), r))
    runs: list[tuple[datetime, datetime, list[Mapping[str, Any]]]] = []
    for items in by_item.values():
        items.sort(key=lambda x: x[0])
        cur: list[Any] | None = None
        for a, b, r in items:
            if merge and cur is not None and a <= cur[1] + RUN_GAP:
                cur[1] = max(cur[1], b)
                cur[2].append(r)
            else:
                if cur is not None:
                    runs.append((cur[0], cur[1], cur[2]))
                cur = [a, b, [r]]
        if cur is not None:
            runs.append((cur[0], cur[1], cur[2]))
    return sorted(runs, key=lambda x: x[0])


def edge_matches(claim: ClockClaim, window: TimeSpan | None, rows: Sequence[Mapping[str, Any]],
                 edge: str, merge: bool = True, final: bool = True) -> tuple[bool | None, list[Mapping[str, Any]], str]:
    """Whether some run of ``rows`` starts (edge="start") or ends (edge="end") at the stated clock time.

    ``final=False`` lets an end be followed by another run of ``rows`` (a rate left at a change
    may be charted again later); by default an end must be a stop nothing restarted after.
    Returns (verdict or None when no timed rows exist, evidence, detail).
    """
    runs = infusion_runs(rows, merge)
    if not runs:
        return None, [], "no timed rows"
    moments = clock_moments(claim, window)
    tol = claim.tolerance
    hits = [run for run in runs for m in moments
            if abs(((run[0] if edge == "start" else run[1]) - m).total_seconds()) <= tol.total_seconds()]
    if edge == "end" and final:
        # "off since 0400": nothing restarted after that stop within the window
        w_end = parse_datetime((window.end if window else None) or "") or datetime.max
        hits = [h for h in hits if not any(h[1] + RUN_GAP < run[0] <= w_end for run in runs)]
    if hits:
        run = hits[0]
        pair = run[2][:2] if edge == "start" else run[2][-2:]
        return True, pair, f"{edge} {_hm(run[0] if edge == 'start' else run[1])}"
    near = sorted(runs, key=lambda run: min((abs(((run[0] if edge == "start" else run[1]) - m).total_seconds())
                                             for m in moments), default=0.0))[:3]
    shown = ", ".join(_hm(run[0] if edge == "start" else run[1]) for run in near)
    return False, [r for run in near for r in run[2][:1]], f"recorded {edge}s {shown}"


def ran_before(claim: ClockClaim, window: TimeSpan | None, rows: Sequence[Mapping[str, Any]]
               ) -> tuple[bool | None, list[Mapping[str, Any]], str]:
    """Whether some timed row of ``rows`` began by the stated clock time (within its tolerance):
    a rate a change left or a stop ended ("0.14 -> 0.5 at 1335") ran before that time, however
    long before (a titration may take hours to get from one to the other).

    Returns (verdict or None when no timed rows or no moment exist, evidence, detail).
    """
    starts = sorted((t, r) for r in rows if is_timed(r) and (t := parse_datetime(str(r.get("time")))) is not None)
    moments = clock_moments(claim, window)
    if not starts or not moments:
        return None, [], "no timed rows"
    if starts[0][0] <= max(moments) + claim.tolerance:
        return True, [starts[0][1]], f"start {_hm(starts[0][0])}"
    return False, [r for _, r in starts[:2]], f"first recorded {_hm(starts[0][0])}"


def _hm(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")


def timed_within(rows: Iterable[Mapping[str, Any]], span: tuple[datetime, datetime]
                 ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(timed rows overlapping ``span`` widened by :data:`CHARTING_DELAY`, all timed rows)."""
    timed = [r for r in rows if is_timed(r)]
    a, b = span[0] - CHARTING_DELAY, span[1] + CHARTING_DELAY
    hits = []
    for r in timed:
        start = parse_datetime(str(r.get("time")))
        end = parse_datetime(str(r.get("end") or "")) or start
        if start is not None and end is not None and start <= b and end >= a:
            hits.append(r)
    return hits, timed
