"""Range and maximum statements against the extremes of their day ("HR 85-130", "Tmax 102.3").

A stated range reports the charted minimum and maximum of its day (a nursing note's: one
12-hour shift's), not only two values that occur. A stay may chart one measurement on
several items of different sites or devices (an arterial line and a cuff; pulse oximetry
and a blood gas's SaO2): a range that one site's rows of the window match is not
contradicted by another site's rows when that site charts the measurement at least as
often, since the note may report that site alone: it is left unverified with that reason. A
temperature is one measurement whatever its item or unit (a Tmax is the highest of all).
A reading charted after the note (inside the charting slack) cannot have been among the
readings the note summarised: it may support a stated range, never break it alone. A nursing
note reports the shift that ends at it: a night nurse's morning note covers the evening
before too, not only the hours since midnight its calendar day holds; and the maximum (a
Tmax) of a timed nursing note is one shift's, so the night before a day nurse's evening note
does not break it (a note without a clock time has no shift to read).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import BloodPressure, NumericClaim
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.note_time import SHIFT, note_time_of
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.bounds import BP_CONCEPTS as _BP_CONCEPTS
from ehrlib.pipeline.offline.verification.bounds import bp_part as _bp_part
from ehrlib.pipeline.offline.verification.deciding import at_row, num, span
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.offline.verification.terms import concept_of, terms
from ehrlib.pipeline.offline.verification.values import in_celsius, in_fahrenheit
from ehrlib.pipeline.offline.verification.windows import core_window, in_window, parse_time, shift_matches
from ehrlib.pipeline.records import Verdict

__all__ = ["range_extremes_rule"]

Rows = list[Mapping[str, Any]]


def range_extremes_rule(numeric_of: Callable[[Case], Rows], tolerance: Callable[[Case], float]) -> Rule[Any]:
    """The rule, bound to the number rules' readers of a statement's numeric rows and tolerance."""

    def _range_extremes(c: Case) -> Verdict | None:
        """A stated range or maximum is a claim about the extremes of its day (flowsheet "HR 85-130",
        "Tmax 102.3", "peaked at 12.7"): the charted minimum/maximum of the core window must match, not only appear.
        """
        numeric = numeric_of(c)
        concept, tol = concept_of(c.entity.claim), tolerance(c)
        found = _extremes_reason(c, numeric, concept, tol)
        if found is None:
            return None
        late = _seen_before_note(c, numeric, found[1])
        if late is not None and _extremes_reason(c, late, concept, tol) is None:
            return unverified(c, f"{found[0]}; but that row was charted after the note, and the rows charted before "
                              "it match the stated range", late[-3:] + [found[1]])
        breaking = _site(found[1])
        rival = _charted(c, [r for r in numeric if _site(r) == breaking], found[1])
        for site in dict.fromkeys(_site(r) for r in numeric) if concept is None or concept.cid != "temperature" else ():
            own = [r for r in numeric if _site(r) == site]
            if site != breaking and _charted(c, own, found[1]) >= max(3, rival) and _extremes_reason(
                    c, own, concept, tol) is None:
                return unverified(c, f"{found[0]}; but the {site} rows of the window match the stated range, so the "
                                  f"statement may report that site's readings, not {breaking}'s", own[:3] + [found[1]])
        return verdict(c, False, found[0], numeric[:5], deciding=[found[1]])

    return Rule("numbers.range_extremes", "A vital-sign range or maximum reports the extremes of its day, so the day's "
                "charted minimum and maximum must match it, not merely fall inside.", _range_extremes,
                ("measurement", "range", "output", "trend"))


def _seen_before_note(c: Case, numeric: Rows, extreme: Mapping[str, Any]) -> Rows | None:
    """The rows charted up to the note's own time when the breaking ``extreme`` was charted after it (within
    the charting slack), else None (a discharge summary, a note without a clock time, an earlier extreme).
    """
    moment = note_time_of(c.ctx).moment
    when = parse_time(extreme.get("time"))
    if c.ctx.note_type == "discharge_summary" or moment is None or when is None or when <= moment:
        return None
    return [r for r in numeric if (t := parse_time(r.get("time"))) is None or t <= moment]


def _reported_day(c: Case, core: TimeSpan | None) -> TimeSpan | None:
    """The hours a nursing note's range reports: its core window (the calendar day cut at the note's
    cutoff) reaching back to the start of the shift that ends at the note, when that shift began the day
    before (a morning note); else the core window itself.
    """
    nt = note_time_of(c.ctx)
    if core is None or c.ctx.note_type != "nursing" or nt.moment is None or nt.cutoff is None:
        return core
    start = parse_time(core.start)
    if start is None or parse_time(core.end) != nt.cutoff or start <= nt.moment - SHIFT:
        return core
    return TimeSpan((nt.moment - SHIFT).strftime("%Y-%m-%d %H:%M:%S"), core.end)


def _site(row: Mapping[str, Any]) -> str:
    """The measurement site or device of a row's item, without the BP part ("Arterial BP [Systolic]" and
    "Arterial BP [Mean]" are one site; "NBP [Systolic]", "SaO2" and "O2 saturation pulseoxymetry" are others).
    """
    label = re.sub(r"\b(?:systolic|diastolic|mean|sys|dias)\b|[\[\]()]", " ", str(row.get("label") or ""), flags=re.I)
    return " ".join(label.split())


def _charted(c: Case, own: Rows, breaking: Mapping[str, Any]) -> int:
    """How many rows of ``own`` in the core window chart the breaking row's BP part (any row, for other concepts):
    a site agrees only when it charts the measurement at least as often as the site that breaks the range, so a
    few blood-gas saturations cannot outvote the oximeter.
    """
    core = _reported_day(c, core_window(c.entity.window))
    part = _bp_part(str(breaking.get("label", "")))
    return sum((core is None or in_window(r, core)) and _bp_part(str(r.get("label", ""))) == part for r in own)


def _extremes_reason(c: Case, numeric: Rows, concept: Concept | None, tol: float
                     ) -> tuple[str, Mapping[str, Any]] | None:
    """(reason, the extreme row) of the first stated extreme the charted one breaks; None when all hold."""
    e, n = c.entity, c.claim_as(NumericClaim)
    r = n.reading
    only_max = r.max_lo is not None and r.min is None  # "peaked at 12.7", "Tmax 102.3"
    if concept is None or (concept.cid not in terms()["vital_concepts"] and not only_max):
        return None  # lab and output ranges summarise typical values; vitals ranges are min..max
    core = _reported_day(c, core_window(e.window))
    word = n.trend.word if n.trend is not None else None
    if core is not None and (str(word or "").startswith(("peak", "nadir")) or (only_max and n.trend is not None)):
        rows = [row for row in numeric if str(row.get("time"))[:10] <= str(core.end)[:10]]  # a peak: the course
    else:
        rows = [row for row in numeric if in_window(row, core)] if core is not None else (
            numeric if only_max else [])
    if not rows:
        return None
    is_temp = concept is not None and concept.cid == "temperature"
    checks: list[tuple[str, float, float | None, str]] = []
    if n.bp is not None and any(n.bp.part(p).min is not None or n.bp.part(p).max is not None
                                for p in BloodPressure.PARTS):  # "SBP 90-140", "MAP 50s-70s"
        for part in BloodPressure.PARTS:
            p = n.bp.part(part)
            if p.min is not None and p.max is not None and not (
                    p.min_hi is not None and (p.min, p.min_hi) == (p.max_lo, p.max)):  # one decade is a level
                checks.append(("min", float(p.min), p.min_hi, part))
                checks.append(("max", float(p.max_lo if p.max_lo is not None else p.max), float(p.max), part))
    elif r.min is not None and r.max is not None and r.max != r.min and not (
            float(r.max) - float(r.min) == 9 and r.max_lo is None):
        checks.append(("min", float(r.min), r.min_hi, "value"))
        checks.append(("max", float(r.max_lo if r.max_lo is not None else r.max), float(r.max), "value"))
    elif r.max_lo is not None and r.min is None and r.max is not None:
        checks.append(("max", float(r.max_lo), float(r.max), "value"))
    if concept.cid in _BP_CONCEPTS and checks and checks[0][3] == "value":
        part_of = "mean" if re.search(r"map|mean", e.text, re.I) else "systolic"
        checks = [(k, lo, hi, part_of) for k, lo, hi, _ in checks]
    lo_ok = float(concept.lo) if concept.lo is not None else float("-inf")
    if any(lo < lo_ok for _, lo, _, _ in checks):
        lo_ok = float("-inf")  # the note itself reports the artefact ("RR 12 (0 - 17)")
    for kind, lo, hi, part in checks:
        kept = [row for row in rows
                if (part == "value" or _bp_part(str(row.get("label", ""))) == part) and float(row["valuenum"]) >= lo_ok]
        if not kept:
            continue
        vals = [float(row["valuenum"]) for row in kept]
        if is_temp:  # every row in the note's unit (a stay may chart C and F items)
            note_c = str(n.unit or "").upper() == "C" or lo < 50
            kept = rows
            vals = [(in_celsius(float(row["valuenum"]), row) if note_c else in_fahrenheit(float(row["valuenum"]), row))
                    for row in rows]
        observed = min(vals) if kind == "min" else max(vals)
        top = hi if hi is not None else lo
        slack = max(tol, 0.02 * abs(observed)) if not is_temp else 0.3
        if not (lo - slack <= observed <= float(top) + slack):
            extreme = kept[vals.index(observed)]
            mine = {k: span(a, b) for k, a, b, p in checks if p == part}
            one_shift = len(mine) == 2 or (set(mine) == {"max"} and note_time_of(c.ctx).moment is not None)
            if one_shift and c.ctx.note_type == "nursing" and shift_matches(
                    kept, vals, [(k, a, b) for k, a, b, p in checks if p == part], slack):
                continue
            what = f"{part} " if part != "value" else ""
            if len(mine) == 2:  # a stated min..max against the charted min..max
                sep = " to " if "-" in mine["min"][1:] + mine["max"][1:] else "-"
                said, charted = f"{mine['min']}{sep}{mine['max']}", f"range {span(min(vals), max(vals))}"
            else:
                said, charted = f"{kind} {mine[kind]}", f"{kind} {num(observed)}"
            return f"{e.text}: stated {what}{said} vs charted {what}{charted} {at_row(extreme)}", extreme
    return None
