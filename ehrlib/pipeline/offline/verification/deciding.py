"""Which rows decided a verdict, and how its reason writes numbers and rows.

A reviewer reads a verdict's evidence from the top, so the rows that decided it come
first (``Verdict.deciding_row_ids``). A rule that knows them passes them; otherwise
:func:`default_deciding` picks them: for a statement with numbers, for each stated number
the row whose value lies nearest to it (a range's bounds count as one interval), ties
broken by the time nearest the statement's window; for any other statement, the row
nearest that window in time. Reasons write numbers with :func:`num` (at most four
significant digits, no binary float noise) and a row with :func:`at_row`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.verification.stated import stated_numbers
from ehrlib.pipeline.offline.verification.terms import concept_of
from ehrlib.pipeline.offline.verification.values import in_celsius, in_fahrenheit
from ehrlib.pipeline.offline.verification.windows import parse_time, row_interval
from ehrlib.pipeline.records import Entity

__all__ = ["num", "span", "at_row", "time_distance", "course_edges", "gap", "nearest", "nearest_in_time",
           "stated_intervals", "default_deciding"]

Row = Mapping[str, Any]
Interval = tuple[float, float]


def num(x: float | int | str | None) -> str:
    """A number as a reason writes it: at most four significant digits (whole numbers of
    1000 and more in full), no trailing zeros, so 96.599998474121094 reads 96.6.
    """
    if x is None:
        return "?"
    v = float(x)
    if not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    digits = max(0, 3 - math.floor(math.log10(abs(v))))
    text = f"{round(v, digits):.{digits}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def span(lo: float, hi: float | None) -> str:
    """``lo-hi`` as written; a single number when both read the same (never "7.1-7.1")."""
    a = num(lo)
    b = num(hi) if hi is not None else a
    return a if a == b else f"{a}-{b}"


def at_row(r: Row) -> str:
    """A row as a reason cites it: ``(label, yyyy-mm-dd hh:mm)``, parts it lacks left out."""
    parts = [str(x) for x in (r.get("label"), str(r.get("time") or "")[:16]) if x]
    return f"({', '.join(parts)})" if parts else ""


def time_distance(r: Row, window: TimeSpan | None) -> float:
    """Seconds from the row to the window (0 inside it or without a window; infinite for a
    row without a time).
    """
    iv = row_interval(r)
    if iv is None:
        return math.inf
    if window is None:
        return 0.0
    ws, we = parse_time(window.start), parse_time(window.end)
    if we is not None and iv[0] > we:
        return (iv[0] - we).total_seconds()
    if ws is not None and iv[1] < ws:
        return (ws - iv[1]).total_seconds()
    return 0.0


def course_edges(rows: Iterable[Row]) -> list[Row]:
    """The first-starting and the last-ending rows: the span a course of rows covers."""
    timed = [(iv, r) for r in rows if (iv := row_interval(r))]
    if not timed:
        return []
    return [min(timed, key=lambda t: t[0][0])[1], max(timed, key=lambda t: t[0][1])[1]]


def _valuenum(r: Row) -> float | None:
    v = r.get("valuenum")
    return None if v is None else float(v)


def gap(v: float, lo: float, hi: float) -> float:
    """How far ``v`` lies outside [lo, hi] (0 inside)."""
    return 0.0 if lo <= v <= hi else min(abs(v - lo), abs(v - hi))


def nearest(rows: Iterable[Row], targets: Sequence[Interval], window: TimeSpan | None = None,
            value: Callable[[Row], float | None] = _valuenum) -> list[Row]:
    """For each target interval, the row whose ``value`` lies nearest to it (0 inside it),
    then nearest the window in time, then first; each row once, in target order.
    """
    scored = [(r, v) for r in rows if (v := value(r)) is not None]
    out: list[Row] = []
    for lo, hi in targets:
        def key(rv: tuple[Row, float], lo: float = lo, hi: float = hi) -> tuple[float, float]:
            r, v = rv
            return (gap(v, lo, hi), time_distance(r, window))
        if scored:
            best = min(scored, key=key)[0]
            if not any(best is o for o in out):
                out.append(best)
    return out


def nearest_in_time(rows: Iterable[Row], window: TimeSpan | None) -> list[Row]:
    """The row nearest the window in time (the first of those inside it), none for no rows."""
    listed = list(rows)
    return [min(listed, key=lambda r: time_distance(r, window))] if listed else []


def stated_intervals(n: NumericClaim) -> list[Interval]:
    """Every number a numeric claim states as a (low, high) interval (one value twice), the
    values of an arrow series included.
    """
    out = [(lo, lo if hi is None else hi) for _, lo, hi in stated_numbers(n)]
    if n.trend is not None:
        out += [(float(x), float(x)) for x in n.trend.series]
    return list(dict.fromkeys(out))


def _in_note_scale(n: NumericClaim, targets: Sequence[Interval]) -> Callable[[Row], float | None]:
    """A temperature row's value in the note's scale (°C or °F); any other row's as charted."""
    concept = concept_of(n)
    if concept is None or concept.cid != "temperature" or not targets:
        return _valuenum
    note_c = str(n.unit or "").upper() == "C" or targets[0][0] < 50

    def value(r: Row) -> float | None:
        v = _valuenum(r)
        if v is None:
            return None
        return in_celsius(v, r) if note_c else in_fahrenheit(v, r)
    return value


def default_deciding(e: Entity, rows: Sequence[Row]) -> list[Row]:
    """The rows that decided a verdict on ``e`` from the ``rows`` it cites, when its rule
    did not say: nearest in value to each stated number, else nearest the window in time.
    """
    claim = e.claim
    if isinstance(claim, NumericClaim):
        targets = stated_intervals(claim)
        if targets and any(_valuenum(r) is not None for r in rows):
            return nearest(rows, targets, e.window, _in_note_scale(claim, targets))
    return nearest_in_time(rows, e.window)
