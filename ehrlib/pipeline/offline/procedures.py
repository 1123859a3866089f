"""Procedures and blood products: a device or procedure name with its action and side.

``s/p R IJ CVL placement``, ``extubated``, ``HD 3`` (a hospital day, not dialysis),
``transfused 2u PRBC``. Adjacent names of one procedure ("R IJ CVL") merge into one
mention. Which procedure abbreviation is a day count and which study name needs a body
part is data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ehrlib.pipeline.claims import MedicationClaim, ProcedureClaim
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.mention import Mention, concept_flags, emit

__all__ = ["procedure_mention", "procedure_claim", "blood_product_mention"]

_FLAGS = concept_flags()
_PROC_ACTION = re.compile(r"\b(?P<a>plac(?:ed|ement)|inserted|insertion|s/p|status\s+post|pulled|removed|d/c'?d|dc'?d|"
                          r"discontinued|exchanged|changed|re-?sited|intubated|extubated|started|initiated|underwent|"
                          r"obtained|performed|done)\b", re.I)
_SIDE = re.compile(r"\b(?P<s>R|L|right|left|rt|lt|bilat(?:eral)?)\b\.?\s*(?P<site>IJ|subclavian|SC|femoral|fem|radial|"
                   r"brachial|arm|"
                   r"antecubital|AC|chest|forearm)?", re.I)


def procedure_mention(raw: str, line: int, m: re.Match[str], concept: Concept, out: list[Mention],
                      taken: list[tuple[int, int]]) -> bool:
    """Emit the mention of a procedure occurrence; False when the word is not the procedure."""
    if concept.cid in _FLAGS["hospital_day_procedures"] and re.match(r"\s*#?\s*\d", raw[m.end():]):
        return False  # "HD 3" is a hospital day
    if concept.cid in _FLAGS["ct_concepts"] and m.group(0).lower() == "ct" and not re.match(
            _FLAGS["ct_concepts"][concept.cid], raw[m.end():], re.I):
        return False
    claim, action_text = procedure_claim(raw, m.start(), m.end())
    negated, action, side_letter = claim.negated, claim.action, claim.side
    prev = out[-1] if out else None
    if (prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 3
            and isinstance(prev.claim, ProcedureClaim)):
        # "R IJ CVL" is one line: this occurrence's action and side win, the earlier ones stay
        merged = replace(prev.claim, negated=negated, action=action or prev.claim.action,
                         side=side_letter or prev.claim.side)
        out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "procedure", concept.cid,
                          prev.value, merged)
        taken.append((m.start(), m.end()))
        return True
    emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "procedure", concept.cid, action_text,
                             claim))
    return True


def procedure_claim(raw: str, start: int, end: int) -> tuple[ProcedureClaim, str | None]:
    """The claim of a procedure name at ``raw[start:end]`` (its action, side and negation
    from the words around it) with the action's text.
    """
    act = _PROC_ACTION.search(raw[max(0, start - 30):end + 40])
    side = _SIDE.search(raw[max(0, start - 20):end + 5])
    claim = ProcedureClaim(negated=bool(negated_before(raw[:start])), action=act.group("a").lower() if act else None,
                           side=side.group("s").lower()[0] if side else None)
    return claim, act.group(0) if act else None


def blood_product_mention(raw: str, line: int, m: re.Match[str], concept: Concept, out: list[Mention],
                          taken: list[tuple[int, int]]) -> bool:
    """Emit the mention of a blood product ("2u PRBC"); "transfused" just before joins it."""
    amount = re.search(r"(\d+)\s*(?:u|units?|bags?)\b(?:\s+of)?", raw[max(0, m.start() - 14):m.end() + 15], re.I) \
        or re.match(r"\s*x\s?(\d+)\b", raw[m.end():], re.I)  # "6 units of FFP", "FFP x2"
    negated = bool(negated_before(raw[:m.start()]))
    units = float(amount.group(1)) if amount else None
    prev = out[-1] if out else None
    if (prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 8
            and re.fullmatch(r"transfus\w*", prev.text, re.I) and isinstance(prev.claim, MedicationClaim)):
        merged = replace(prev.claim, drugs=(concept.cid,), negated=negated,  # "transfused 1u PRBC"
                         units=units if units is not None else prev.claim.units)
        out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "medication", concept.cid,
                          None, merged)
        taken.append((m.start(), m.end()))
        return True
    emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "medication", concept.cid, None,
                             MedicationClaim(drugs=(concept.cid,), negated=negated, units=units)))
    return True
