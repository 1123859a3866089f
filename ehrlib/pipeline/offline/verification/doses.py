"""Comparing a stated rate, dose or route with an order or administration row.

Rates convert mg <-> mcg, per-hour <-> per-minute (a "vaso 0.04 u/min" is charted as
2.4 units/hour) and per-kilogram <-> absolute with the weight charted on the infusion row,
and match within 5 %; doses compare only within one unit family
(``verification_terms.yaml``: mg with mcg, never mg with mL), within 1 % or inside an
order's "40-80" range, converting between the units of a family through the one clinical
conversion table (:mod:`ehrlib.pipeline.offline.units`: g -> mg, L -> mL); an input
row's route is IV unless it says otherwise. A dose written
without a unit ("atorvastatin 40") is read in the unit the drug's own rows record it in.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ehrlib.pipeline.offline.units import convert
from ehrlib.pipeline.offline.verification.clocktime import infusion_runs
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import row_interval

__all__ = ["charts_non_iv", "administrations", "total_matches", "summed_amounts", "bound_met", "rate_matches",
           "row_dose", "same_dose_unit", "dose_matches", "route_of", "unitless_matches"]


def _weight(r: Mapping[str, Any]) -> float | None:
    try:
        w = float((r.get("extra") or {}).get("weight") or 0)
    except (TypeError, ValueError):
        return None
    return w if 0 < w < 500 else None


def rate_matches(rate: float, unit: str, r: Mapping[str, Any]) -> bool:
    """Whether an infusion row's rate matches the stated rate and unit.

    A per-kilogram rate ("levo 0.1 mcg/kg/min") and an absolute one ("neo 100 mcg/min")
    are compared through the weight charted with the infusion row itself.
    """
    obs = float(r["extra"]["rate"])
    runit = str((r.get("extra") or {}).get("rate_unit") or "").lower()
    note_unit = unit.lower()
    if not note_unit.strip():  # "titrated up to 2.5", "now 0.12": the rate in the row's own unit
        return abs(obs - rate) <= max(0.05 * abs(rate), 0.01)
    note_kg, row_kg = bool(re.search(r"/\s*kg", note_unit)), "kg" in runit
    if note_kg != row_kg and (weight := _weight(r)) is not None:
        if note_kg:
            rate, note_unit = rate * weight, re.sub(r"/\s*kg", "", note_unit)
        else:
            rate, note_unit = rate / weight, note_unit.replace("/", "/kg/", 1)
    if "mg" in note_unit and "mcg" in runit:
        rate *= 1000
    if "mcg" in note_unit and "mg" in runit and "mcg" not in runit:
        rate /= 1000
    if re.search(r"/h", note_unit) and "min" in runit:
        rate /= 60
    if re.search(r"/\s*min", note_unit) and re.search(r"/\s*h", runit) and "kg" not in note_unit:
        rate *= 60  # "vaso 0.04 u/min" charted as 2.4 units/hour
    return abs(obs - rate) <= max(0.05 * abs(rate), 0.01)


def row_dose(r: Mapping[str, Any]) -> float | None:
    """The dose a medication row records, or None."""
    v = r.get("valuenum")
    if v is None:
        try:
            return float(str(r.get("value") or "").split("-")[0])
        except ValueError:
            return None
    return float(v)


def same_dose_unit(unit: str, r: Mapping[str, Any]) -> bool:
    """Whether a row's dose can be compared with the note's (mg vs mcg yes, mg vs mL no)."""
    runit = re.sub(r"[^a-z]", "", str(r.get("unit") or "").lower())
    families = terms()["dose_units"]
    a, b = families.get(unit.lower()), families.get(runit)
    return a is not None and a == b


def dose_matches(dose: float, unit: str, r: Mapping[str, Any]) -> bool:
    """Whether a medication row's dose matches the stated dose and unit (converted to the
    row's unit when the table knows how; an unknown pair is compared as written).
    """
    obs = row_dose(r)
    if obs is None:
        return False
    runit = str(r.get("unit") or "")
    if unit and runit:
        dose = convert(dose, unit, runit) or dose
    text = str(r.get("value") or "")
    if "-" in text:  # "40-80" ranges in orders
        try:
            lo, hi = (float(x) for x in text.split("-")[:2])
            return lo - 1e-9 <= dose <= hi + 1e-9
        except ValueError:
            pass
    return abs(obs - dose) <= max(0.01 * dose, 1e-6)


def unitless_matches(number: float, r: Mapping[str, Any]) -> bool | None:
    """Whether a number written right after a drug name with no unit ("labetalol 400",
    "levophed 0.08") is the row's dose or, for an infusion row, its rate, each in the
    row's own unit; None when the row records neither.
    """
    rate = (r.get("extra") or {}).get("rate")
    if row_dose(r) is None and rate is None:
        return None
    if row_dose(r) is not None and dose_matches(number, "", r):
        return True
    return rate is not None and abs(float(rate) - number) <= max(0.05 * abs(number), 0.01)


def route_of(r: Mapping[str, Any]) -> str:
    """The route of a medication row (input rows are IV unless they say otherwise)."""
    if str(r.get("table", "")).startswith("inputevents"):
        return str((r.get("extra") or {}).get("route") or "iv").lower()
    extra = r.get("extra") or {}
    return str(extra.get("route") or "").lower()


def administrations(rows: Sequence[Mapping[str, Any]], dose: float | None = None
                    ) -> list[tuple[datetime, datetime]] | None:
    """The separate administrations among rows with a start and an end (MetaVision).

    A bag charted over several rate changes is several touching rows of partial amounts:
    touching rows are one administration while together they stay within one ``dose``
    (in the rows' unit; any amount when None), so back-to-back bags of a full dose each
    stay separate. None when no row has an interval of its own (point-charted CareVue
    rows and orders cannot be counted).
    """
    ivs = sorted((iv, row_dose(r)) for r in rows if str(r.get("table", "")).startswith("inputevents")
                 and r.get("end") and (iv := row_interval(r)) is not None)
    if not ivs:
        return None
    out: list[tuple[datetime, datetime]] = []
    held = 0.0
    for (a, b), amount in ivs:
        part = amount or 0.0
        if out and a <= out[-1][1] + timedelta(minutes=1) and (dose is None or held + part <= 1.05 * dose):
            out[-1] = (out[-1][0], max(out[-1][1], b))
            held += part
        else:
            out.append((a, b))
            held = part
    return out


def total_matches(dose: float, unit: str, rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether administrations among ``rows`` add up to the stated amount, each row's
    amount put in the stated unit and the sum within 1 % (:func:`summed_amounts`).
    """
    return any(abs(total - dose) <= max(0.01 * dose, 1e-6) for total in summed_amounts(rows, unit))


def summed_amounts(rows: Sequence[Mapping[str, Any]], unit: str) -> list[float]:
    """The amounts, in ``unit``, that administrations among ``rows`` add up to. An amount is
    given in parts in three ways: one bolus charted as touching or overlapping rows ("LR
    1 L" as 250 + 750 mL; a run, :func:`.clocktime.infusion_runs`), a day's doses ("2.4 L
    total today" over hourly rows, "magnesium sulfate 4 gm" as two 2 g bags), or all of
    ``rows``. Only groups of two or more rows count (one row is a dose, not a total);
    orders are no administrations.
    """
    given = [r for r in rows if row_dose(r) is not None and str(r.get("table", "")).startswith("inputevents")]
    days: dict[str, list[Mapping[str, Any]]] = {}
    for r in given:
        days.setdefault(str(r.get("time") or "")[:10], []).append(r)
    groups = [given, *days.values(), *(run for _, _, run in infusion_runs(given))]
    return [_amount(g, unit) for g in groups if len(g) > 1]


def bound_met(bound: str, dose: float, unit: str, rows: Sequence[Mapping[str, Any]]) -> bool | None:
    """Whether a bounded amount (">3.5 L": ``bound`` "min"; "<1 L": "max") is met by the
    rows' doses and sums (:func:`summed_amounts`) in ``unit``; None when no row has a dose.
    """
    amounts = [_amount([r], unit) for r in rows if row_dose(r) is not None] + summed_amounts(rows, unit)
    if not amounts:
        return None
    return max(amounts) >= 0.99 * dose if bound == "min" else max(amounts) <= 1.01 * dose


def _amount(rows: Sequence[Mapping[str, Any]], unit: str) -> float:
    """The summed dose of rows, each converted to ``unit`` when the table knows how."""
    total = 0.0
    for r in rows:
        obs = row_dose(r) or 0.0
        runit = str(r.get("unit") or "")
        total += (convert(obs, runit, unit) if unit and runit else None) or obs
    return total


def charts_non_iv(r: Mapping[str, Any]) -> bool:
    """Whether a row may be a non-IV dose charted without its route: MetaVision charts
    subcutaneous insulin or heparin in the same table as IV boluses, so its rows support
    an IV route but are no evidence against a stated SC or PO one.
    """
    return str(r.get("table", "")) == "inputevents_mv" and not (r.get("extra") or {}).get("route")
