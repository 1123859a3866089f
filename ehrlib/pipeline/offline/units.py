"""Putting a note's value on the scale its table item records.

A note writes "FiO2 40%" where the item records 0.4, "T 101.2" where the item is in °C,
"levophed 0.1 mcg/kg/min" where the infusion rate is charted in mcg/min. Comparing the
numbers as written calls all of these inconsistent. :func:`on_item_scale` converts a
note value to the item's recorded unit with one table of clinical conversions
(``unit_conversions.yaml``): by the units when both are known, and by the item's recorded
values when the note gives none (the value profile: 101.2 cannot be a °C temperature in a
stay whose temperatures run 36–39, but its °F→°C conversion, 38.4, can).

Why a table and not pint: pint (installable here) converts dimensions well, but the
conversions that matter at the bedside are not dimensional — mg/dL → µmol/L needs the
analyte's molar mass, a per-kilogram rate needs the patient's weight, a percent vs a
fraction is one dimensionless quantity on two scales, and the choice of scale when a note
omits the unit comes from the item's recorded values. A 20-row table states each of these
once, with the analytes it is valid for, and keeps the dependency set small.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ehrlib.datafiles import load_data

__all__ = ["Profile", "Scaled", "canonical_unit", "convert", "profile", "on_item_scale", "into_range"]


@dataclass(frozen=True, slots=True)
class Profile:
    """The range an item's recorded values span for this patient (min, max)."""

    low: float
    high: float

    def admits(self, value: float) -> bool:
        """Whether ``value`` is on this item's scale: within the recorded range widened
        by its own width (at least half the magnitude), so a real change still fits but a
        value on another scale (×100, °F for °C) does not.
        """
        width = max(self.high - self.low, 0.5 * max(abs(self.low), abs(self.high)))
        return self.low - width <= value <= self.high + width


@dataclass(frozen=True, slots=True)
class Scaled:
    """A note value on the item's scale; ``via`` says how (``as written`` or
    ``<from> -> <to>``).
    """

    value: float
    unit: str | None
    via: str


def _key(unit: str) -> str:
    u = unit.strip().lower().replace("degrees", "deg").replace("µ", "u")
    return re.sub(r"[\s.°?]+", "", u)


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], list[dict]]:
    doc = load_data("unit_conversions.yaml")
    aliases: dict[str, str] = {}
    for canon, spellings in doc["units"].items():
        for s in [canon, *spellings]:
            aliases.setdefault(_key(str(s)), canon)
    rows = []
    for c in doc["conversions"]:
        fwd = {"from": c["from"], "to": c["to"], "factor": float(c["factor"]), "offset": float(c.get("offset", 0.0)),
               "analytes": frozenset(a.lower() for a in c.get("analytes", ())), "per_weight": bool(c.get("per_weight"))}
        inv = dict(fwd, **{"from": c["to"], "to": c["from"], "factor": 1.0 / fwd["factor"],
                          "offset": -fwd["offset"] / fwd["factor"], "inverse": True})
        rows += [fwd, inv]
    return aliases, rows


def canonical_unit(text: str | None) -> str | None:
    """``"Deg. F"`` / ``"?F"`` / ``"°F"`` -> ``"degF"``; ``None`` for a unit the table does not know."""
    if not text or not text.strip():
        return None
    return _tables()[0].get(_key(text))


def _applies(row: dict, analyte: str | None) -> bool:
    return not row["analytes"] or (analyte is not None and analyte.lower() in row["analytes"])


def convert(value: float, from_unit: str, to_unit: str, *, analyte: str | None = None,
            weight_kg: float | None = None) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; ``None`` when the table has no
    conversion valid for ``analyte`` (or a per-weight one and no weight is known).
    """
    src, dst = canonical_unit(from_unit), canonical_unit(to_unit)
    if src is None or dst is None:
        return None
    if src == dst:
        return value
    for row in _tables()[1]:
        if row["from"] == src and row["to"] == dst and _applies(row, analyte):
            if row["per_weight"]:
                if not weight_kg or weight_kg <= 0:
                    return None
                factor = weight_kg if not row.get("inverse") else 1.0 / weight_kg
                return value * factor
            return value * row["factor"] + row["offset"]
    return None


def profile(values: Iterable[float | None]) -> Profile | None:
    """The :class:`Profile` of an item's recorded values (``None`` when there are none)."""
    vals = [float(v) for v in values if v is not None]
    return Profile(min(vals), max(vals)) if vals else None


def on_item_scale(value: float, item_unit: str | None, *, note_unit: str | None = None,
                  analyte: str | None = None, weight_kg: float | None = None,
                  item_values: Iterable[float | None] = ()) -> Scaled | None:
    """``value`` as the item records it, or ``None`` when the note's unit cannot be put
    on the item's scale.

    Both units known: convert (or refuse). One unit missing: the value as written when it
    fits the item's recorded values, else the first table conversion from the note's unit
    (or into the item's) whose result fits them; with no recorded values, the value as
    written. Neither unit known: only a conversion of this analyte (a molar mass, a count
    scale) whose result fits them; a generic one (°F/°C, lb/kg, percent) needs a unit on
    one side, or any number would be read as a temperature or a weight (CK 307 is no 307 °F).
    """
    dst = canonical_unit(item_unit)
    src = canonical_unit(note_unit)
    if note_unit and src is None:
        return None  # a unit the table does not know: no silent "as written"
    if src is not None and dst is not None:
        out = convert(value, src, dst, analyte=analyte, weight_kg=weight_kg)
        return None if out is None else Scaled(out, dst, "as written" if src == dst else f"{src} -> {dst}")
    prof = profile(item_values)
    if prof is None or prof.admits(value):
        return Scaled(value, src or dst, "as written")
    for row in _tables()[1]:
        if (src is not None and row["from"] != src) or (dst is not None and row["to"] != dst) \
                or not _applies(row, analyte) or (src is None and dst is None and not row["analytes"]):
            continue
        out = convert(value, row["from"], row["to"], analyte=analyte, weight_kg=weight_kg)
        if out is not None and prof.admits(out):
            return Scaled(out, row["to"], f"{row['from']} -> {row['to']}")
    return None


def into_range(value: float, unit: str | None, low: float, high: float, *, analyte: str | None = None) -> Scaled | None:
    """``value`` read on another scale of ``unit`` when only that reading is plausible.

    A WBC written ``12,400`` (cells/µL) is 12.4 K/µL; an FiO2 written ``0.4`` is 40 %.
    Tries each table conversion into ``unit`` (valid for ``analyte``; never a per-weight
    one, which needs a weight) and returns the first whose result lies in
    ``[low, high]``; ``None`` when the value as written is already in range or no scale
    makes it so.
    """
    dst = canonical_unit(unit)
    if dst is None or low <= value <= high:
        return None
    for row in _tables()[1]:
        if row["to"] != dst or row["per_weight"] or not _applies(row, analyte):
            continue
        out = value * row["factor"] + row["offset"]
        if low <= out <= high:
            return Scaled(out, dst, f"{row['from']} -> {dst}")
    return None
