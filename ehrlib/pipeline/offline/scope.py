"""Scope filtering without an LLM: past / active / plan from the section and ConText-style cues.

Paper §4.3 and Appendix B.3: only statements about the current hospitalization are
verified. Past information (past medical and family history, earlier admissions, the ED
visit, home/admission medications) and future plans (discharge plans, next steps,
instructions, follow-up, nursing "plan") are out of scope. Negation is *not* a scope:
"afebrile" and "no edema" are verified as negated values.

Order of evidence: (1) the entity's own resolved time (before admission -> past; after
discharge -> plan); (2) a cue in the same clause before the mention (ConText's window:
"h/o", "home", "plan to", "will", "if", mother/father); (3) the section's scope
(``offline_sections.yaml``). Cues win over a section because "Plan: continue vanc" is a
plan, while "# Sepsis: was on levophed, now off" in an assessment is active.
"""
from __future__ import annotations

import re
from typing import Sequence

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.sections import section_scope
from ehrlib.pipeline.offline.timex import parse_datetime
from ehrlib.pipeline.records import Entity, ScopeDecision, Segment

__all__ = ["decide_scope", "decide_all", "HISTORICAL_CUES", "PLAN_CUES", "FAMILY_CUES"]

HISTORICAL_CUES = re.compile(
    r"\b(?:h/o|hx\s+of|history\s+of|past\s+history|prior\s+(?:to\s+admission|admissions?|hospitali[sz]ations?|episodes?)|"
    r"previous(?:ly)?|in\s+the\s+past|chronic(?:ally)?|at\s+baseline|baseline|at\s+home|home\s+(?:dose|med(?:ication)?s?|regimen|o2)|"
    r"outpatient|as\s+an\s+outpatient|last\s+(?:admission|year|month)|(?:years?|months?|weeks?)\s+ago|"
    r"remote|known|was\s+recently\s+(?:admitted|seen)|at\s+(?:osh|outside\s+hospital)|osh|outside\s+hospital|"
    r"transferred\s+from|prior\s+to\s+transfer|on\s+presentation\s+to\s+(?:osh|outside))\b", re.I)
PLAN_CUES = re.compile(
    r"\b(?:plan(?:s|ned|ning)?\s+(?:to|for)|will\s+(?:need|start|continue|consider|check|get|give|f/u|follow|recheck|"
    r"repeat|trend|monitor|obtain|send|re-?dose|restart|resume|discuss|be|have|require|titrate|wean|hold|increase|"
    r"decrease)|to\s+(?:start|begin|be\s+(?:started|given|checked|continued))|consider(?:ing)?|should|would|recommend(?:ed|s)?|"
    r"if\s+(?:needed|persists|worsens|febrile|hypotensive|\w+)|prn\s+for|f/u|follow[-\s]?up|please|hold|discussing|needs?\s+to|"
    r"scheduled\s+for|tomorrow|next\s+(?:week|dose)|upon\s+discharge|after\s+discharge|at\s+rehab|goal|target|"
    r"re-?check|recheck|repeat\s+in|pending|to\s+complete|to\s+finish|to\s+continue|continue\s+to\s+monitor|"
    r"monitor\s+for|plan:?|rec(?:s)?:?|cont(?:inue)?(?!d|ing)|titrat(?:e|ed|ing)\s+to|maintain|keep\s+(?:k|mg|map|sbp|hct))\b", re.I)
FAMILY_CUES = re.compile(r"\b(?:mother|father|mom|dad|brother|sister|sibling|son|daughter|aunt|uncle|grand(?:mother|father)|"
                         r"family\s+history|fhx?|fam\s+hx)\b", re.I)
_ED = re.compile(r"\b(?:in\s+the\s+(?:ED|ER|emergency)|ED\s+(?:course|vitals|labs)|initial\s+vitals\s+in\s+the\s+ED)\b", re.I)


def _clause_before(text: str, start: int) -> str:
    """The clause that ends at the mention (ConText: cues scope to the end of a clause)."""
    prefix = text[:start]
    cut = max(prefix.rfind(". "), prefix.rfind("; "), prefix.rfind(" but "), prefix.rfind(" however "),
              prefix.rfind(" now "), prefix.rfind(" currently "))
    return prefix[cut + 1:] if cut >= 0 else prefix


def decide_scope(entity: Entity, line_text: str, segment: Segment, admission: TimeSpan,
                 note_type: str, window: TimeSpan | None = None) -> ScopeDecision:
    """The temporal status of one entity with the cue that decided it."""
    start = entity.span[0] if entity.span else 0
    clause = _clause_before(line_text, start)
    after = line_text[entity.span[1]:] if entity.span else ""
    after_clause = re.split(r"[.;]", after)[0][:40]
    adm_start, adm_end = parse_datetime(admission.start), parse_datetime(admission.end)
    if window is not None and adm_start is not None:
        w_end, w_start = parse_datetime(window.end), parse_datetime(window.start)
        if w_end is not None and (adm_start - w_end).days >= 2:
            return ScopeDecision(entity.entity_id, "past", "dated before the admission", ("time",))
        if w_start is not None and adm_end is not None and (w_start - adm_end).days >= 2:
            return ScopeDecision(entity.entity_id, "plan", "dated after discharge", ("time",))
    if FAMILY_CUES.search(clause):
        m = FAMILY_CUES.search(clause)
        return ScopeDecision(entity.entity_id, "past", "family history", (m.group(0),))
    hist = HISTORICAL_CUES.search(clause)
    if hist is None and entity.kind in ("medication", "infusion"):
        # "lasix 40 mg daily at home": for drugs the cue may follow the name
        hist = HISTORICAL_CUES.search(after_clause)
    if hist:
        return ScopeDecision(entity.entity_id, "past", "historical cue", (hist.group(0),))
    plan = PLAN_CUES.search(clause) or re.match(r"[^.;]{0,25}?\b(?:tomorrow|pending|planned|to\s+be\s+(?:started|given|"
                                                 r"placed|done)|in\s+(?:the\s+)?am|if\s+needed)\b", after, re.I)
    if plan and not (entity.kind in ("medication", "infusion") and entity.attributes.get("action") in
                     ("started", "start", "given", "stopped", "discontinued", "received")
                     and re.search(r"\b(?:was|were|had|been)\b", clause)):
        return ScopeDecision(entity.entity_id, "plan", "plan/hypothetical cue", (plan.group(0),))
    scope = section_scope(segment.section)
    if scope == "past":
        if (segment.section == "hpi" or (segment.section == "social_family" and note_type == "nursing")) \
                and not _ED.search(line_text) and note_type != "discharge_summary":
            # a progress note's subjective/interval history, and a nursing note's "Social:" (family
            # meetings, code status changes), describe the current stay
            return ScopeDecision(entity.entity_id, "active", f"{segment.section} of a {note_type} note", ())
        return ScopeDecision(entity.entity_id, "past", f"section {segment.title!r} is history", (segment.section,))
    if scope == "plan":
        return ScopeDecision(entity.entity_id, "plan", f"section {segment.title!r} is a plan", (segment.section,))
    if scope == "claims" and entity.kind != "diagnosis":
        return ScopeDecision(entity.entity_id, "past", "diagnosis list: only billing codes are checked", (segment.section,))
    return ScopeDecision(entity.entity_id, "active", f"section {segment.title!r}", ())


def decide_all(entities: Sequence[Entity], lines: Sequence[str], segment: Segment, admission: TimeSpan,
               note_type: str) -> tuple[ScopeDecision, ...]:
    return tuple(decide_scope(e, lines[e.line] if e.line < len(lines) else "", segment, admission, note_type, e.window)
                 for e in entities)

