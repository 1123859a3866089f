"""Trend rules: direction words ("downtrending", "improving"), values with a direction
("rose to 6.0") and stated origins ("down to 1.1 from 2.3", :mod:`.changes`).

Trends use Analyze_Value_Trend's rows: the least-squares direction, first-vs-last, the last
24 h, and for a progress note the latest draw against the previous day's
(:func:`.trendwords.day_over_day`); "improving"/"worsening" are mapped through the
concept's ``lower_is_worse``. A progress note's trend looks back from its own date; a trend
told for a part of the note's day ("trending up this afternoon") is that part's values.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import NumericClaim, Trend
from ehrlib.pipeline.offline.note_time import judged_part, judged_until
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification import numbers
from ehrlib.pipeline.offline.verification.changes import STATED_ORIGIN
from ehrlib.pipeline.offline.verification.changes import numeric_rows as _numeric_rows
from ehrlib.pipeline.offline.verification.deciding import num
from ehrlib.pipeline.offline.verification.session import Case, decide, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, tolerance_of
from ehrlib.pipeline.offline.verification.trendclaims import (
    after_value,
    course_window,
    extreme_of,
    is_the_number,
    narrated_after,
    small_change,
    spans_course,
    stated_reference,
)
from ehrlib.pipeline.offline.verification.trendwords import (
    day_over_day,
    day_over_day_values,
    toward_reference,
)
from ehrlib.pipeline.offline.verification.values import value_matches
from ehrlib.pipeline.offline.verification.windows import (
    core_window,
    in_window,
    parse_time,
    widened_back,
)
from ehrlib.pipeline.records import Verdict
from ehrlib.pipeline.stages import NoteContext
from ehrlib.tools.trend import trend_stats

__all__ = ["RULES", "CHAIN", "STATED_ORIGIN", "DIRECTION", "VALUE_DIRECTION", "trend_direction"]

Rows = list[Mapping[str, Any]]


def trend_direction(values: Sequence[float], band: float | None = None) -> str:
    """first-vs-last direction with a dead band: 5 % of the larger value (as the trend
    tool's stability rule), or ``band`` (absolute) for a small change the note states.
    """
    if len(values) < 2:
        return "insufficient data"
    first, last = values[0], values[-1]
    if abs(last - first) <= (0.05 * max(abs(first), abs(last), 1e-9) if band is None else band):
        return "stable"
    return "rising" if last > first else "falling"


def _claimed_direction(n: NumericClaim) -> str | None:
    d = n.trend.direction if n.trend is not None else None
    if d in ("up", "down", "stable"):
        return {"up": "rising", "down": "falling", "stable": "stable"}[d]
    concept = concept_of(n)
    lower_is_worse = concept.lower_is_worse if concept else None
    if d in ("improving", "worsening") and lower_is_worse is not None:
        worse = "falling" if lower_is_worse else "rising"
        better = "rising" if lower_is_worse else "falling"
        return worse if d == "worsening" else better
    return None


def _trend_window(window: TimeSpan | None, ctx: NoteContext) -> TimeSpan | None:
    """A progress note's trend looks back from its date ("plts downtrending" = the last
    days up to today), not forward into the next day the default window admits.
    """
    if ctx.note_type == "discharge_summary" or window is None:
        return window
    day = parse_time((ctx.note.charttime or ctx.chartdate or ctx.note.chartdate or "")[:10])
    end = parse_time(window.end)
    if day is None or end is None:
        return window
    end = min(end, judged_until(ctx) or day.replace(hour=23, minute=59, second=59))  # up to the note's time
    start = min(parse_time(window.start) or end, day - timedelta(days=2))
    return TimeSpan(start.strftime("%Y-%m-%d %H:%M:%S"), end.strftime("%Y-%m-%d %H:%M:%S"))


def _stable(values: Sequence[float]) -> bool:
    if len(values) < 2:
        return True
    mean = sum(values) / len(values)
    return (max(values) - min(values)) <= 0.2 * max(abs(mean), 1e-9)


def _fitted_direction(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The trend tool's least-squares direction, as the LLM would read it."""
    stats = trend_stats([(r.get("time"), r.get("valuenum")) for r in rows])
    d = stats.get("direction")
    return d if d in ("rising", "falling", "stable") else None


def _direction(c: Case) -> Verdict | None:
    e, s, n, ctx = c.entity, c.session, c.claim_as(NumericClaim), c.ctx
    trend = n.trend or Trend()
    if trend.series:
        return decide(c, numbers.CHAIN)
    keys = c.keys()
    if not keys:
        return verdict(c, False, f"no item for {e.text}", (), missing=True)
    claim = _claimed_direction(n)
    if n.reading.value is not None:
        return decide(c, numbers.CHAIN if claim is None else (VALUE_DIRECTION,))
    ranged = (n.reading.min is not None and n.reading.max is not None) or (n.bp is not None and n.bp.has_bounds)
    if claim == "stable" and ranged:
        return decide(c, numbers.CHAIN)  # "SBP stable 100s-140s": where the values stayed is the claim
    if claim is None and trend.direction not in ("improving", "worsening"):
        return verdict(c, True, f"trend word {trend.word!r} is not directional", ())
    course = spans_course(c)
    window = course_window(e.window, ctx) if course else _trend_window(e.window, ctx)
    rows = _numeric_rows(s, keys, window)
    part = None if course else judged_part(e.time_text, ctx)
    inside = [r for r in rows if part and (t := parse_time(r.get("time"))) is not None and part[0] <= t <= part[1]]
    if len(inside) >= 2:  # "HR trending up this afternoon": the values of that part of the note's day
        values = [float(r["valuenum"]) for r in inside]
        band = tolerance_of(concept_of(n)) if small_change(c) else None
        directions = {trend_direction(values, band)} | ({d} if (d := _fitted_direction(inside)) else set())
        shown = f"{e.time_text}: {num(values[0])} -> {num(values[-1])}"
        if claim in directions:
            return verdict(c, True, f"{e.text}: stated {claim} vs charted {shown}", [inside[0], inside[-1]],
                           deciding=[inside[0], inside[-1]])
        return verdict(c, False, f"{e.text}: stated {claim} vs charted {', '.join(sorted(directions))} ({shown})",
                       [inside[0], inside[-1]], deciding=[inside[0], inside[-1]])
    if len(rows) < 2:
        ws = parse_time(window.start) if window else None
        if ws is not None and window is not None:
            rows = _numeric_rows(s, keys, widened_back(window, 3))
    if len(rows) < 2:
        if rows or c.item_rows()[1]:
            # a direction needs two values of its window; one value (or none there, some elsewhere)
            # shows no course at all, so nothing the note says about the course is contradicted
            return unverified(c, f"{e.text}: fewer than two values in the window, no trend to compare", rows)
        return verdict(c, False, f"no {e.text} values in the window", (), missing=True)
    values = [float(r["valuenum"]) for r in rows]
    reference = None if course else stated_reference(c)
    if reference is not None and is_the_number(reference, values[-1]):
        # "bili improving from 6.0 yesterday" with 6.0 the latest value charted: the course told
        # is after it, and nothing after it is charted yet
        return unverified(c, f"{e.text}: the latest charted value ({num(values[-1])}) is the earlier one the note "
                          f"compares against ({reference}); nothing later to compare", [rows[-1]])
    if claim is None and (claim := toward_reference(trend.direction, n.concept, values[0])) is None:
        return verdict(c, True, f"trend word {trend.word!r} is not directional from {num(values[0])}", ())
    tol = tolerance_of(concept_of(n))
    band = tol if small_change(c) else None  # "drifting down": any change the item's tolerance tells apart
    directions = {trend_direction(values, band)}
    shown = f"{num(values[0])} -> {num(values[-1])}"
    if claim == "stable":
        day_vals = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] == str(rows[-1].get("time"))[:10]]
        if _stable(values) or _stable(day_vals):
            directions.add("stable")
    if trend.normalized and claim == "falling":
        directions.add("falling" if values[-1] < max(values) else "stable")
    fitted = _fitted_direction(rows)
    if fitted:
        directions.add(fitted)
    if course:
        # "trending up since admission": the span's first value against its last (and the fitted
        # slope over it), not the latest day's change; "stable throughout the stay" is the whole span's
        # range, not the last day's nor a flat fit through a rise and fall
        if claim == "stable" and not _stable(values):
            directions.discard("stable")
        shown = f"{e.time_text or 'over the span'}: {shown}"
    elif ctx.note_type != "discharge_summary":
        # a progress note's "drifting down" is about the latest day: the last 24 h of values
        last_t = parse_time(rows[-1].get("time"))
        if last_t is not None:
            recent = [float(r["valuenum"]) for r in rows
                      if (rt := parse_time(r.get("time"))) and last_t - rt <= timedelta(hours=24)]
            if len(recent) >= 2:
                directions.add(trend_direction(recent, band))
        # the latest draw against the previous day's (.trendwords.day_over_day); the window's
        # least-squares fit may also carry the claim, a start-vs-end of an arbitrary window
        # may not. One item's own series: the first aligned item with values on two days
        # ("WBC" may also align a urine WBC, whose values are not this series)
        relative = 0.0 if band is not None else 0.05
        own = next((series for k in keys if day_over_day_values(series := [r for r in rows if r.get("key") == k])),
                   None)
        dod = day_over_day(own, tol, relative) if own is not None else None
        if own is not None and dod is not None:
            ref, latest = day_over_day_values(own) or (values[0], values[-1])
            shown = f"{num(ref)} -> {num(latest)} the latest draw day"
            directions = {dod} | ({fitted} if fitted else set()) | (directions & {"stable"} if claim == "stable"
                                                                    else set())
    ev = [rows[0], rows[-1]]
    if claim in directions:
        return verdict(c, True, f"{e.text}: stated {claim} vs charted {shown}", ev, deciding=ev)
    return verdict(c, False, f"{e.text}: stated {claim} vs charted {', '.join(sorted(directions))} ({shown})", ev,
                   deciding=ev)


def _value_direction(c: Case) -> Verdict | None:
    """"rose to 6.0" / "improved to 0.5" / "Hct 27.5 and stable": the value is recorded and the
    values before it (same window or the three days before) moved as stated.
    """
    by_value = decide(c, numbers.CHAIN)
    n = c.claim_as(NumericClaim)
    claim = _claimed_direction(n)
    if by_value is None or by_value.label == "inconsistent" or claim is None or n.reading.value is None:
        return by_value
    e = c.entity
    tol = tolerance_of(concept_of(n))
    value = float(n.reading.value)
    window = e.window
    rows = _numeric_rows(c.session, c.keys(), widened_back(window, 3))
    hits = [r for r in rows if value_matches(value, float(r["valuenum"]), tol) and in_window(r, window)]
    extreme = extreme_of(n)
    if (extreme is not None and claim == ("falling" if extreme == "max" else "rising")) or (
            claim in ("rising", "falling") and narrated_after(c, n.trend.word if n.trend else None)):
        return after_value(c, claim, value, tol, hits, rows)  # the course after the value (.trendclaims)
    for hit in hits:
        t_hit = str(hit.get("time"))
        before = [float(r["valuenum"]) for r in rows if str(r.get("time")) < t_hit]
        if not before:
            continue
        if core_window(window) is not None and claim in ("rising", "falling"):
            # a progress note's "uptrending, 14.9": against the previous day's last draw
            # (the one before it when none), not the lowest value of the look-back
            prev_day = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] < t_hit[:10]]
            ref = prev_day[-1] if prev_day else before[-1]
            if (ref < value - tol) if claim == "rising" else (ref > value + tol):
                return verdict(c, True, f"{e.text} {'rose' if claim == 'rising' else 'fell'} to {num(value)} "
                               f"(from {num(ref)} the previous draw day)", [hit])
            continue
        if claim == "rising" and min(before) < value - tol:
            return verdict(c, True, f"{e.text} rose to {num(value)} (from {num(min(before))})", [hit])
        if claim == "falling" and max(before) > value + tol:
            return verdict(c, True, f"{e.text} fell to {num(value)} (from {num(max(before))})", [hit])
        if claim == "stable" and _stable(before[-3:] + [value]):
            return verdict(c, True, f"{e.text} stable around {num(value)}", [hit])
    if claim == "stable" and hits:
        day = [float(r["valuenum"]) for r in rows if str(r.get("time"))[:10] == str(hits[0].get("time"))[:10]]
        if _stable(day):
            return verdict(c, True, f"{e.text} stable around {num(value)} that day", hits[:2])
    if hits and not [r for r in rows if str(r.get("time")) < str(hits[0].get("time"))]:
        return by_value  # nothing earlier to compare with: the value alone decides
    return verdict(c, False, f"{e.text} {num(value)} recorded, but not {claim} before it", hits[:2] or rows[:2])


DIRECTION = Rule("trends.direction", "A trend word claims the direction of recent values (fit, first to last, latest "
                 "day over the previous), a stated span's or part of the day's; drifting is any change beyond the "
                 "tolerance; one value, or a latest one the note compares against, is unverified.",
                 _direction, ("trend",))
VALUE_DIRECTION = Rule("trends.value_direction", "A value stated with a direction (rose to X, stable at X) claims the "
                       "value and that the values before it moved that way; after a peak or nadir the direction is "
                       "the course after the extreme.", _value_direction, ("trend",))

CHAIN = (STATED_ORIGIN, DIRECTION)
RULES = (STATED_ORIGIN, DIRECTION, VALUE_DIRECTION)
