"""Counted claims of a medication statement: blood-product units and "x3" administrations.

Orders cannot be counted, and point-charted rows (CareVue) chart amounts, not bags; rows
with their own start and end (MetaVision) are administrations once rows that touch are
merged (:func:`.doses.administrations`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.note_time import judged_part, judged_until
from ehrlib.pipeline.offline.timex import parse_datetime
from ehrlib.pipeline.offline.verification.clocktime import CHARTING_DELAY, clock_moments, parse_clock
from ehrlib.pipeline.offline.verification.deciding import num
from ehrlib.pipeline.offline.verification.doses import administrations
from ehrlib.pipeline.offline.verification.medrows import day_rows, med, names, rows, short_window
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import row_interval, tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["transfusion_units", "administration_count", "count_span"]

Rows = list[Mapping[str, Any]]
#: how long a unit of blood usually runs: a point-charted unit may be logged that long after its start
UNIT_HOURS = timedelta(hours=4)


def transfusion_units(c: Case) -> Verdict | None:
    """A stated number of blood-product units against the statement's day (or stated time).

    Counted rows: the units a statement names are the ones it is about, and other units
    of the day may be another statement's, so it is wrong only when fewer separate
    administrations are charted and their volume (a unit's volume from
    ``verification_terms.yaml``) is short too; pooled products are not counted.
    Point-charted rows, for a stated time only: the volume within a unit (or a quarter).
    """
    e, units = c.entity, med(c).units
    if units is None or str(e.claim.concept) != "transfusion" or not (e.time_text or short_window(e.window)):
        return None
    per_unit = next((v for pat, v in terms()["unit_volumes"].items() if re.search(pat, e.text, re.I)), 300.0)
    if per_unit is None:
        return None  # a pooled product: one charted bag may be several units
    inside = _near_clock(day_rows(c), e.time_text, e.window)
    given = administrations([r for r in inside if "ml" in str(r.get("unit") or "").lower()], float(per_unit))
    volume = sum(float(r["valuenum"]) for r in inside
                 if r.get("valuenum") is not None and "ml" in str(r.get("unit") or "").lower())
    estimate, stated = volume / float(per_unit), float(units)
    if given is not None:
        wrong = len(given) < stated and estimate < stated - 0.5
    else:
        wrong = bool(e.time_text) and volume > 0 and abs(estimate - stated) > max(1.0, 0.25 * stated)
    if not wrong:
        return None
    counted = f"{len(given)} administration(s), " if given is not None else ""
    return verdict(c, False, f"{e.text}: stated {int(units)} unit(s), recorded {counted}{volume:.0f} mL "
                   f"(~{estimate:.1f} units) in {tool_spec(e.window)}", inside[:6])


def _near_clock(rows: Rows, time_text: str | None, window: TimeSpan | None) -> Rows:
    """The rows of a stated clock time ("1 u PRBC given at 0200"): those charted within the
    clock tolerance of it on a day of the window (a point-charted unit is logged when it
    ends, so up to a unit's usual four hours after); all of them without a clock or when
    none is charted then.
    """
    clock = parse_clock(time_text)
    if clock is None:
        return rows
    moments = clock_moments(clock, window)
    tol = clock.tolerance
    out = [r for r in rows if (iv := row_interval(r)) and any(iv[0] - UNIT_HOURS - tol <= m <= iv[1] + tol
                                                              for m in moments)]
    return out or rows  # nothing charted then: the time is the timed-administration rule's to judge


def administration_count(c: Case) -> Verdict | None:
    """"KCl 20 mEq IV x3": about that many separate administrations (at the stated dose,
    when one was checked) are charted in the statement's window; one short is allowed,
    as a dose given just before the window or charted late is no contradiction. A count
    of one day ("x3 today", "x2 this AM", or undated in a progress or nursing note) is
    that day's (or part of day's) count, give or take the charting delay: fewer charted
    administrations then contradict it (:func:`count_span`), one short allowed for each
    five doses of a long tally, whose first or last may be charted across the day's edge.
    """
    count, m = med(c).units, med(c)
    if count is None or str(c.entity.claim.concept) == "transfusion":
        return None
    got = rows(c)
    dosed = [r for r in got if r.get("valuenum") is not None]
    # rows at the stated dose are each a full dose; else touching rows are one bag
    full = min(float(r["valuenum"]) for r in dosed) if m.dose is not None and dosed else None
    given = administrations(got, full)
    dose = f" at {num(m.dose)} {m.dose_unit or ''}".rstrip() if m.dose is not None else ""
    if given is not None and 0 < len(given) < int(count) - 1:  # one charted dose may sit outside the window
        return verdict(c, False, f"{names(c)}: stated x{int(count)}, recorded {len(given)} administration(s){dose}",
                       got[:6], deciding=got)  # the administrations counted decide
    span = count_span(c)
    if given is None or span is None:
        return None
    a, b = span[0] - CHARTING_DELAY, span[1] + CHARTING_DELAY
    then = [r for r in got if (iv := row_interval(r)) and iv[0] <= b and iv[1] >= a]
    day = administrations(then, full) or []
    if len(day) < int(count) - int(count) // 5:  # a long tally ("boluses x7") may miss one per five doses
        return verdict(c, False, f"{names(c)}: stated x{int(count)} on {span[0]:%Y-%m-%d}, recorded {len(day)} "
                       f"administration(s){dose} from {a:%Y-%m-%d %H:%M} to {b:%Y-%m-%d %H:%M}", (then or got)[:6],
                       deciding=then)
    return None


def count_span(c: Case) -> tuple[datetime, datetime] | None:
    """The day a stated count is about: a part of the note's day when its time is one
    ("x2 overnight"), the note's calendar day when its time names that day ("x3 today") or
    it has no time in a progress or nursing note (whose doses are its day's); None for a
    discharge summary, another stated time or a day that cannot be read.
    """
    e = c.entity
    if c.ctx.note_type == "discharge_summary":
        return None
    day = c.ctx.default_window().start
    ref = parse_datetime(day[:10]) if day else None
    if ref is None:
        return None
    midnight = datetime(ref.year, ref.month, ref.day)
    whole = (midnight, judged_until(c.ctx) or midnight + timedelta(days=1) - timedelta(seconds=1))  # up to the note
    if not e.time_text:
        return whole
    words = terms().get("note_day_words") or ["(?!)"]
    if re.fullmatch("(?:" + "|".join(words) + ")", re.sub(r"\s+", " ", e.time_text.strip()), re.I):
        return whole
    return judged_part(e.time_text, c.ctx)
