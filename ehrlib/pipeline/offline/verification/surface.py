"""The surface-level baseline: explicit values and times only.

Numbers are compared with numeric tolerance in the default (or explicit) window by the
number rules; diagnoses by the billed-code rule; everything else — interpretations, trend
words, orders, events — is checked for the existence of an aligned record in the window,
with no criterion, trend, dose, route, duration, organism or interval reasoning. Entities
the extractor could not align are reported missing (no item, no record).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification import diagnoses, numbers
from ehrlib.pipeline.offline.verification.session import Case, Session, decide, verdict
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv

__all__ = ["verify_surface", "RULES"]


def _lexical_match(c: Case) -> Verdict | None:
    """Surface matching aligns the words themselves: "afebrile" -> Lexical_Search."""
    e = c.entity
    if not (e.kind == "interpretation" or not e.item_keys):
        return None
    res = c.session.call("Lexical_Search", query=e.text, k=5, patient_only=True)
    keys = [r["key"] for r in (res.rows if res else ()) if float(r.get("score") or 0) >= 0.5][:2]
    if not keys:
        return verdict(c, False, f"no patient item matches {e.text!r}", missing=True)
    inside: list[Mapping[str, Any]] = []
    for k in keys:
        inside += c.session.rows(k, e.window)[0]
    return verdict(c, bool(inside), f"{e.text}: {'a' if inside else 'no'} record in the window", inside,
                   missing=not inside)


def _record_exists(c: Case) -> Verdict | None:
    inside, _ = c.item_rows()
    return verdict(c, bool(inside), f"{c.entity.text}: {'a' if inside else 'no'} record in the window", inside,
                   missing=not inside)


LEXICAL_MATCH = Rule("surface.lexical_match", "Without reasoning, a statement with no aligned item (or an "
                     "interpretation) is matched by its words to the patient's items and needs a record of one in "
                     "the window.", _lexical_match)
RECORD_EXISTS = Rule("surface.record_exists", "Without reasoning, a statement is consistent when its aligned item "
                     "has a record in the window and missing otherwise.", _record_exists)
RULES = (LEXICAL_MATCH, RECORD_EXISTS)


def verify_surface(ctx: NoteContext, env: StageEnv, entity: Entity, cache: tuple[CacheEntry, ...]) -> Verdict:
    """Stage 6 of the surface baseline (no validation cache)."""
    c = Case(entity, ctx, Session(env.toolset))
    if entity.kind in ("measurement", "range", "trend", "output") and isinstance(entity.claim, NumericClaim) \
            and entity.claim.has_numbers:
        chain: tuple[Rule[Any], ...] = numbers.CHAIN
    elif entity.kind == "diagnosis":
        chain = diagnoses.RULES
    else:
        chain = RULES
    v = decide(c, chain)
    assert v is not None, "every surface chain ends with a rule that always decides"
    return v
