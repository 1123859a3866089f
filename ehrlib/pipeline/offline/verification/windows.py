"""Time windows of offline verification: which tool rows belong to a statement's window.

The tools are asked for the entity's window by date ("A to B", which they widen one day
each way); rows are then kept only inside the entity's own window (explicit date = that
day; narrative anchor = ±1 day; default = note date ±1 day or the hospitalization).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.note_time import SHIFT
from ehrlib.pipeline.offline.timex import parse_datetime

__all__ = ["tool_spec", "in_window", "intervals_overlap", "core_window", "row_interval", "parse_time",
           "widened_back", "shift_matches", "at_discharge", "last_draw"]


def parse_time(v: Any) -> datetime | None:
    """A tool row's or window's time, None when absent or unparseable."""
    return parse_datetime(str(v)) if v else None


def tool_spec(window: TimeSpan | None) -> str:
    """The tools' date-range spec covering a window (they widen it a day each way)."""
    if window is None or not (window.start and window.end):
        return ""
    return f"{window.start[:10]} to {window.end[:10]}"


def in_window(row: Mapping[str, Any], window: TimeSpan | None) -> bool:
    """Whether a tool row falls in (point) or overlaps (interval) the window."""
    if window is None:
        return True
    ws, we = parse_time(window.start), parse_time(window.end)
    start = parse_time(row.get("time"))
    if start is None:
        return True  # time-less rows (billing codes) belong to the admission
    end = parse_time(row.get("end")) or start
    if ws is not None and end < ws:
        return False
    if we is not None and start > we:
        return False
    return True


def intervals_overlap(a: tuple[datetime, datetime], b: tuple[datetime, datetime]) -> bool:
    """Whether two closed intervals overlap."""
    return a[0] <= b[1] and b[0] <= a[1]


def core_window(window: TimeSpan | None) -> TimeSpan | None:
    """The day a widened window was built around: a note date or anchor widened one day
    each side (3 days, or less once cut at the note's time) gives its middle day up to the
    window's end; a single day is itself; longer spans (the hospitalization) have no core.
    """
    if window is None:
        return None
    a, b = parse_time(window.start), parse_time(window.end)
    if a is None or b is None:
        return None
    days = (b - a).total_seconds() / 86400
    if days <= 1.01:
        return window
    if days <= 3.01:
        # the middle day, ending no later than the window (a window cut at the note's time)
        mid = a + timedelta(days=1)
        end = min(mid.replace(hour=23, minute=59, second=59), b)
        return TimeSpan(mid.strftime("%Y-%m-%d 00:00:00"), end.strftime("%Y-%m-%d %H:%M:%S"))
    return None


def widened_back(window: TimeSpan | None, days: int) -> TimeSpan | None:
    """The window with its start moved ``days`` earlier (a look-back for earlier values);
    the window itself when it has no start.
    """
    ws = parse_time(window.start) if window else None
    if ws is None or window is None:
        return window
    return TimeSpan((ws - timedelta(days=days)).strftime("%Y-%m-%d %H:%M:%S"), window.end)


def row_interval(r: Mapping[str, Any]) -> tuple[datetime, datetime] | None:
    """(start, end) of a row; a prescription's midnight end date covers its whole day."""
    a = parse_time(r.get("time"))
    if a is None:
        return None
    b = parse_time(r.get("end")) or a
    if b < a:
        b = a
    if r.get("table") == "prescriptions" and b.hour == 0 and b.minute == 0:
        b = b + timedelta(hours=23, minutes=59)  # dates: the whole end day
    return a, b


def shift_matches(rows: Sequence[Mapping[str, Any]], vals: list[float], checks: list[tuple[str, float, float | None]],
                   slack: float) -> bool:
    """Whether some nursing shift (:data:`SHIFT`, 12 h) of ``rows`` has its minimum and maximum
    both within the stated ones (``checks``: ("min"|"max", low, high)).

    A nurse charts the ranges of the shift they worked: "HR 90s-100s" in a nursing note is
    met by one shift's extremes, and the other shift's lows or highs in the same day do
    not break it. A range wider than what any shift charted still does.
    """
    timed = sorted(((t, v) for r, v in zip(rows, vals, strict=False) if (t := parse_time(r.get("time"))) is not None))
    for i, (start, _) in enumerate(timed):
        shift = [v for t, v in timed[i:] if t - start <= SHIFT]
        if all(lo - slack <= (min(shift) if kind == "min" else max(shift)) <= (hi if hi is not None else lo) + slack
               for kind, lo, hi in checks):
            return True
    return False


_AT_DISCHARGE = re.compile(r"^(?:at|on|upon|by|day\s+of)\s+(?:the\s+time\s+of\s+)?discharge$|^discharge\s+labs?$", re.I)


def at_discharge(time_text: str | None) -> bool:
    """Whether a statement's time expression is the discharge itself ("at discharge",
    "discharge labs"), not a span before it ("prior to discharge").
    """
    return bool(time_text and _AT_DISCHARGE.match(re.sub(r"\s+", " ", time_text.strip())))


def last_draw(rows: Sequence[Mapping[str, Any]], window: TimeSpan | None) -> list[Mapping[str, Any]]:
    """The rows of the item's last draw day up to the window's end: a value "at discharge"
    is the stay's last one, which may precede the discharge day by days when the draws
    stopped early.
    """
    end = parse_time(window.end) if window is not None else None
    timed = [(t, r) for r in rows if r.get("valuenum") is not None and (t := parse_time(r.get("time"))) is not None
             and (end is None or t <= end)]
    if not timed:
        return []
    day = max(t for t, _ in timed).date()
    return [r for t, r in timed if t.date() == day]
