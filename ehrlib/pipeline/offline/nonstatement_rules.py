"""The non-statement rules: each one reason a candidate mention is not a checkable statement.

The principles are those of :mod:`.precision` (paper Appendix B.3, "Definition of
Entity"); here every one is a :class:`~.rule.Rule` with a stable ``nonstatement.*`` id,
applied by :func:`.precision.non_statement_rule` in the listed order (first match wins,
so a later rule may rely on an earlier one not having matched). A rule sees one
:class:`MentionView`: the mention, its clause and its neighbours; it looks no further, so
it carries over to unseen notes. Word lists are data (``offline_nonstatement.yaml``, and
the ConText cue sets of ``offline_context.yaml`` shared with negation and scope).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import InterpretationClaim, MedicationClaim
from ehrlib.pipeline.offline.clauses import LIST_MARKER, clause_after, clause_before
from ehrlib.pipeline.offline.context import cue
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.rule import Rule, RuleBook
from ehrlib.pipeline.offline.sections import match_header

__all__ = ["MentionView", "NON_STATEMENT_RULES", "NonStatementRule", "ALLERGY_HEAD"]


def _alt(name: str) -> str:
    return "|".join(load_data("offline_nonstatement.yaml")["vocab"][name])


def _ids(name: str) -> tuple[str, ...]:
    return tuple(load_data("offline_nonstatement.yaml")["vocab"][name])


_TITLE_PREFIX = re.compile(r"^\s*(?:#+\s*|\d{1,2}[.)]\s*|\(?[a-z][.)]\s+)(?:[A-Za-z/&'-]+\s*){0,4}$", re.I)
_LONE_PREFIX = re.compile(r"^\s*(?:" + LIST_MARKER
                          + r"|(?:problem|dx|diagnosis|assessment|impression)\s*#?\d*\s*:\s*)?$", re.I)
# nothing after the title, or a care-plan qualifier ("Hypotension (not Shock)", "... (acute, chronic)")
_LONE_SUFFIX = re.compile(r"\s*(?:\((?:not|non|w/o|without|other|acute|chronic|unspecified)\b[^)]*\))?\s*[:.]?\s*",
                          re.I)
_ADJECTIVE = re.compile(r"(?:ive|ile|ic|ed|ent|ing|al)$", re.I)
_TITLE_CLAIM = cue("negation_after_title", "title_claim")
_STATUS_WORD = re.compile(r"\b(?:" + _alt("status_words") + r")\b", re.I)
_IMAGING_READ = re.compile(r"^\s*(?:\([^)]{0,30}\)\s*)?(?:" + _alt("imaging_read_heads") + ")", re.I)
_STUDY = r"(?:portable\s+)?(?:" + _alt("studies") + ")"
_READING_HEAD = re.compile(r"^\s*(?:[-*#\u2022]\s*)?" + _STUDY + r"\b[^:.;]{0,30}:", re.I)
_READING_VERB = re.compile(r"\b" + _STUDY + r"\b[^.;]{0,40}?\b(?:" + _alt("reading_verbs") + r")\b[^.;]*$", re.I)
_GENERIC_TRANSFUSION = re.compile(r"^(?:transfus\w*|blood\s+transfusions?)$", re.I)
_LINES_TUBES = _ids("lines_tubes")
_PRESENT_ONLY = _ids("present_only_devices")
_ROUTE_BEFORE = re.compile(r"\b(?:" + _alt("route_words")
                           + r")\s+(?:the\s+|an?\s+|his\s+|her\s+|(?:r|l|rt|lt|right|left)\s+)?$"
                           r"|\bon\s+(?:the\s+)?$", re.I)
_CONSULT = re.compile(r"^\s*(?:" + _alt("consult_words") + r")\b", re.I)
_ELSEWHERE_AFTER = cue("elsewhere_after")
_CONDITIONAL = cue("conditional")
_IMPERATIVE = cue("imperative")
_OPINION = cue("opinion")
_ADMITTED_WITH = re.compile(r"\b(?:" + _alt("admission_verbs")
                            + r")\b[^.;]{0,80}?\b(?:with|w/|for|after)(?=\s)[^.;]*$", re.I)
_TIME_CLAUSE = re.compile(r"\b(?:" + _alt("time_words") + r")\s+(?:(?:being|getting|the|his|her|"
                          r"off|on|of|she|he|pt|was|is|were)\s+){0,3}$", re.I)
_INDICATION = re.compile(r"\b(?:" + _alt("indication_words") + r")\s+(?:his|her|the|their|presumed|possible|"
                         r"likely|ongoing|worsening|persistent|suspected)?\s*$", re.I)
_UNITS_OF = re.compile(r"^\s*(?:(?:an?|one|two|three|\d+)\s*(?:units?|u|bags?|packs?)?\s*(?:of\s+)?)?$", re.I)
_PROC_JOIN = re.compile(r"^\s*(?:" + _alt("procedure_joins") + r")\s*$", re.I)
_DEVICE_ACTION = re.compile(r"\b(?:" + _alt("device_actions") + r")\b", re.I)
_URINE_LOOK = re.compile(r"\b(?:" + _alt("urine_look") + r")\b", re.I)
_INTRODUCTION = re.compile(r"\b\d{1,3}s?\s*(?:-?\s*(?:y/?o|yo|y\.o\.?|years?[- ]old)\s*)?-?\s*(?:"
                           + _alt("introduction_persons") + r")\b[^.;]*?\b(?:" + _alt("introduction_joins")
                           + r")(?=\s)[^.;]*$", re.I)
#: the head of an allergy list (used by :func:`.precision.is_allergy_paragraph`)
ALLERGY_HEAD = re.compile(r"^\s*(?:" + _alt("allergy_heads") + r")\b", re.I)


@dataclass(frozen=True, slots=True)
class MentionView:
    """One mention in its paragraph: the clause around it and the other mentions."""

    m: Mention
    text: str
    others: Sequence[Mention]
    before: str        # the clause before the mention (statement breaks)
    after: str         # the rest of the sentence after it
    full_before: str   # the paragraph before it
    line_before: str   # its line before it
    title_end: int     # where the mention's own words end (its text, not its value)
    line_after: str    # its line after its own words

    @classmethod
    def of(cls, m: Mention, text: str, others: Sequence[Mention] = ()) -> MentionView:
        """The view of mention ``m`` in ``text`` that the non-statement rules read."""
        full_before = text[:m.start]
        title_end = m.start + len(m.text) if text.startswith(m.text, m.start) else m.end
        return cls(m, text, others, clause_before(text, m.start, "statement"), clause_after(text, m.end, "sentence"),
                   full_before, full_before.rsplit("\n", 1)[-1], title_end, text[title_end:].split("\n", 1)[0])


NonStatementRule = Rule[Callable[[MentionView], bool]]


def _problem_title(v: MentionView) -> bool:
    m, text, title_end = v.m, v.text, v.title_end
    headed = bool(_TITLE_PREFIX.match(v.line_before)) or (
        # "HYPERTENSION: continued metoprolol", "Hyperkalemia: K 6.9": a problem named as the
        # label of its own paragraph (a field label with its value, "Lungs: clear", is a finding)
        not v.line_before.strip() and m.kind in ("interpretation", "diagnosis")
        and (not m.value or m.value.lower() == m.text.lower()))
    return (m.concept != "code_status" and m.end <= title_end + 1 and headed and not re.search(r"\d", m.text)
            and bool(re.match(r"^\s*(?::|-\s|--)", text[title_end:])) and not _TITLE_CLAIM.match(text[title_end:]))


def _word_fragment(v: MentionView) -> bool:
    m, text = v.m, v.text
    if text[m.start:m.start + 1].isdigit() and not m.text[:1].isdigit():
        return False  # a later value of a named item ("K 4.4 (6.0 pre-HD)"): a number, no part of a word
    return bool((m.text[:1].isalpha() and m.start > 0 and text[m.start - 1].isalpha()) or (
        m.text[-1:].isalpha() and text[v.title_end:v.title_end + 1].isalpha()))


def _lone_title(v: MentionView) -> bool:
    m = v.m
    # "Skin: intact" is a header with its content, no title
    return bool(m.concept not in ("procedure_code", "code_status") and not m.claim.negated and ":" not in m.text
                and (not m.value or m.value.lower() == m.text.lower()) and not _ADJECTIVE.search(m.text)
                and _LONE_PREFIX.match(v.line_before) and _LONE_SUFFIX.fullmatch(v.line_after))


def _home_medication(v: MentionView) -> bool:
    return bool(re.search(r"\bhome\s+(?:dose\s+(?:of\s+)?)?$", v.before, re.I))


def _code_event(v: MentionView) -> bool:
    m, text = v.m, v.text
    if m.concept != "code_status" or m.text.lower() != "code":
        return False
    window = text[max(0, m.start - 12):m.end + 25]
    # "code called" is the arrest itself (a procedure event), left to verification
    return bool(not _STATUS_WORD.search(window) and not re.match(r"\s*:\s*\w", text[m.end:])
                and re.search(r"(?:\b(?:during|after|since|before|following|post)\s+(?:the\s+|a\s+)?|\bpost-)$",
                              text[:m.start], re.I))


def _imaging_interpretation(v: MentionView) -> bool:
    return v.m.concept.startswith("imaging_") and bool(_IMAGING_READ.match(v.text[v.m.end:]))


def _study_reading(v: MentionView) -> bool:
    return bool(_READING_HEAD.match(v.line_before) or _READING_VERB.search(v.before))


def _pt_patient(v: MentionView) -> bool:
    m = v.m
    return m.text in ("pt", "Pt") and m.kind != "interpretation" and not re.search(r"\d", (m.value or "")
                                                                                   + v.after[:12])


def _generic_transfusion(v: MentionView) -> bool:
    m = v.m
    if m.concept != "transfusion" or not _GENERIC_TRANSFUSION.match(m.text.strip()):
        return False
    return any(o is not m and o.concept == "transfusion" and o.start >= m.end
               and not _GENERIC_TRANSFUSION.match(o.text.strip()) and _UNITS_OF.match(v.text[m.end:o.start])
               for o in v.others)


def _device_as_route(v: MentionView) -> bool:
    # a central or arterial line "intact" / "in place" is charted as a line with a start and end;
    # a tube in place is not a statement annotators check
    m = v.m
    return m.concept in _LINES_TUBES and bool(_ROUTE_BEFORE.search(v.before) or (
        m.concept in _PRESENT_ONLY and re.match(r"^\s*(?:in\s+place|intact)\b", v.after, re.I)))


#: the kinds of statement a device or therapy may be the circumstance of
_CIRCUMSTANCE_OF = ("measurement", "trend", "range", "interpretation", "diagnosis", "medication", "infusion")
_CIRCUMSTANCE_WORD = re.compile(r"(?:^|[\s(])(?P<verb>[A-Za-z]+\s+)?(?:" + _alt("circumstance_words")
                                + r")\s+(?:the\s+|an?\s+|his\s+|her\s+)?$", re.I)
_PAREN_OPEN = re.compile(r"[^()]{0,25}\(\s*(?:(?:" + _alt("circumstance_words") + r")\s+)?(?:the\s+)?", re.I)
_START_VERB = re.compile(r"^(?:" + _alt("therapy_start_verbs") + r")\s+$", re.I)


def _therapy_as_circumstance(v: MentionView) -> bool:
    """A device or therapy that qualifies the statement before it in its clause: inside a
    parenthesis right after it ("Cr 1.2 (on CRRT)", "Ca gluconate (CRRT)") or after "on",
    "via", "per" ("Cr creeping up on CRRT", "ESRD on HD", "metoprolol via PEG"). A verb of
    the therapy's own course before "on" ("started on CRRT", "remains on HD") makes it a
    claim, and so does a procedure before it ("Hemodialysis (CRRT)", "Swan (R IJ)").
    """
    m = v.m
    clause_start = m.start - len(v.before)
    prev = max((o for o in v.others if o is not m and o.line == m.line and clause_start <= o.start
                and o.end <= m.start), key=lambda o: o.end, default=None)
    if prev is None or prev.kind not in _CIRCUMSTANCE_OF:
        return False
    gap = v.text[prev.end:m.start]
    if _PAREN_OPEN.fullmatch(gap):
        return True
    word = _CIRCUMSTANCE_WORD.search(gap)
    if word is None or (word.group("verb") and _START_VERB.match(word.group("verb"))):
        return False
    return prev.kind in ("medication", "infusion") or not re.search(r"\bvia\b", word.group(0), re.I)


def _consult_request(v: MentionView) -> bool:
    return bool(_CONSULT.match(v.after))


def _elsewhere_event(v: MentionView) -> bool:
    return bool(_ELSEWHERE_AFTER.match(v.after))


def _repeated_procedure(v: MentionView) -> bool:
    m = v.m
    return not m.value and any(o is not m and o.concept == m.concept and o.end <= m.start
                               and _PROC_JOIN.match(v.text[o.end:m.start]) for o in v.others)


def _order_condition(v: MentionView) -> bool:
    return bool(_CONDITIONAL.search(v.before))


def _imperative_order(v: MentionView) -> bool:
    m = v.m
    # "Repeat lactate 2.1": a lab with its number is a result, not an order
    return bool(_IMPERATIVE.match(v.before + m.text) and not re.search(r"\b(?:was|were|had|has\s+been)\b", v.before)
                and not (m.kind in ("measurement", "range", "trend") and re.search(r"\d", m.value or "")))


def _opinion(v: MentionView) -> bool:
    return bool(_OPINION.search(v.before))


def _admission_reason(v: MentionView) -> bool:
    return bool(_ADMITTED_WITH.search(v.full_before[-160:]))


def _history_introduction(v: MentionView) -> bool:
    """"80s F w/ large stroke, AF, DM2": the one-line introduction lists what the patient
    has had, not what was observed at the bedside this shift.
    """
    return bool(_INTRODUCTION.search(v.full_before[-200:]))


_DX_LIST = re.compile(r"^\s*(?:[-*#]\s*)?(?:" + _alt("diagnosis_list_heads") + r")\s*:", re.I)


def _diagnosis_list(v: MentionView) -> bool:
    """"Dx: UGIB, septic shock, AML w/ leukocytosis": a state named in the line's diagnosis
    list is one of the listed diagnoses (billing codes), not a claim judged by a criterion.
    """
    return bool(_DX_LIST.match(v.line_before))


def _heading_word(v: MentionView) -> bool:
    """"RESP: Increased work of breathing": a name opening its line as a section heading
    labels what follows; without a number it is no subject of a trend or value.
    """
    m = v.m
    return (not v.line_before.strip(" -*#\t") and not re.search(r"\d", m.value or "")
            and bool(re.match(r"\s*:", v.text[v.title_end:])) and match_header(f"{m.text}:", "physician") is not None)


def _sedation_drug(v: MentionView) -> bool:
    return (v.m.concept == "consciousness" and bool(re.match(r"^\s*(?:on|with|w/)\s", v.text[v.title_end:], re.I))
            and any(o.concept == "drug" and 0 <= o.start - v.title_end <= 8 for o in v.others))


def _o2_flow_device(v: MentionView) -> bool:
    return v.m.concept == "o2_flow" and any(o.concept == "o2_device" and 0 <= o.start - v.m.end <= 2 for o in v.others)


def _drugs(m: Mention) -> tuple[str, ...]:
    return m.claim.drugs if isinstance(m.claim, MedicationClaim) else ()


def _drug_second_name(v: MentionView) -> bool:
    m = v.m
    members = _drugs(m)
    return m.concept == "drug" and bool(members) and any(
        m.start - 1 <= o.end <= m.start and o.concept == "drug" and re.fullmatch(r"[ \t]?", v.text[o.end:m.start])
        and _drugs(o) == members for o in v.others)


def _drug_class_member(v: MentionView) -> bool:
    m = v.m
    members = _drugs(m)
    return m.concept == "drug" and len(members) > 1 and any(
        o is not m and o.concept == "drug" and o.start >= m.end and len(_drugs(o)) == 1
        and _drugs(o)[0] in members and not re.search(r"[.;]", v.text[m.end:o.start]) for o in v.others)


def _time_reference(v: MentionView) -> bool:
    return bool(_TIME_CLAUSE.search(v.before)) and not re.search(r"\d", (v.m.value or "") + v.after[:15])


def _indication(v: MentionView) -> bool:
    # a state told with its own value ("for tachypnea to the 30s") is observed, not only the reason
    claim = v.m.claim
    valued = isinstance(claim, InterpretationClaim) and not claim.negated and (
        claim.reading.value is not None or claim.reading.min is not None or claim.reading.max is not None)
    return bool(_INDICATION.search(v.before)) and not valued


def _procedure_tail(v: MentionView) -> bool:
    m = v.m
    if m.concept != "procedure_code":
        return False
    # the joining word may sit inside the tail's own text ("with control of bleeding")
    lead = re.match(r"(?:with|and)(?=\s)", m.text, re.I)
    # after a named bedside procedure ("Bronchoscopy with BAL"); two coded procedures
    # ("colectomy with end ileostomy") stay two entities
    return any(o is not m and o.end <= m.start and o.line == m.line and o.concept != "procedure_code"
               and _PROC_JOIN.match(v.text[o.end:m.start] + (lead.group(0) if lead else "")) for o in v.others)


def _bare_device(v: MentionView) -> bool:
    # "foley 2.4 L today" is the urine output
    return (v.m.concept == "foley" and not _DEVICE_ACTION.search(v.before + " " + v.m.text + " " + v.after[:30])
            and not _URINE_LOOK.search(v.after[:40]) and not re.match(r"^\W{0,3}\d", v.after))


_STATE = ("interpretation", "diagnosis")
_ORDER = ("procedure", "medication", "infusion")

#: every non-statement rule, in the order the engine tries them (first match wins)
NON_STATEMENT_RULES: RuleBook[Callable[[MentionView], bool]] = RuleBook([
    Rule("nonstatement.problem_title", "A problem-list title names the problem its following text discusses; the "
         "statements are in that text, unless the title's own words are the claim.", _problem_title),
    Rule("nonstatement.word_fragment", "A match inside a longer word is no mention at all.", _word_fragment),
    Rule("nonstatement.lone_title", "A problem named alone on its line is a title, not a finding; an adjective "
         "alone is a state and stays.", _lone_title, ("interpretation", "diagnosis", "finding")),
    Rule("nonstatement.home_medication", "A home medication is not an order of this stay.", _home_medication,
         ("medication", "infusion")),
    Rule("nonstatement.code_event", "'Code' as a time reference to an arrest is not a code status.", _code_event),
    Rule("nonstatement.imaging_interpretation", "An imaging study named as the head of its reading is an imaging "
         "interpretation, which the tables do not hold.", _imaging_interpretation),
    Rule("nonstatement.study_reading", "Findings inside a study's reading belong to the reading, not to the "
         "charted record.", _study_reading),
    Rule("nonstatement.pt_patient", "'pt' without a number is the patient, not the prothrombin time.", _pt_patient),
    Rule("nonstatement.generic_transfusion", "A generic transfusion word beside the product given is the same "
         "statement as the product mention.", _generic_transfusion),
    Rule("nonstatement.device_as_route", "A line or tube named as the route or site of something else asserts "
         "nothing about the device.", _device_as_route),
    Rule("nonstatement.therapy_as_circumstance", "A device or therapy named as the circumstance of the result, "
         "problem or drug before it (in a parenthesis after it, or after on / via / per) asserts nothing about the "
         "device or therapy.", _therapy_as_circumstance, ("procedure",)),
    Rule("nonstatement.consult_request", "A procedure named in a consult request is the request, not the "
         "procedure.", _consult_request, ("procedure",)),
    Rule("nonstatement.elsewhere_event", "An event at an outside hospital or in the ED happened before this stay's "
         "record.", _elsewhere_event, ("procedure", "medication", "infusion", "diagnosis")),
    Rule("nonstatement.repeated_procedure", "One procedure named twice in a row is one entity.", _repeated_procedure,
         ("procedure",)),
    Rule("nonstatement.order_condition", "The condition of an order is a hypothetical, not an observation.",
         _order_condition),
    Rule("nonstatement.imperative_order", "An order in the imperative is a plan; a lab stated with its number is a "
         "result.", _imperative_order),
    Rule("nonstatement.opinion", "A consultant's opinion or a hedged impression is not a charted fact.", _opinion,
         _STATE),
    Rule("nonstatement.admission_reason", "The problem a patient was admitted with is history told in the one-liner, "
         "not a finding of the stay.", _admission_reason, _STATE),
    Rule("nonstatement.history_introduction", "A bedside finding listed in the patient's one-line introduction (age, "
         "sex, 'with ...') is history, not an observation of the stay.", _history_introduction, ("finding",)),
    Rule("nonstatement.diagnosis_list", "A state named in a line's diagnosis list (Dx: ...) is one of the listed "
         "diagnoses, not a claim judged by a clinical criterion.", _diagnosis_list, ("interpretation",)),
    Rule("nonstatement.heading_word", "A name opening its line as a section heading labels what follows; without a "
         "number it is not the subject of a trend or value.", _heading_word, ("trend", "measurement", "range")),
    Rule("nonstatement.sedation_drug", "Sedation named by its drug is the drug's statement.", _sedation_drug),
    Rule("nonstatement.o2_flow_device", "An oxygen flow stated with its device is one statement, the device's.",
         _o2_flow_device),
    Rule("nonstatement.drug_second_name", "One drug named twice in a row is one entity.", _drug_second_name),
    Rule("nonstatement.drug_class_member", "A drug class beside the member drug it means is the member's "
         "statement.", _drug_class_member),
    Rule("nonstatement.time_reference", "A treatment or procedure used as a time reference asserts nothing about "
         "it.", _time_reference, _ORDER),
    Rule("nonstatement.indication", "A problem named as the indication of a treatment is not a claim about the "
         "patient's state, unless it is told with its own value (for tachypnea to the 30s).", _indication, _STATE),
    Rule("nonstatement.procedure_tail", "The tail of a procedure name split at 'with' or 'and' is part of one "
         "procedure.", _procedure_tail),
    Rule("nonstatement.bare_device", "A urinary catheter merely present asserts nothing; an action on it or the "
         "urine it drains does.", _bare_device),
])
