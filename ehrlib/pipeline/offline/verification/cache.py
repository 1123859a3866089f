"""The validation cache as a rule: a restated claim reuses the cached verdict.

m = 5 entries: an entity restating a cached claim (same kind, text and parsed claim) on
the same item and window, the same observation group, or the same criterion state and
window reuses the cached verdict without tool calls.
"""
from __future__ import annotations

from typing import Any

from ehrlib.pipeline.cache import related_entries
from ehrlib.pipeline.claims import Claim as ParsedClaim
from ehrlib.pipeline.claims import (
    FindingClaim,
    InterpretationClaim,
    MedicationClaim,
    MicrobiologyClaim,
    NumericClaim,
    ProcedureClaim,
    Reading,
    Trend,
)
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Case
from ehrlib.pipeline.records import Entity, Verdict

__all__ = ["SAME_CLAIM", "RULES", "same_claim"]

def _criterion(parsed: ParsedClaim) -> str | None:
    return parsed.criterion if isinstance(parsed, InterpretationClaim) else None


def _said(parsed: ParsedClaim) -> tuple[Any, ...]:
    """The parts of a claim a restatement must repeat: concept, criterion, negation, the
    stated numbers (value, bounds, a blood pressure's parts, a bound over the period), direction and series, dose, rate
    and units, drugs, organism, finding words and action. Other details (units of
    measure, routes, sides) may be left out of a restatement.
    """
    numeric = parsed if isinstance(parsed, NumericClaim) else None
    reading = parsed.reading if isinstance(parsed, (NumericClaim, InterpretationClaim)) else Reading()
    trend = numeric.trend if numeric is not None and numeric.trend is not None else Trend()
    systolic = numeric.bp if numeric is not None and numeric.bp is not None else None  # every part, bounds too
    med = parsed if isinstance(parsed, MedicationClaim) else MedicationClaim()
    action = parsed.action if isinstance(parsed, (MedicationClaim, ProcedureClaim)) else None
    return (type(parsed), parsed.concept, parsed.negated, reading.value, reading.min, reading.max, systolic,
            _criterion(parsed), trend.direction, trend.series, numeric.bound if numeric is not None else None,
            med.dose, med.rate, med.units, med.drugs, action,
            parsed.organism if isinstance(parsed, MicrobiologyClaim) else None,
            parsed.words if isinstance(parsed, FindingClaim) else None)


def same_claim(e: Entity, c: Entity) -> bool:
    """Whether two entities state the same claim (kind, text, the parts :func:`_said` names)."""
    return e.kind == c.kind and e.text.lower() == c.text.lower() and _said(e.claim) == _said(c.claim)


def _from_cache(claim: Case) -> Verdict | None:
    e = claim.entity
    for entry in related_entries(e, claim.cache):
        c = entry.entity
        same_group = e.group is not None and e.group == c.group
        same_item = bool(set(e.item_keys) & set(c.item_keys)) and e.window == c.window
        same_state = (e.kind == "interpretation" and e.window == c.window
                      and _criterion(e.claim) == _criterion(c.claim))
        if (same_group or same_item or same_state) and same_claim(e, c):
            v = entry.verdict
            return Verdict(e.entity_id, v.label, v.inconsistency_type, f"from the validation cache: {v.reason}",
                           v.evidence_row_ids, (), True, deciding_row_ids=v.deciding_row_ids)
    return None


SAME_CLAIM = Rule("cache.same_claim", "A statement restating an already verified claim about the same item and "
                  "window (or the same observation) has the same answer, without new tool calls.", _from_cache)
RULES = (SAME_CLAIM,)
