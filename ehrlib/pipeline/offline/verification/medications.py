"""Medication and infusion rules: orders and administrations against what a note says.

Interval overlap of orders with the window; "started"/"stopped" compare the start/end
dates, a clock time the start/end of a run (:mod:`.clocktime`); rate, dose, route, course
day and duration are compared when stated (:mod:`.doses`). The checks run in order, each
narrowing the window's rows to those matching what it checked, so "started on heparin
1000 u/h" needs one order that both started in the window and runs at that rate.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ehrlib.pipeline.offline.note_time import judged_part
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.clocktime import edge_matches, parse_clock, ran_before, timed_within
from ehrlib.pipeline.offline.verification.counts import administration_count, transfusion_units
from ehrlib.pipeline.offline.verification.deciding import course_edges, nearest, nearest_in_time, num
from ehrlib.pipeline.offline.verification.doses import (
    bound_met,
    charts_non_iv,
    dose_matches,
    rate_matches,
    route_of,
    row_dose,
    same_dose_unit,
    total_matches,
    unitless_matches,
)
from ehrlib.pipeline.offline.verification.meddays import on_counted_day
from ehrlib.pipeline.offline.verification.medpresence import negated, record_in_window
from ehrlib.pipeline.offline.verification.medrows import course, day_rows, dose_bound
from ehrlib.pipeline.offline.verification.medrows import med as _med
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.medrows import rows as _rows
from ehrlib.pipeline.offline.verification.medtimes import (
    clock_dates_stop,
    clock_edge,
    dated_edge,
    stopped,
    template_dose_time,
    timed_administration,
)
from ehrlib.pipeline.offline.verification.ratechange import change_of, rate_change
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import core_window, in_window, parse_time, row_interval
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "CHAIN"]

Rows = list[Mapping[str, Any]]
_KINDS = ("medication", "infusion")


def _action(c: Case) -> str:
    return _med(c).action or ""


def _course(c: Case) -> Rows:
    return course(c)


def _rate(c: Case) -> Verdict | None:
    e, m = c.entity, _med(c)
    rate, rate_unit = m.rate, m.rate_unit or ""
    if rate is None:
        return None
    inside = _rows(c)
    rated = [r for r in inside if (r.get("extra") or {}).get("rate") is not None]
    # a drip rate in a progress note is the rate of its day, not of the widened window; a stated
    # time's window ("by 11-14", "overnight") is the statement's own, kept whole, and so is the
    # window of the rate a change left ("weaned from 160 to 10"), which may have run the day before
    left = _left_by_change(c, float(rate))
    core = core_window(e.window) if not e.time_text and not left else None
    rated = ([r for r in rated if in_window(r, core)] or rated) if core is not None else rated
    # "amiodarone 0.5 mg/min overnight": the rate of that part of the note's day, when charted then
    span = None if c.ctx.note_type == "discharge_summary" else judged_part(e.time_text, c.ctx)
    rated = (timed_within(rated, span)[0] or rated) if span is not None else rated
    ok = [r for r in rated if rate_matches(float(rate), rate_unit, r)]
    clock = parse_clock(e.time_text)
    if ok and clock is not None:
        # "increased to 20 mg/hr at 1400": a row at that rate must start near that time; the rate a
        # change left ("0.6 -> 0.5 at 1500") or a stop ended ("9 u/hr, paused at 0200") ran before it
        ended = left or clock_dates_stop(c)
        timed, _, detail = ran_before(clock, e.window, ok) if ended else edge_matches(clock, e.window, ok, "start")
        if timed is False:
            return verdict(c, False, f"{_names(c)}: rate {num(float(rate))} {rate_unit} recorded, but "
                           f"not {'before' if ended else 'from'} {e.time_text} "
                           f"(±{clock.tolerance.seconds // 3600} h): {detail}", ok[:4],
                           deciding=nearest_in_time(ok, e.window))
    if rated and not ok:
        seen = sorted({round(float(r["extra"]["rate"]), 3) for r in rated})
        return verdict(c, False, f"{_names(c)}: rate {num(float(rate))} {rate_unit} not recorded "
                       f"(recorded {', '.join(num(x) for x in seen[:6])})", rated[:4],
                       deciding=nearest(rated, [(float(rate), float(rate))], e.window,
                                        lambda r: float(r["extra"]["rate"])))
    c.narrowed = ok or inside
    return None


def _left_by_change(c: Case, rate: float) -> bool:
    """Whether the stated rate is the old one of a change ("Levophed 0.14 -> 0.5 at 1335",
    "weaned from 160 to 10"): it ran before the change, so a time told with the change dates
    the new rate, and the old one only had to run before it.
    """
    line, e = c.line(), c.entity
    if line is None or e.span is None:
        return False
    change = change_of(line, e.span, e.text, rate)
    return change is not None and abs(change[0] - rate) < 1e-9


def _dose(c: Case) -> Verdict | None:
    """A stated dose against the rows of the statement's day (a progress note's dose is
    its day's, as its rate is; the widened window when that day records none), met by one
    row or by administrations that add up to it (:func:`.doses.total_matches`); with a
    count ("20 mg x2") the dose is each administration's, so their sum must be dose x count.
    """
    m = _med(c)
    dose, dose_unit = m.dose, m.dose_unit or ""
    if dose is None:
        return None
    inside = _rows(c)
    if not dose_unit:
        return _unitless_dose(c, float(dose), inside)
    comparable = [r for r in inside if same_dose_unit(dose_unit, r)]
    given = [r for r in comparable if str(r.get("table", "")).startswith("inputevents") and row_dose(r) is not None]
    if given and _administered(c):
        comparable = given  # "lorazepam 4 mg IV x1" states what was given, not the order's "2-4 mg" range
    day = [r for r in day_rows(c) if r in comparable]
    pool = day if any(row_dose(r) is not None for r in day) else comparable
    if (bound := dose_bound(c)) is not None:  # ">3.5 L on 8-22": any dose or sum at least that large
        met = bound_met(bound, float(dose), dose_unit, comparable)
        if met is False:
            return verdict(c, False, f"{_names(c)}: dose {'over' if bound == 'min' else 'under'} {num(dose)} "
                           f"{dose_unit} not recorded", comparable[:4],
                           deciding=nearest(comparable, [(float(dose), float(dose))], c.entity.window, row_dose))
        return None
    with_dose = [r for r in pool if dose_matches(float(dose), dose_unit, r)]
    total = float(dose) * float(m.units or 1)
    if not with_dose and total_matches(total, dose_unit, pool):
        with_dose = pool  # given in several administrations
    if not with_dose and any(row_dose(r) is not None for r in pool):
        doses = sorted({f"{num(row_dose(r))}" for r in pool if row_dose(r) is not None})
        return verdict(c, False, f"{_names(c)}: dose {num(dose)} {dose_unit} not recorded "
                       f"(recorded {', '.join(doses[:6])})", pool[:4],
                       deciding=nearest(pool, [(float(dose), float(dose))], c.entity.window, row_dose))
    c.narrowed = with_dose or inside
    return None


def _administered(c: Case) -> bool:
    """Whether the statement reports an administration (given, bolus, a count, "x1")."""
    m, words = _med(c), terms()["actions"].get("administered", ())
    return m.units is not None or (m.action or "") in words or (m.freq or "") in words


def _unitless_dose(c: Case, number: float, inside: Rows) -> Verdict | None:
    """"atorvastatin 40": the number is a dose (or an infusion's rate) in the drug's own
    recorded unit; wrong when no row of the window records it.
    """
    judged = [(r, ok) for r in inside if (ok := unitless_matches(number, r)) is not None]
    hits = [r for r, ok in judged if ok]
    if judged and not hits:
        seen = sorted({f"{num(row_dose(r))} {r.get('unit') or ''}".strip()
                       for r, _ in judged if row_dose(r) is not None})
        return verdict(c, False, f"{_names(c)}: dose {num(number)} not recorded (recorded {', '.join(seen[:6])})",
                       [r for r, _ in judged][:4],
                       deciding=nearest([r for r, _ in judged], [(number, number)], c.entity.window, row_dose))
    c.narrowed = hits or inside
    return None


def _route(c: Case) -> Verdict | None:
    route, routes = _med(c).route, terms()["routes"]
    if not route or route not in routes:
        return None
    routed = [r for r in _rows(c) if route_of(r) and (route == "IV" or not charts_non_iv(r))]
    if routed and not [r for r in routed if any(w in route_of(r) for w in routes[route])]:
        return verdict(c, False, f"{_names(c)}: route {route} not recorded (recorded "
                       f"{', '.join(sorted({route_of(r) for r in routed}))})", routed[:4])
    return None


def _course_day(c: Case) -> Verdict | None:
    """"day 3 of vancomycin": the course's first dose, the earliest start with no gap of
    more than 2 days after it, is that many days before the note's day.
    """
    e, course_day = c.entity, _med(c).course_day
    day = parse_time((e.window.end if e.window else "") or "")
    if not course_day or day is None:
        return None
    course = _course(c)
    starts = sorted(iv[0] for r in course if (iv := row_interval(r)) and iv[0] <= day)
    note_day = core_window(e.window)
    ref = parse_time(note_day.start) if note_day else day
    if starts and ref is not None:
        first = starts[-1]
        for x in reversed(starts[:-1]):
            if (first - x).days > 2:
                break
            first = x
        stated = ref - timedelta(days=int(course_day) - 1)
        if abs((first.date() - stated.date()).days) > 1:
            return verdict(c, False, f"{_names(c)}: day {course_day} means started {stated.date()}, "
                           f"first dose {first.date()}", course[:4],
                           deciding=[r for r in course if (iv := row_interval(r)) and iv[0] == first][:1])
    return None


def _duration(c: Case) -> Verdict | None:
    """A stated course length against the span of the drug's rows in the admission.

    A duration stated with an interruption ("held x1h", "off for 2 h") is the pause's, not
    the course's, and is not compared. A planned total ("for a total course of 14 days")
    still running when the record ends (its last row within a day of discharge) continues
    after it, so its recorded span is only a lower bound: too long contradicts it, too
    short does not; a course told as done ("treated x 14 days") is measured as recorded.
    """
    m = _med(c)
    duration = m.duration_days
    if not duration or (m.action or "") in terms()["actions"].get("interruptions", ()):
        return None
    course = _course(c)
    ivs = [iv for r in course if (iv := row_interval(r))]
    if ivs:
        last = max(b for _, b in ivs)
        span = (last - min(x for x, _ in ivs)).total_seconds() / 86400
        tolerance = max(1.5, 0.3 * float(duration))
        discharge = parse_time(c.ctx.dischtime or "")
        planned = re.search(r"\b(?:" + "|".join(terms()["actions"].get("planned_course", ("(?!)",))) + r")\b",
                            f"{c.entity.text} {c.entity.value or ''}", re.I)
        truncated = bool(planned) and discharge is not None and last >= discharge - timedelta(days=1)
        if span - float(duration) > tolerance or (float(duration) - span > tolerance and not truncated):
            return verdict(c, False, f"{_names(c)}: stated {num(float(duration))} days, recorded course "
                           f"{span:.1f} days", course[:4], deciding=course_edges(course))
    return None


def _given_in_window(c: Case) -> Verdict | None:
    return verdict(c, True, f"{_names(c)} recorded in the window", _rows(c))


def _rule(name: str, principle: str, apply: Any) -> Rule[Any]:
    return Rule(f"medications.{name}", principle, apply, _KINDS)


CHAIN = (
    _rule("negated_absent", "A drug said not to be given claims that no order or administration of it overlaps "
          "the window; one said held or given no further, from a moment the note does not date, is not judged by "
          "rows that may precede that moment.", negated),
    _rule("stopped_at_window_end", "A drug said to be off or held without a time claims it is no longer running "
          "when the statement's day ends; charted administrations, when there are any, decide over orders.", stopped),
    _rule("record_in_window", "A drug said given needs an order or administration in the window: none in the "
          "admission is missing (if its records could show it), one only on other days a time error; a completed "
          "course lies before it; a plan's bare regimen is not judged.", record_in_window),
    _rule("transfusion_volume", "Stated blood-product units are wrong when fewer separate administrations are "
          "charted that day (near a stated clock time) and their volume, at the product's volume a unit, is short too; "
          "pooled products are not counted.", transfusion_units),
    _rule("clock_edge", "A start or stop stated to the hour claims that a run of the drug began or ended within "
          "two hours of it (three when approximate), not merely that day.", clock_edge),
    _rule("timed_administration", "A dose (or a bare amount) stated at a clock time or part of the note's day claims "
          "a charted administration then, within the clock tolerance; date-only orders neither confirm nor "
          "contradict it.", timed_administration),
    _rule("template_dose_time", "An ICU template's drug entry with a time (\"Vancomycin - 1400\") states when the "
          "drug was last given: a charted administration must fall at that clock time or part of the note's day.",
          template_dose_time),
    _rule("dated_edge", "A start or stop stated with a day (a date, today, this AM, HD 3, since a date) claims that "
          "a course of the drug, not merely a row, began or ended in it.", dated_edge),
    _rule("on_counted_day", "A drug stated on a counted day (HD 3, POD 2, ICU day 4) without a start or stop "
          "claims a row of it on that one day; rows only on the days either side contradict it.", on_counted_day),
    _rule("rate_change", "A change of a drip's rate (A -> B, from A to B) claims its order: a row at the new rate "
          "must begin after a row at the old one in the window.", rate_change),
    _rule("rate", "A stated drip rate must be charted, in convertible units, on the note's day (in all of a stated "
          "time's window, in a stated part of the day when charted then) and from the stated time.", _rate),
    _rule("dose", "A stated dose must match, on the note's day when that day records one, a row or a sum of "
          "administrations (one bolus's parts, a day's doses; dose x count when counted) in a comparable unit; a "
          "number without a unit is read in the drug's own unit.", _dose),
    _rule("route", "A stated route must match the route charted for the drug.", _route),
    _rule("administration_count", "A count (\"x3\") claims that many administrations at the stated dose in the "
          "window: two or more short contradicts it; a count of one day (x3 today, or undated in a progress note) any "
          "fewer that day, give or take the charting delay.", administration_count),
    _rule("course_day", "Day N of a course claims the course's first dose was N-1 days before the note's day, "
          "within a day.", _course_day),
    _rule("duration", "A stated course length must match the span of the drug's orders in the admission; a "
          "planned total still running at discharge may continue after it, and a pause's length is no course.",
          _duration),
    _rule("given_in_window", "A drug statement whose stated details all match is confirmed by the matching rows "
          "of the window.", _given_in_window),
)
RULES = CHAIN
