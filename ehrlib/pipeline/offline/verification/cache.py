"""The validation cache as a rule: a restated claim reuses the cached verdict.

m = 5 entries: an entity restating a cached claim (same kind, text and parsed claim) on
the same item and window, the same observation group, or the same criterion state and
window reuses the cached verdict without tool calls.
"""
from __future__ import annotations

from ehrlib.pipeline.cache import related_entries
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Claim
from ehrlib.pipeline.records import Entity, Verdict

__all__ = ["SAME_CLAIM", "RULES", "same_claim"]

_CLAIM_KEYS = ("concept", "value", "min", "max", "systolic", "criterion", "negated", "direction", "dose", "organism",
               "words", "action", "drugs", "units", "rate", "series")


def same_claim(e: Entity, c: Entity) -> bool:
    """Whether two entities state the same claim (kind, text, parsed attributes)."""
    return (e.kind == c.kind and e.text.lower() == c.text.lower()
            and all(e.attributes.get(k) == c.attributes.get(k) for k in _CLAIM_KEYS))


def _from_cache(claim: Claim) -> Verdict | None:
    e = claim.entity
    for entry in related_entries(e, claim.cache):
        c = entry.entity
        same_group = e.group is not None and e.group == c.group
        same_item = bool(set(e.item_keys) & set(c.item_keys)) and e.window == c.window
        same_state = (e.kind == "interpretation" and e.window == c.window
                      and e.attributes.get("criterion") == c.attributes.get("criterion"))
        if (same_group or same_item or same_state) and same_claim(e, c):
            v = entry.verdict
            return Verdict(e.entity_id, v.label, v.inconsistency_type, f"from the validation cache: {v.reason}",
                           v.evidence_row_ids, (), True)
    return None


SAME_CLAIM = Rule("cache.same_claim", "A statement restating an already verified claim about the same item and "
                  "window (or the same observation) has the same answer, without new tool calls.", _from_cache)
RULES = (SAME_CLAIM,)
