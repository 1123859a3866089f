"""Comparing a stated number with a charted one: tolerance, thresholds, temperature units.

Numeric tolerance is by unit: the concept's ``tol`` in ``offline_lexicon.yaml`` (labs:
half the reported precision, e.g. 0.05 for Cr; vitals 2-3 units; temperature 0.3 °F),
with 1 % of large values; °F/°C are converted by the item's label/unit.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

__all__ = ["value_matches", "is_celsius", "convert_temp", "in_celsius", "in_fahrenheit",
           "temp_match"]


def value_matches(stated: float, observed: float, tol: float) -> bool:
    return abs(stated - observed) <= tol + 1e-9 or (abs(stated) >= 50 and abs(stated - observed) <= 0.01 * abs(stated))


def is_celsius(row: Mapping[str, Any]) -> bool:
    text = f"{row.get('label', '')} {row.get('unit', '')}".lower()
    return bool(re.search(r"\bc\b|celsius|°c|\?c|deg c", text)) or (
        row.get("valuenum") is not None and float(row["valuenum"]) < 50)


def convert_temp(value: float, unit: str | None, row: Mapping[str, Any]) -> tuple[float, float]:
    """(note value in the row's unit, tolerance scale)."""
    row_c = is_celsius(row)
    note_c = (unit or "").upper() == "C" or value < 50
    if note_c and not row_c:
        return value * 9 / 5 + 32, 1.0
    if not note_c and row_c:
        return (value - 32) * 5 / 9, 5 / 9
    return value, 1.0 if not row_c else 5 / 9


def in_celsius(v: float, row: Mapping[str, Any]) -> float:
    return v if is_celsius(row) else (v - 32) * 5 / 9


def in_fahrenheit(v: float, row: Mapping[str, Any]) -> float:
    return v * 9 / 5 + 32 if is_celsius(row) else v


def temp_match(target: float, row: Mapping[str, Any]) -> bool:
    """A stated temperature (either unit) against one charted row, ±0.3 °F."""
    v, scale = convert_temp(target, None, row)
    return row.get("valuenum") is not None and abs(v - float(row["valuenum"])) <= 0.3 * scale
