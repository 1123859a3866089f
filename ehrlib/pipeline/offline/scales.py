"""A note value written on another scale than the concept's: read it on the concept's.

"WBC 12,400" is cells/µL where the concept (and the table) count K/µL; "FiO2 0.4" is a
fraction where the concept is a percent. A value that is implausible as written but
plausible after one conversion of the clinical table (:func:`.units.into_range`) is that
value on the other scale; a value no scale makes plausible is no value of the concept.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.units import canonical_unit, into_range

__all__ = ["on_concept_scale", "RULE"]

_VALUE_KEYS = ("value", "min", "max", "min_hi", "max_lo")


def on_concept_scale(val: Mapping[str, Any], concept: Concept) -> dict[str, Any] | None:
    """``val`` (parsed value attributes) with its numbers on the concept's scale, or
    ``None`` when no conversion makes the stated value plausible. A value with an
    explicit unit other than the concept's is left alone (the unit says which scale).
    """
    v = val.get("value")
    if v is None or concept.lo is None or concept.hi is None or "series" in val:
        return None
    if val.get("unit") and canonical_unit(str(val["unit"])) != canonical_unit(concept.unit):
        return None
    scaled = into_range(float(v), concept.unit, concept.lo, concept.hi, analyte=concept.cid)
    if scaled is None:
        return None
    ratio_src = float(v)
    out = dict(val)
    for k in _VALUE_KEYS:
        if k in out and out[k] is not None:
            out[k] = scaled.value if ratio_src == 0 else float(out[k]) * scaled.value / ratio_src
    return out


RULE = Rule("extract.value_scale", "A value implausible as written but plausible on another scale of the same "
            "quantity (cells/µL vs K/µL, fraction vs percent) is that value on the concept's scale.",
            on_concept_scale, ("measurement",))
