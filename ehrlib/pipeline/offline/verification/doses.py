"""Comparing a stated rate, dose or route with an order or administration row.

Rates convert mg <-> mcg and per-hour <-> per-minute (a "vaso 0.04 u/min" is charted as
2.4 units/hour) and match within 5 %; doses compare only within one unit family
(``verification_terms.yaml``: mg with mcg, never mg with mL), within 1 % or inside an
order's "40-80" range; an infusion row's route is IV unless it says otherwise.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from ehrlib.pipeline.offline.verification.terms import terms

__all__ = ["rate_matches", "row_dose", "same_dose_unit", "dose_matches", "route_of"]


def rate_matches(rate: float, unit: str, r: Mapping[str, Any]) -> bool:
    obs = float(r["extra"]["rate"])
    runit = str((r.get("extra") or {}).get("rate_unit") or "").lower()
    note_unit = unit.lower()
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
    obs = row_dose(r)
    if obs is None:
        return False
    runit = str(r.get("unit") or "").lower()
    if unit in ("g", "gm", "grams", "gram") and runit.startswith("mg"):
        dose *= 1000
    if unit == "mg" and runit in ("g", "gm"):
        dose /= 1000
    text = str(r.get("value") or "")
    if "-" in text:  # "40-80" ranges in orders
        try:
            lo, hi = (float(x) for x in text.split("-")[:2])
            return lo - 1e-9 <= dose <= hi + 1e-9
        except ValueError:
            pass
    return abs(obs - dose) <= max(0.01 * dose, 1e-6)


def route_of(r: Mapping[str, Any]) -> str:
    if str(r.get("table", "")).startswith("inputevents"):
        return str((r.get("extra") or {}).get("route") or "iv").lower()  # infusions and IV boluses
    extra = r.get("extra") or {}
    return str(extra.get("route") or "").lower()
