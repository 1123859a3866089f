"""Words that are the denominator of a unit, not the name of an item.

"3 u/hr", "400 cc/hr", "0.1 mcg/kg/min": the word after the slash belongs to the rate's
unit. "hr" is also the heart rate's short name, so a scanner reading names alone takes
"cc/hr at 0100-0200" for a heart rate of 200. A name written right after a slash that
follows a unit's numerator (a quantity unit, ``unit_numerators`` in
``offline_concept_flags.yaml``) is read as part of that unit; "BP/HR" (a name before the
slash) stays two names.
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


def is_unit_denominator(raw: str, start: int) -> bool:
    """Whether the word at ``raw[start:]`` follows a unit's numerator and a slash ("u/hr")."""
    return bool(_numerator_before().search(raw[max(0, start - 12):start]))


def outside_unit_denominators(raw: str, hits: Sequence[re.Match[str]]) -> list[re.Match[str]]:
    """``hits`` (concept-name matches in ``raw``) without those that are a unit's denominator."""
    return [h for h in hits if not is_unit_denominator(raw, h.start())]


RULE = Rule("extract.unit_denominator", "A word written after a quantity unit and a slash (cc/hr, u/hr, mg/kg) is "
            "the rate unit's denominator, never the name of an item such as the heart rate.",
            outside_unit_denominators)
