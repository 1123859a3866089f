"""Amounts stated per day: calendar-day sums, or the 24 hours that end at a timed note.

"UOP ~200 cc over 24h" / "100-350 cc per day" is met by a day's total of the item within
15 % (a stated daily range by most full days). A day is the calendar day, or, for a note
written at a known time, the 24 hours up to it (within 5 %): the ICU balance a morning note
reports runs from the last morning, which a calendar day cuts in two. The rows of the deciding
total come first in the evidence, the largest amounts first and at most
:data:`~.session.MAX_EVIDENCE` of them.

A total stated for part of a day ("490 cc since midnight", "UOP 935 cc for the shift",
"overnight") covers only that part, up to the note's time: it is met by the sum over exactly
that span, never compared with whole days. A total counted from an event the note does not
time ("410 cc after lasix") has no span the record can sum: it is left unverified.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.note_time import SHIFT, is_clock_span, is_shift, note_time_of, part_of_day_span
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import gap, num, span
from ehrlib.pipeline.offline.verification.session import MAX_EVIDENCE, Case, unverified, verdict
from ehrlib.pipeline.offline.verification.stated import stated_numbers
from ehrlib.pipeline.offline.verification.windows import parse_time
from ehrlib.pipeline.records import Verdict

__all__ = ["DAILY_TOTAL", "PART_TOTAL"]

Rows = list[Mapping[str, Any]]
_KINDS = ("measurement", "range", "output", "trend")
#: how far a stated amount may lie from the total of the 24 h that end at the note: that
#: total is the figure the flowsheet shows the writer, copied rather than estimated, so it
#: is held closer than a calendar day's (15 %), whose edges the note does not know
_NOTE_DAY_SLACK = 0.05


def _numeric(c: Case) -> Rows:
    return [r for r in c.item_rows()[0] if r.get("valuenum") is not None]


def _last_24h(numeric: Rows, window: TimeSpan | None) -> tuple[str, Rows] | None:
    """(label, rows) of the 24 hours that end at a timed window's end, or None for a window
    that ends at midnight (its last calendar day is that span already) or has no end.

    An ICU note totals its amounts over the day that ends when it is written (the morning
    note's "UOP 750 cc" is the 24 h since the last one), which a calendar day cuts in two.
    """
    end = parse_time(window.end) if window is not None else None
    if end is None or (end.hour, end.minute) == (23, 59):
        return None
    start = end - timedelta(hours=24)
    rows = [r for r in numeric if (t := parse_time(r.get("time"))) is not None and start < t <= end]
    return (f"24 h to {end.strftime('%H:%M')}", rows) if rows else None


#: an amount counted from an event ("410 cc after lasix", "UOP 300 since extubation"); a
#: clock time or midnight after the word is a time the resolver has dated instead
_FROM_EVENT = re.compile(r"^\s*(?:cc|ml|l)?\s*(?:after|since|post|following|s/p)\s+(?!midnight\b|mn\b|noon\b|\d|~)"
                         r"(?:the\s+|his\s+|her\s+)?[a-z]", re.I)


def _part_sums(c: Case) -> tuple[list[float], Rows, str] | None:
    """The sums a total stated for part of the day may be (rows of the part, words for the
    span). At a known note time, the one sum from the part's start to it; with the note's
    hour unknown, the running sums up to each row of the part, or for a shift the twelve
    hours that end at each.
    """
    nt = note_time_of(c.ctx)
    part = part_of_day_span(c.entity.time_text, nt)
    if part is None:
        return None
    start, end = part[0], min(part[1], nt.moment) if nt.moment is not None else part[1]
    every = sorted(((t, float(r["valuenum"]), r) for r in c.item_rows()[1]
                    if r.get("valuenum") is not None and (t := parse_time(r.get("time"))) is not None),
                   key=lambda x: x[0])
    # a part's rows come after its start ("since midnight" leaves out the 00:00 row, the hour before);
    # a clock span's first column is its own
    first = is_clock_span(c.entity.time_text)
    inside = [(t, v, r) for t, v, r in every if (start <= t if first else start < t) and t <= end]
    if not inside:
        return None
    rows = [r for _, _, r in inside]
    when = f"{start.strftime('%m-%d %H:%M')} to {end.strftime('%m-%d %H:%M')}"
    if nt.moment is not None:
        return [sum(v for _, v, _ in inside)], rows, when
    if is_shift(c.entity.time_text):
        return [sum(v for u, v, _ in every if t - SHIFT < u <= t) for t, _, _ in inside], rows, \
            f"any 12 h ending {end.strftime('%m-%d')}"
    return list(itertools.accumulate(v for _, v, _ in inside)), rows, f"{when} (any running total)"


def _part_total(c: Case) -> Verdict | None:
    """A total stated for part of a day is that part's sum; one counted from an untimed
    event cannot be summed (module docstring).
    """
    n = c.claim_as(NumericClaim)
    if not n.per_day:
        return None
    e, line = c.entity, c.line()
    if e.time_text is None and line is not None and e.span is not None and _FROM_EVENT.match(line[e.span[1]:]):
        return unverified(c, f"{e.text}: a total counted from an event the note does not time; no span to sum")
    found = _part_sums(c)
    targets = [(v, u if u is not None else v) for _, v, u in stated_numbers(n)]
    if found is None or not targets:
        return None  # no part, or nothing charted in it: the calendar rules decide
    sums, rows, when = found
    slack = 0.15
    ok = any(lo * (1 - slack) <= t <= hi * (1 + slack) for lo, hi in targets for t in sums)
    said = ", ".join(span(lo, hi) for lo, hi in targets)
    near = min(sums, key=lambda t: min(gap(t, lo, hi) for lo, hi in targets))
    return verdict(c, ok, f"{e.text}: stated {said} vs charted total {num(near)} from {when}", rows[:4],
                   deciding=_weighty(rows))


def _weighty(rows: Rows) -> Rows:
    """A total's rows as evidence: the largest amounts first, at most :data:`MAX_EVIDENCE`."""
    return sorted(rows, key=lambda r: -abs(float(r["valuenum"])))[:MAX_EVIDENCE]


def _daily_total(c: Case) -> Verdict | None:
    """"UOP ~200 cc over 24h" / "100-350 cc per day": calendar-day sums of the item, or the
    24 hours that end at the note's time (:func:`_last_24h`).
    """
    n = c.claim_as(NumericClaim)
    if not n.per_day:
        return None
    e, stated, numeric = c.entity, n.reading, _numeric(c)
    days: dict[str, float] = {}
    groups: dict[str, Rows] = {}
    for r in numeric:
        days[str(r.get("time"))[:10]] = days.get(str(r.get("time"))[:10], 0.0) + float(r["valuenum"])
        groups.setdefault(str(r.get("time"))[:10], []).append(r)
    ordered = [days[d] for d in sorted(days)]
    full = ordered[1:-1] if len(ordered) > 2 else ordered  # first and last days are partial
    rolling = _last_24h(numeric, e.window)
    if rolling is not None:  # the note's own 24 h is one more total a stated amount may be
        days[rolling[0]] = sum(float(r["valuenum"]) for r in rolling[1])
        groups[rolling[0]] = rolling[1]
    exact = days.get(rolling[0]) if rolling is not None else None
    targets = [(v, u if u is not None else v) for _, v, u in stated_numbers(n)]
    # the rows of the day whose total lies nearest a stated number decide
    apart = {d: min(gap(t, lo, hi) for lo, hi in targets) for d, t in days.items()} if targets else {}
    day_rows = _weighty(groups[min(apart, key=apart.__getitem__)]) if apart else []
    totals = sorted(days.values())
    slack = 0.15
    misses = []
    if stated.min is not None and stated.max is not None and stated.min_hi is None:
        lo, hi = float(stated.min) * (1 - slack), float(stated.max) * (1 + slack)
        inside_share = sum(lo <= t <= hi for t in full) / max(len(full), 1)
        if inside_share < 0.6:
            misses.append(f"{span(float(stated.min), float(stated.max))} on most days")
    else:
        for _, value, upper in stated_numbers(n):
            lo, hi = value * (1 - slack), (upper if upper is not None else value) * (1 + slack)
            top = upper if upper is not None else value
            calendar = [t for d, t in days.items() if rolling is None or d != rolling[0]]
            if not any(lo <= t <= hi for t in calendar) and not (
                    exact is not None and value * (1 - _NOTE_DAY_SLACK) <= exact <= top * (1 + _NOTE_DAY_SLACK)):
                misses.append(span(value, upper))
    shown = ", ".join(num(t) for t in totals[:8])
    if misses:
        return verdict(c, False, f"{e.text}: stated {', '.join(misses)} vs charted daily totals {shown}", numeric[:4],
                       deciding=day_rows)
    said = ", ".join(span(lo, hi) for lo, hi in targets)
    return verdict(c, True, f"{e.text}: stated {said} vs charted daily totals {shown}", numeric[:4], deciding=day_rows)


DAILY_TOTAL = Rule("numbers.daily_total", "An amount stated per day is a calendar-day sum, met by a day's total "
                   "within 15 % (a stated daily range by most full days), or by the total of the 24 h that end at a "
                   "timed note within 5 %.", _daily_total, _KINDS)
PART_TOTAL = Rule("numbers.part_total", "A total stated for part of a day (since midnight, for the shift, "
                  "overnight) is the sum over that part up to the note's time, not a calendar day's; one counted "
                  "from an event the note does not time cannot be summed and is unverified.", _part_total, _KINDS)
