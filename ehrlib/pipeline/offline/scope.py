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
from collections.abc import Sequence

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import MedicationClaim
from ehrlib.pipeline.offline.clauses import clause_after, clause_before, mask_parentheticals
from ehrlib.pipeline.offline.context import cue
from ehrlib.pipeline.offline.sections import section_scope
from ehrlib.pipeline.offline.timex import parse_datetime
from ehrlib.pipeline.records import Entity, ScopeDecision, Segment

__all__ = ["decide_scope", "decide_all", "listed_bare", "HISTORICAL_CUES", "PLAN_CUES", "FAMILY_CUES",
           "PRESENTATION_CUES", "presentation_cue", "tells_presentation"]

#: ConText cue sets (``offline_context.yaml``): each searched in the clause before the mention
HISTORICAL_CUES = cue("historical")
PLAN_CUES = cue("plan")
FAMILY_CUES = cue("family")
_PLAN_AFTER = cue("plan_after")
PRESENTATION_CUES = cue("presentation")
_HISTORICAL_ADJECTIVE = cue("historical_adjective")
_FAMILY_PARTICIPANT = cue("family_participant")
#: the title of a problem entry ("# CHF:", "3. Acute on chronic renal failure:")
_PROBLEM_TITLE = re.compile(r"^\s*(?:#+\s*|\d{1,2}[.)]\s*)[^:\n]{1,80}:")
_CONTINUED_HERE = cue("stay_continuation")
#: a note's opening summary of the patient ("63M w/ CA, on lovenox, admitted with ..."), from its age and sex
_ONE_LINER = re.compile(r"^\W*\d{1,3}\s*(?:-?\s*(?:y/?o|yrs?|years?[- ]old)\b|[MF]\b)", re.I)
#: where such a summary turns from who the patient was to this stay
_STAY_TURN = re.compile(r"\b(?:admitted|admission|presents?|presented|presenting|transferred|brought|now|"
                        r"here|with\s+(?:new|acute))\b", re.I)
#: what may stand before a drug listed bare in a problem entry: its route, a list joint
_BARE_LEAD = re.compile(r"^(?:\s*(?:SQ|SC|sub-?q|IV|PO|PR|IM|SL|NG|\+|&|and)\b)*\s*$", re.I)
_ED = re.compile(r"\b(?:in\s+the\s+(?:ED|ER|emergency)|ED\s+(?:course|vitals|labs)|initial\s+vitals\s+in\s+the\s+ED)\b",
                 re.I)


def presentation_cue(text: str, pos: int) -> re.Match[str] | None:
    """A presentation cue ("in the ED", "on arrival") in the narrative sentence of ``text``
    that ends at ``pos``; a cue inside a closed parenthetical does not count.
    """
    return PRESENTATION_CUES.search(mask_parentheticals(clause_before(text, pos, "narrative_sentence")))


def tells_presentation(kind: str, section: str, note_type: str) -> bool:
    """Whether a statement of ``section`` can be about the presentation that led to this
    admission: a lab or vital in a discharge summary's history of present illness (its ED
    drugs are no inpatient orders).
    """
    return section == "hpi" and note_type == "discharge_summary" and kind == "measurement"


def _presentation_cue(line_text: str, start: int, before: str) -> re.Match[str] | None:
    text = f"{before}\n{line_text}" if before else line_text  # the sentence may begin a line before
    return presentation_cue(text, start + (len(before) + 1 if before else 0))


def _historical_cue(clause: str) -> re.Match[str] | None:
    """The first historical cue that reaches the end of ``clause``: an adjective cue ("known
    CML, 4% bands") qualifies only the phrase up to the next comma.
    """
    for hist in HISTORICAL_CUES.finditer(clause):
        if not (_HISTORICAL_ADJECTIVE.match(hist.group(0)) and re.search(r"[,;]", clause[hist.end():])):
            return hist
    return None


def _before_the_stay(line_text: str, start: int, before: str) -> bool:
    """Whether ``start`` falls in a note's opening summary of the patient before it turns to
    this stay: "59F w/ EtOH use, daily ASA, admitted w/ hematemesis" tells a drug taken before
    the admission (the sentence may have begun on the line before).
    """
    text = f"{before}\n{line_text}" if before else line_text
    sentence = clause_before(text, start + (len(before) + 1 if before else 0), "narrative_sentence").lstrip()
    if not _ONE_LINER.match(sentence) and "\n" in sentence:
        # a line that opens with the age and sex begins the summary, whatever stands on the line
        # before it ("MICU PROGRESS NOTE (HD #2)" has no period to end it)
        sentence = sentence[sentence.rindex("\n") + 1:].lstrip()
    return bool(_ONE_LINER.match(sentence)) and not _STAY_TURN.search(sentence)


def listed_bare(entity: Entity, line_text: str, section: str | None, note_type: str) -> bool:
    """Whether a drug is listed bare in a progress note's problem entry ("# PPx: SC heparin,
    PPI", "5. ETOH: CIWA, thiamine/folate/MVI"): no verb, dose, rate, count or time, only a
    route before it since the last list break. Such an entry names the regimen set for the
    problem from the note on, not what was given in the note's window: orders the record may
    not hold yet, so their absence from the window is no contradiction.
    """
    claim, start = entity.claim, entity.span[0] if entity.span else -1
    if (entity.kind not in ("medication", "infusion") or note_type == "discharge_summary"
            or section != "assessment_plan" or not isinstance(claim, MedicationClaim)):
        return False
    title = _PROBLEM_TITLE.match(line_text)
    if title is None or start < title.end() or entity.time_text:
        return False
    if claim.action or claim.dose is not None or claim.rate is not None or claim.units is not None:
        return False
    return bool(_BARE_LEAD.match(re.split(r"[,;:/]", line_text[title.end():start])[-1]))


def decide_scope(entity: Entity, line_text: str, segment: Segment, admission: TimeSpan,
                 note_type: str, window: TimeSpan | None = None, before: str = "") -> ScopeDecision:
    """The temporal status of one entity with the cue that decided it (``before``: the
    segment's line before the entity's, where its sentence may have begun).
    """
    start = entity.span[0] if entity.span else 0
    clause = mask_parentheticals(clause_before(line_text, start, "temporal"))  # an aside's cue stays in it
    if (title := _PROBLEM_TITLE.match(line_text)) is not None and start >= title.end():
        # "# Acute on chronic renal failure: Cr rose": a problem title's words qualify the problem
        clause = clause[len(clause) - (start - title.end()):] if len(clause) > start - title.end() else clause
    after = line_text[entity.span[1]:] if entity.span else ""
    after_clause = clause_after(after, 0, "stop")[:40]
    adm_start, adm_end = parse_datetime(admission.start), parse_datetime(admission.end)
    if window is not None and adm_start is not None:
        w_end, w_start = parse_datetime(window.end), parse_datetime(window.start)
        if w_end is not None and (adm_start - w_end).days >= 2:
            return ScopeDecision(entity.entity_id, "past", "dated before the admission", ("time",))
        if w_start is not None and adm_end is not None and (w_start - adm_end).days >= 2:
            return ScopeDecision(entity.entity_id, "plan", "dated after discharge", ("time",))
    fam = FAMILY_CUES.search(clause)
    if fam is not None and _FAMILY_PARTICIPANT.search(clause[:fam.start()]):
        fam = None  # "met with her daughter": a participant in the care, no family history
    if fam:
        return ScopeDecision(entity.entity_id, "past", "family history", (fam.group(0),))
    hist = _historical_cue(clause)
    if hist is None and entity.kind in ("medication", "infusion"):
        # "lasix 40 mg daily at home": for drugs the cue may follow the name
        hist = HISTORICAL_CUES.search(after_clause)
    if hist and entity.kind in ("medication", "infusion") and hist.group(0).lower().startswith("home") and \
            _CONTINUED_HERE.search(clause, hist.end()):
        hist = None  # "home meds reconciled and continued: X": a home drug taken up in this stay is its order
    if hist:
        return ScopeDecision(entity.entity_id, "past", "historical cue", (hist.group(0),))
    if entity.kind in ("medication", "infusion") and _before_the_stay(line_text, start, before):
        return ScopeDecision(entity.entity_id, "past", "the patient's summary before this stay", ("one-liner",))
    plan = PLAN_CUES.search(clause) or _PLAN_AFTER.match(after)
    if plan and entity.kind == "microbiology" and plan.group(0).strip().lower().endswith("pending"):
        plan = None  # a pending culture was sent: the specimen is done, only its result is awaited
    if plan and not (isinstance(entity.claim, MedicationClaim) and entity.claim.action in
                     ("started", "start", "given", "stopped", "discontinued", "received")
                     and re.search(r"\b(?:was|were|had|been)\b", clause)):
        return ScopeDecision(entity.entity_id, "plan", "plan/hypothetical cue", (plan.group(0),))
    scope = section_scope(segment.section)
    if scope == "past":
        if tells_presentation(entity.kind, segment.section, note_type) and \
                (pres := _presentation_cue(line_text, start, before)) is not None:
            # the labs and vitals of the presentation that led to this admission (ED, arrival)
            # are the stay's first rows; the rest of the history of present illness stays past
            return ScopeDecision(entity.entity_id, "active", "presentation of this admission", (pres.group(0),))
        if (segment.section == "hpi" or (segment.section == "social_family" and note_type == "nursing")) \
                and not _ED.search(line_text) and note_type != "discharge_summary":
            # a progress note's subjective/interval history, and a nursing note's "Social:" (family
            # meetings, code status changes), describe the current stay
            return ScopeDecision(entity.entity_id, "active", f"{segment.section} of a {note_type} note", ())
        return ScopeDecision(entity.entity_id, "past", f"section {segment.title!r} is history", (segment.section,))
    if scope == "plan":
        return ScopeDecision(entity.entity_id, "plan", f"section {segment.title!r} is a plan", (segment.section,))
    if scope == "claims" and entity.kind != "diagnosis":
        return ScopeDecision(entity.entity_id, "past", "diagnosis list: only billing codes are checked",
                             (segment.section,))
    return ScopeDecision(entity.entity_id, "active", f"section {segment.title!r}", ())


def decide_all(entities: Sequence[Entity], lines: Sequence[str], segment: Segment, admission: TimeSpan,
               note_type: str) -> tuple[ScopeDecision, ...]:
    """One scope decision per entity of a segment."""
    return tuple(decide_scope(e, lines[e.line] if e.line < len(lines) else "", segment, admission, note_type, e.window,
                              lines[e.line - 1] if segment.start_line < e.line <= len(lines) else "")
                 for e in entities)

