"""A drug's courses and drip runs from its rows: the spans the medication time checks
(:mod:`.medtimes`) date starts, stops and edges against.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ehrlib.pipeline.offline.verification.clocktime import is_timed
from ehrlib.pipeline.offline.verification.windows import row_interval

__all__ = ["COURSE_GAP", "DAY_SHARE", "DRIP_HOURS", "course_spans", "drip_runs", "edge_in", "is_administration"]


def is_administration(r: Mapping[str, Any]) -> bool:
    """Whether a row charts the drug given (an input event), not an order for it."""
    return str(r.get("table", "")).startswith("inputevents")


#: a day with no record of the drug ends its course: a later record starts a new one (order
#: renewals and doses a dosing interval apart belong to one course)
COURSE_GAP = timedelta(hours=24)
#: how much of a stated span an order's date must hold to date an edge in it
DAY_SHARE = timedelta(hours=6)


def course_spans(rows: Iterable[Mapping[str, Any]], gap: timedelta = COURSE_GAP
                 ) -> list[tuple[datetime, datetime, list[Mapping[str, Any]]]]:
    """The drug's courses, sorted by start: each item's rows (one product of one table)
    merged while less than ``gap`` separates one from the next.
    """
    by_item: dict[str, list[tuple[datetime, datetime, Mapping[str, Any]]]] = {}
    for r in rows:
        if iv := row_interval(r):
            by_item.setdefault(f"{r.get('table')}|{r.get('label') or r.get('item') or ''}", []).append((*iv, r))
    out: list[tuple[datetime, datetime, list[Mapping[str, Any]]]] = []
    for spans in by_item.values():
        mine: list[tuple[datetime, datetime, list[Mapping[str, Any]]]] = []
        for a, b, r in sorted(spans, key=lambda x: x[0]):
            if mine and a <= mine[-1][1] + gap:
                mine[-1] = (mine[-1][0], max(mine[-1][1], b), mine[-1][2] + [r])
            else:
                mine.append((a, b, [r]))
        out += mine
    return sorted(out, key=lambda x: x[0])


def edge_in(moment: datetime, rows: list[Mapping[str, Any]], edge: str, ws: datetime, we: datetime) -> bool:
    """Whether a course edge falls in [ws, we]. An edge set by a date-only row (an order's
    date) is a day, met when that day holds six hours or more of the span; an order's end
    date may be the day after its last dose.
    """
    if any(is_timed(r) for r in rows) or (moment.hour, moment.minute) not in ((0, 0), (23, 59)):
        return ws <= moment <= we  # a timed row, or an order stamped with its time (MIMIC-IV)
    day = datetime(moment.year, moment.month, moment.day)
    late = timedelta(days=1) if edge == "end" else timedelta(0)
    # the day must hold a good part of the span, not just the charting delay before a morning
    return min(we, day + timedelta(days=1) + late) - max(ws, day) >= DAY_SHARE


#: a drip: rated administrations running at least this long (an intermittent dose runs an
#: hour or two), and off for at least this long before it runs again
DRIP_HOURS = timedelta(hours=3)


def drip_runs(rows: Iterable[Mapping[str, Any]]) -> list[tuple[datetime, datetime, list[Mapping[str, Any]]]]:
    """The drug's drip runs: timed administrations with a rate, merged per item while off
    for less than :data:`DRIP_HOURS` (hourly charting skips an hour now and then), that
    last at least as long. A drip hung after boluses of its drug, or again after hours
    off, starts then.
    """
    rated = [r for r in rows if is_timed(r) and (r.get("extra") or {}).get("rate") is not None
             and is_administration(r)]
    return [run for run in course_spans(rated, DRIP_HOURS) if run[1] - run[0] >= DRIP_HOURS]
