"""Number rules: stated values, ranges, min/max, daily totals and arrow series.

Every number the note states (value, min, max, the BP mean, the braces' extremes) must be met by some row in the window
within the concept's tolerance; a decade ("120s") is met by any value in it. A vital-sign range is the day's charted
minimum..maximum (a nursing note's, one 12-hour shift's: :func:`.windows.shift_matches`); a per-day amount is a day's
sum (:mod:`.daily_totals`), and a range's extremes are judged per measurement site (:mod:`.extremes`); an arrow
series must appear in time order. A reference word after the value ("WBC 16.2 (WNL)") is judged against the
concept's reference interval.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.absence import value_absent
from ehrlib.pipeline.offline.verification.bounds import bp_part as _bp_part
from ehrlib.pipeline.offline.verification.daily_totals import DAILY_TOTAL, PART_TOTAL
from ehrlib.pipeline.offline.verification.deciding import at_row, gap, nearest, num, span, time_distance
from ehrlib.pipeline.offline.verification.draws import at_stamp, series_rows
from ehrlib.pipeline.offline.verification.extremes import range_extremes_rule
from ehrlib.pipeline.offline.verification.item_scale import statement_scale
from ehrlib.pipeline.offline.verification.line_draws import line_draw
from ehrlib.pipeline.offline.verification.qualifiers import normal_range, qualifier_holds, reference_qualifier
from ehrlib.pipeline.offline.verification.session import Case, decide, unverified, verdict
from ehrlib.pipeline.offline.verification.specimens import OTHER_SPECIMEN
from ehrlib.pipeline.offline.verification.stated import stated_numbers
from ehrlib.pipeline.offline.verification.terms import concept_of, tolerance_of
from ehrlib.pipeline.offline.verification.values import (
    convert_temp,
    rescaled_from,
    value_matches,
    written_precision,
)
from ehrlib.pipeline.offline.verification.windows import parse_time
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "CHAIN", "OTHER_SPECIMEN", "NO_RECORD", "PART_TOTAL", "DAILY_TOTAL", "VALUE_IN_WINDOW",
           "RANGE_EXTREMES", "SERIES_ORDER", "REFERENCE_WORD", "stated_numbers"]

_KINDS = ("measurement", "range", "output", "trend")
Rows = list[Mapping[str, Any]]


def _numeric(c: Case) -> Rows:
    return [r for r in c.item_rows()[0] if r.get("valuenum") is not None]


def _tolerance(c: Case) -> float:
    """The concept's tolerance, widened to the precision the value was written with ("Hct 34" is any
    charted 33.5-34.5) and to 10 % for an approximate value.
    """
    n = c.claim_as(NumericClaim)
    tol = tolerance_of(concept_of(n))
    written = written_precision(c.entity.value, n.reading.value)
    if written is not None:
        tol = max(tol, written)
    if n.approx:
        tol = max(tol, 0.1 * float(n.reading.value or 0))
    return tol


def _value_in_window(c: Case) -> Verdict | None:
    e, n, numeric = c.entity, c.claim_as(NumericClaim), at_stamp(c, series_rows(c) or _numeric(c))  # .draws
    concept = concept_of(n)
    onto, via, factor = statement_scale(stated_numbers(n), n.unit, concept, c.item_rows()[1] or numeric)  # .item_scale
    found = _compare(c, numeric, onto, factor)
    written = None if n.unit or (concept is not None and concept.cid == "temperature") else rescaled_from(
        e.value, n.reading.value)  # a value without a unit that the extractor read on another scale
    if written is not None and via == "as written":
        via = f"{num(written)} as written read as {num(float(n.reading.value or 0))}"
    if found.failed and via != "as written":
        ratio = 1.0 if written is None else written / float(n.reading.value or 1)
        raw = _compare(c, numeric, lambda v: v * ratio, 1.0)
        if not raw.failed:
            found, via = raw, "as written"  # the value as written is charted: no conversion was due
        elif written is not None:  # a scale guessed from the concept's range alone cannot make a contradiction
            shown = "; ".join(f"{num(r['valuenum'])} {at_row(r)}" for r in found.missed)
            return unverified(c, f"{e.text}: stated {', '.join(found.failed)} only on a guessed scale ({via}), and "
                              f"neither it nor the value as written meets the closest charted {shown or 'none'}",
                              numeric[:5])
    if found.failed:
        if via == "as written" and (draw := line_draw(c, _tolerance(c))) is not None:  # .line_draws
            return verdict(c, True, f"{e.text}: stated {', '.join(found.stated)} vs charted "
                           f"{num(draw.rows[0]['valuenum'])} {at_row(draw.rows[0])}, the draw at {draw.time} that "
                           f"all {draw.missed} values of the line missing the window match: it dates the line",
                           draw.rows, deciding=draw.rows)
        shown = "; ".join(f"{num(r['valuenum'])} {at_row(r)}" for r in found.missed)
        return verdict(c, False, f"{e.text}: stated {', '.join(found.failed)} vs closest charted {shown or 'none'}",
                       numeric[:5], deciding=found.missed)
    refined = decide(c, (RANGE_EXTREMES, SERIES_ORDER))
    if refined is not None:
        return refined
    scale_note = f" (on the item's scale: {via})" if via != "as written" else ""
    return verdict(c, True, f"{e.text}: stated {', '.join(found.stated)} vs charted "
                   f"{', '.join(f'{num(x)} {at_row(r)}' for r, x in found.closest)}{scale_note}", found.matched,
                   deciding=[r for r, _ in found.closest])


@dataclass(frozen=True, slots=True)
class _Compared:
    """Each stated number of a statement against the window's rows."""

    stated: list[str]  # the numbers as compared, for the reason
    failed: list[str]  # those no row meets
    matched: Rows  # per met number, the first row meeting it
    closest: list[tuple[Mapping[str, Any], float]]  # per number: the row closest it, and its value
    missed: Rows  # the rows closest the numbers not charted: they show what was


def _compare(c: Case, numeric: Rows, onto: Callable[[float], float], factor: float) -> _Compared:
    """Every stated number, put on the item's scale by ``onto`` (tolerance times ``factor``), against ``numeric``."""
    e, n = c.entity, c.claim_as(NumericClaim)
    concept = concept_of(n)
    tol = _tolerance(c)
    out = _Compared([], [], [], [], [])
    for part, value, upper in ((p, onto(lo), None if hi is None else onto(hi)) for p, lo, hi in stated_numbers(n)):
        cands = numeric
        if part != "value":
            cands = [r for r in numeric if _bp_part(str(r.get("label", ""))) in (part, None)] or numeric
        out.stated.append(f"{part + ' ' if part != 'value' else ''}{span(value, upper)}")
        hit = None
        best: tuple[bool, float, float, Mapping[str, Any]] | None = None  # (disagrees, value gap, time gap, row)
        for r in cands:
            obs = float(r["valuenum"])
            v, scale = (value, factor)
            if concept is not None and concept.cid == "temperature":
                v, scale = convert_temp(value, n.unit, r)
            u = v if upper is None else upper if scale == factor else convert_temp(upper, n.unit, r)[0]
            ok = v - tol * scale <= obs <= u + tol * scale if upper is not None else value_matches(v, obs, tol * scale)
            if ok and hit is None:
                hit = r
            score = (not ok, gap(obs, v, u) / scale, time_distance(r, e.window))
            if best is None or score < best[:3]:
                best = (*score, r)
        if best is not None:
            out.closest.append((best[3], float(best[3]["valuenum"])))
        if hit is None:
            out.failed.append(out.stated[-1])
            out.missed.extend([best[3]] if best is not None else [])
        else:
            out.matched.append(hit)
    return out


def _series_order(c: Case) -> Verdict | None:
    """An arrow series: each value recorded in the window, in the stated order."""
    trend = c.claim_as(NumericClaim).trend
    raw = trend.series if trend is not None else ()
    if not raw:
        return None
    e, tol = c.entity, _tolerance(c)
    series = [float(x) for x in raw]
    said = " -> ".join(num(x) for x in series)
    hits: Rows = []
    ordered = sorted(_numeric(c), key=lambda r: str(r.get("time")))
    last: datetime | None = None
    for value in series:
        cands = [r for r in ordered if value_matches(value, float(r["valuenum"]), tol)]
        if not cands:
            near = nearest(ordered, [(value, value)], e.window)
            return verdict(c, False, f"{e.text}: stated {num(value)} of {said} vs nearest charted "
                           f"{'; '.join(num(r['valuenum']) + ' ' + at_row(r) for r in near) or 'none'}", ordered[:5],
                           deciding=near)
        later = [r for r in cands if last is None or (parse_time(r.get("time")) or datetime.min) >= last]
        if not later:
            return verdict(c, False, f"{e.text}: stated series {said}, but {num(value)} is charted only before "
                           f"{num(hits[-1]['valuenum'])} {at_row(hits[-1])}", cands[:3], deciding=[hits[-1], cands[-1]])
        hits.append(later[0])
        last = parse_time(later[0].get("time"))
    return verdict(c, True, f"{e.text}: stated series {said} charted in order", hits, deciding=hits)


def _reference_word(c: Case) -> Verdict | None:
    """"WBC 16.2 (WNL)" / "Cr 2.1 (elevated)": a recorded value whose reference word contradicts the
    concept's adult reference interval is inconsistent; otherwise the number rules decide.
    """
    e, line, n = c.entity, c.line(), c.claim_as(NumericClaim)
    if line is None or e.span is None or n.reading.value is None:
        return None
    q = reference_qualifier(line, e.span[1])
    if q is None:
        return None
    v = decide(c, CHAIN)
    if v is None or v.label != "consistent":
        return v
    concept = str(n.concept)
    value = float(n.reading.value)
    holds = qualifier_holds(q, concept, value)
    if holds is None or holds:
        return v
    lo, hi = normal_range(concept, value) or (0.0, 0.0)
    return Verdict(e.entity_id, "inconsistent", "contradiction", f"{e.text}: stated {num(value)} {q.text} vs "
                   f"reference {span(lo, hi)} (charted {num(value)})", v.evidence_row_ids, v.tool_calls,
                   deciding_row_ids=v.deciding_row_ids)


NO_RECORD = Rule("numbers.no_record", "A stated value whose item has no numeric record in the window is missing "
                 "from the record when the record could show it: the item is charted in the admission and "
                 "the tables that chart it have rows of the patient in the window.", value_absent, _KINDS)
VALUE_IN_WINDOW = Rule("numbers.value_in_window", "Every number a statement gives is met by a charted value of its "
                       "item in the statement's window, within the unit's tolerance, on the item's recorded scale.",
                       _value_in_window, _KINDS)
RANGE_EXTREMES = range_extremes_rule(_numeric, _tolerance)
SERIES_ORDER = Rule("numbers.series_order", "An arrow series of values claims both the values and their order, so "
                    "each must be charted after the one before it.", _series_order, _KINDS)
REFERENCE_WORD = Rule("numbers.reference_word", "A reference word set off after a value (WNL, elevated, low) "
                      "interprets that value, which must then lie inside, above or below the adult reference "
                      "interval.", _reference_word, ("measurement", "range", "output"))

#: what the engine runs for a number claim (extremes and series refine a matched value)
CHAIN = (OTHER_SPECIMEN, NO_RECORD, PART_TOTAL, DAILY_TOTAL, VALUE_IN_WINDOW)
RULES = (OTHER_SPECIMEN, NO_RECORD, PART_TOTAL, DAILY_TOTAL, VALUE_IN_WINDOW, RANGE_EXTREMES, SERIES_ORDER,
         REFERENCE_WORD)
