"""Stated numbers put on the scale the item records, before any comparison.

A note writes FiO2 80 % where the item charts 0.8, or a temperature in °F against a °C
item. The conversion is chosen once per statement by :func:`ehrlib.pipeline.offline.units.on_item_scale`
from the note's unit (the concept's when none is written), the rows' unit and the item's
recorded values for the admission, and then applied to every number of the statement.
Temperature keeps its own dedicated conversion (:mod:`.values`), which also scales the
tolerance.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ehrlib.pipeline.offline.units import canonical_unit, convert, on_item_scale

__all__ = ["onto_item_scale", "statement_scale"]


def onto_item_scale(first: float, note_unit: str | None, rows: Sequence[Mapping[str, Any]],
                    analyte: str | None) -> tuple[Callable[[float], float], str]:
    """(a function putting a stated number on the rows' scale, how) for a statement whose
    first stated number is ``first``; the identity when the value already fits or no
    conversion of the table makes it fit.
    """
    values = [float(r["valuenum"]) for r in rows if r.get("valuenum") is not None]
    units = {str(r.get("unit")) for r in rows if r.get("unit") and canonical_unit(str(r.get("unit")))}
    item_unit = next(iter(units)) if len(units) == 1 else None
    scaled = on_item_scale(first, item_unit, note_unit=note_unit if canonical_unit(note_unit) else None,
                           analyte=analyte, item_values=values)
    if scaled is None or scaled.via == "as written" or " -> " not in scaled.via:
        return (lambda v: v), "as written"
    src, dst = scaled.via.split(" -> ")

    def onto(v: float) -> float:
        out = convert(v, src, dst, analyte=analyte)
        return v if out is None else out
    return onto, scaled.via


def statement_scale(stated: Sequence[tuple[str, float, float | None]], note_unit: str | None, concept: Any,
                    rows: Sequence[Mapping[str, Any]]) -> tuple[Callable[[float], float], str, float]:
    """(conversion, how, tolerance factor) for a statement's stated numbers against its
    item's ``rows``: the tolerance, stated in the concept's unit, scales with the
    conversion. Temperature is left to its own conversion.
    """
    if not stated or (concept is not None and concept.cid == "temperature"):
        return (lambda v: v), "as written", 1.0
    onto, via = onto_item_scale(stated[0][1], note_unit or (concept.unit if concept is not None else None), rows,
                                concept.cid if concept is not None else None)
    return onto, via, abs(onto(1.0) - onto(0.0)) or 1.0
