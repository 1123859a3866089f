"""The offline verifier (stage 6 of the inspector): route a statement to its rule chain.

Each entity is answered from the validation cache (:mod:`.cache`) or by the rule chain of
its kind; the verdict records the id of the rule that decided (``Verdict.rule_id``).
:data:`ALL_RULES` lists every rule of every family, for documentation and for the
known-answer test that each one fires.
"""
from __future__ import annotations

from typing import Any

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT
from ehrlib.pipeline.offline.findings_data import DATA_CONCEPT
from ehrlib.pipeline.offline.lab_categories import LAB_CATEGORY
from ehrlib.pipeline.offline.routing import tables_for_section
from ehrlib.pipeline.offline.rule import Rule, RuleBook
from ehrlib.pipeline.offline.verification import (
    bins,
    bounds,
    categories,
    diagnoses,
    events,
    findings,
    medications,
    microbiology,
    numbers,
    score_totals,
    states,
    surface,
    trends,
)
from ehrlib.pipeline.offline.verification import cache as cache_rules
from ehrlib.pipeline.offline.verification.session import Case, Session, decide
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv

__all__ = ["verify_entity", "chain_for", "ALL_RULES"]


def chain_for(e: Entity) -> tuple[Rule[Any], ...]:
    """The rules tried, in order, for an entity of the inspector; entries of the
    billing-summary sections try their section's billed codes first.
    """
    if tables_for_section(e.claim.section) is not None:
        return (diagnoses.SECTION_BILLED, *_kind_chain(e))
    return _kind_chain(e)


def _kind_chain(e: Entity) -> tuple[Rule[Any], ...]:
    kind, parsed = e.kind, e.claim
    numeric = parsed if isinstance(parsed, NumericClaim) else NumericClaim()
    if kind == "interpretation":
        return states.CHAIN
    if kind == "trend":
        return trends.CHAIN
    if kind in ("measurement", "range") or (kind == "output" and numeric.has_numbers):
        if kind == "output" and numeric.per_hour:
            return events.CHAIN
        return (trends.STATED_ORIGIN, numbers.REFERENCE_WORD, score_totals.COMPONENT_SUM, bounds.PERIOD_BOUND,
                bins.RECORDED_BIN,
                *numbers.CHAIN)
    if kind in ("medication", "infusion"):
        return medications.CHAIN
    if kind == "microbiology":
        return microbiology.CHAIN
    if kind == "diagnosis":
        return diagnoses.RULES
    if kind == "finding" and parsed.concept == DATA_CONCEPT:
        return (findings.DATA_VALUE,)
    if kind == "finding" and parsed.concept == SITE_CONCEPT:
        return (findings.SITE_VALUE,)
    if kind == "finding" and parsed.concept == LAB_CATEGORY:  # "Nitrite-NEG": a result word, by grade
        return (categories.RESULT_GRADE, findings.DATA_VALUE)
    return events.CHAIN


def verify_entity(ctx: NoteContext, env: StageEnv, entity: Entity, cache: tuple[CacheEntry, ...]) -> Verdict:
    """Stage 6 of the offline inspector: the validation cache, then the entity's rule chain."""
    c = Case(entity, ctx, Session(env.toolset), cache)
    v = decide(c, (cache_rules.SAME_CLAIM, *chain_for(entity)))
    assert v is not None, "every chain ends with a rule that always decides"
    return v


ALL_RULES: RuleBook[Any] = RuleBook([
    *numbers.RULES, bounds.PERIOD_BOUND, score_totals.COMPONENT_SUM, bins.RECORDED_BIN, *trends.RULES, *states.RULES,
    *medications.RULES,
    *events.RULES,
    *findings.RULES, *microbiology.RULES, *diagnoses.RULES, *surface.RULES, *cache_rules.RULES, *categories.RULES,
])
