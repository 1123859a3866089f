"""Words that are part of a unit, not the name of an item.

"3 u/hr", "400 cc/hr", "0.1 mcg/kg/min", "D5 1/2NS at 125/hr": the word after the slash
belongs to the rate's unit. "hr" is also the heart rate's short name, so a scanner reading
names alone takes "cc/hr at 0100-0200" for a heart rate of 200, or "at 125/hr with 20 KCl"
for a heart rate of 20. A name is read as part of a unit when it is written

* right after a slash that follows a unit's numerator (a quantity unit, ``unit_numerators``
  in ``offline_concept_flags.yaml``: "u/hr", "mcg/kg");
* as a rate's denominator (``rate_denominators``: hr, min, kg, day) joined to a number by a
  slash ("125/hr", "~30-40/hr") or right after the number of a rate ("at 125 hr").

"BP/HR" (a name before the slash), "BUN 15/Cr 0.7" (no rate denominator) and "BP 163/ RR 15"
(a space after the slash) stay names.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from ehrlib.pipeline.offline.mention import concept_flags
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["outside_unit_denominators", "is_unit_denominator", "RULE"]


@functools.lru_cache(maxsize=1)
def _numerator_before() -> re.Pattern[str]:
    forms = "|".join(concept_flags().get("unit_numerators") or ["(?!)"])
    return re.compile(rf"(?:^|[^A-Za-z])(?:{forms})\s*/\s*$", re.I)


@functools.lru_cache(maxsize=1)
def _rate_denominator() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a number joined by a slash, or a rate's number, ending before the word; the denominators)."""
    units = "|".join(concept_flags().get("rate_denominators") or ["(?!)"])
    return (re.compile(r"(?:\d/|(?:^|\s)(?:at|@)\s*\d+(?:\.\d+)?\s+)$", re.I),
            re.compile(rf"(?:{units})\b", re.I))


def is_unit_denominator(raw: str, start: int) -> bool:
    """Whether the word at ``raw[start:]`` is part of a unit: after a unit's numerator and a
    slash ("u/hr"), or a rate's denominator joined to a number by a slash ("125/hr") or after
    a rate's number ("at 125 hr").
    """
    if _numerator_before().search(raw[max(0, start - 12):start]):
        return True
    rate, unit = _rate_denominator()
    return bool(unit.match(raw, start) and rate.search(raw[max(0, start - 16):start]))


def outside_unit_denominators(raw: str, hits: Sequence[re.Match[str]]) -> list[re.Match[str]]:
    """``hits`` (concept-name matches in ``raw``) without those that are part of a unit."""
    return [h for h in hits if not is_unit_denominator(raw, h.start())]


RULE = Rule("extract.unit_denominator", "A word written after a quantity unit and a slash (cc/hr, u/hr, mg/kg), "
            "or a rate's denominator after a number and a slash (125/hr) or after a rate's number (at 125 hr), is "
            "part of the unit, never the name of an item such as the heart rate.",
            outside_unit_denominators)
