"""Comparing a stated number with a charted one: tolerance, thresholds, temperature units.

Numeric tolerance is by unit: the concept's ``tol`` in ``offline_lexicon.yaml`` (labs:
half the reported precision, e.g. 0.05 for Cr; vitals 2-3 units; temperature 0.3 °F),
with 1 % of large values; °F/°C are converted by the item's label/unit.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["value_matches", "is_celsius", "convert_temp", "in_celsius", "in_fahrenheit",
           "temp_match", "written_precision", "rescaled_from"]


def value_matches(stated: float, observed: float, tol: float) -> bool:
    """Whether a stated number matches an observed one: within ``tol``, or 1 % for values of 50 and more."""
    return abs(stated - observed) <= tol + 1e-9 or (abs(stated) >= 50 and abs(stated - observed) <= 0.01 * abs(stated))


_WRITTEN = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\d.]\d)")


def _written(text: str | None) -> list[tuple[float, int]]:
    """(number, decimals written) of every number of ``text``."""
    return [(float(m.group(1).replace(",", "") + "." + (m.group(2) or "0")), len(m.group(2) or ""))
            for m in _WRITTEN.finditer(text or "")]


def written_precision(text: str | None, value: float | None) -> float | None:
    """Half the last written digit of ``value`` as ``text`` writes it ("34" -> 0.5, "7.8" -> 0.05): a
    number is met by any value that rounds to it. None when the text does not write the value.
    """
    if value is None:
        return None
    return next((0.5 * 10.0 ** -d for x, d in _written(text) if abs(x - float(value)) < 1e-9), None)


def rescaled_from(text: str | None, value: float | None) -> float | None:
    """The number ``text`` writes when the claim's ``value`` is not it but that one number read on
    another scale ("Glucose-1" claimed as 18 mg/dL); None when the text writes the value itself.
    """
    nums = _written(text)
    if value is None or not value or any(abs(x - float(value)) < 1e-9 for x, _ in nums) or len(nums) != 1:
        return None
    return nums[0][0]


def is_celsius(row: Mapping[str, Any]) -> bool:
    """Whether a temperature row is in Celsius (by its label or unit, or a value under 50)."""
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
    """A stated temperature in the row's Celsius scale."""
    return v if is_celsius(row) else (v - 32) * 5 / 9


def in_fahrenheit(v: float, row: Mapping[str, Any]) -> float:
    """A stated temperature in the row's Fahrenheit scale."""
    return v * 9 / 5 + 32 if is_celsius(row) else v


def temp_match(target: float, row: Mapping[str, Any]) -> bool:
    """A stated temperature (either unit) against one charted row, ±0.3 °F."""
    v, scale = convert_temp(target, None, row)
    return row.get("valuenum") is not None and abs(v - float(row["valuenum"])) <= 0.3 * scale
