"""Which extracted mentions are statements at all (paper Appendix B.3, "Definition of Entity").

The annotation protocol labels statements that can be checked against the tables; it
does not label the words around them. Real notes are full of such words, and each one
the extractor keeps is a false positive however it is verified:

- a problem-list title ("# Anemia: no overt bleeding", "# Hypotension: likely sedation
  related") names the problem the following text discusses; the statements are in that
  text (a title mention that already carries the body's claim, "# AFib: currently in AF",
  stays); so is a problem named alone on its line ("# Hypotension", "Problem: Hyperkalemia",
  "Anemia.", the nursing care-plan title "Hypotension (not Shock)") outside the
  discharge-diagnosis list; adjectives alone ("Afebrile.") are states;
- a home medication ("holding home lisinopril") is not this stay's order; the problem a
  patient was admitted with ("admitted [**7-7**] with COPD flare and ARF") is history, told
  in the one-liner, not a finding of the stay; "sedated on propofol 30 mcg/kg/min" is the
  propofol statement;
- "code" as a time reference ("asystole during code", "post-code") is not a code status;
  a status word (full, DNR, DNI, CMO) or "code status" makes one, and "code called" is the
  arrest itself;
- an imaging study named as the head of its reading ("CXR: possible atelectasis", "CT
  showed ...") is an imaging interpretation, out of scope, and so is every finding in the
  reading ("EKG: sinus rhythm", "Echo at OSH showed a large effusion");
- a match inside a longer word ("bal" in "balance") is no mention at all;
- "pt" without a number is the patient, not the prothrombin time;
- a generic "transfused" / "transfusion" next to the product that was given ("transfused
  2 units of packed red cells") is the same statement as the product mention;
- the tail of a procedure name split at "with" / "and" ("Bronchoscopy with bronchoalveolar
  lavage") is part of one procedure, one entity;
- a urinary catheter merely present ("foley in place", "via foley") asserts nothing about the
  catheter; only an action (placed, removed, changed) or the urine it drains does;
- a line or tube named as the route or site of something else ("SBP 95-177 via aline",
  "flushes via OGT", "OGT in place") is not a statement about the device ("R IJ TLC
  intact" is: lines are charted with start and end);
- "ERCP consult" is a consult request; "intubated at OSH", "intubated in ED" happened before
  this stay's record (paper §4.3: the ED visit is out of scope);
- a drug class beside the member it means ("Abx changed to daptomycin", "max pressors: levo
  0.8") is the member's statement; a class or procedure used as a time reference ("once off
  pressors he was diuresed", "advance diet after ERCP") asserts nothing; a problem named as
  the indication of a treatment ("vitamin K for his coagulopathy") is not a finding;
- conditions of orders ("if hypotensive again, give IVF"), orders in the imperative
  ("replete lytes prn", "- start heparin") and consultants' opinions or hedged impressions
  ("renal feels AKI is prerenal", "likely pneumonia") are plans and opinions, not facts;
- an oxygen flow stated with its device ("2L NC", "10L face tent") is one statement, the
  device's (the flow mention's value already names it);
- one drug named twice in a row ("regular insulin SSI") and one procedure named twice
  ("intubation and mechanical ventilation") is one entity;
- the allergy list is not part of the hospitalization.

Each rule looks only at the mention and its own clause, so it carries over to unseen notes.
"""
from __future__ import annotations

import re
from typing import Sequence

from ehrlib.pipeline.offline.mentions import Mention

__all__ = ["drop_non_statements", "is_allergy_paragraph", "is_drug_class", "non_statement_reason"]

_TITLE_PREFIX = re.compile(r"^\s*(?:#+\s*|\d{1,2}[.)]\s*|\(?[a-z][.)]\s+)(?:[A-Za-z/&'-]+\s*){0,4}$", re.I)
_LONE_PREFIX = re.compile(r"^\s*(?:#+\s*|\d{1,2}[.)]\s*|[-*\u2022]\s*|(?:problem|dx|diagnosis|assessment|impression)\s*#?\d*\s*:\s*)?$", re.I)
# nothing after the title, or a care-plan qualifier ("Hypotension (not Shock)", "... (acute, chronic)")
_LONE_SUFFIX = re.compile(r"\s*(?:\((?:not|non|w/o|without|other|acute|chronic|unspecified)\b[^)]*\))?\s*[:.]?\s*", re.I)
_ADJECTIVE = re.compile(r"(?:ive|ile|ic|ed|ent|ing|al)$", re.I)
_TITLE_CLAIM = re.compile(r"^\s*(?::|-|--)\s*(?:none|no|neg(?:ative)?|absent|resolved|denies|n/a)\s*(?:$|[.;,\n])", re.I)
_STATUS_WORD = re.compile(r"\b(?:full|dnr|dni|cmo|comfort|status|do\s+not\s+(?:resuscitate|intubate))\b", re.I)
_IMAGING_READ = re.compile(r"^\s*(?:\([^)]{0,30}\)\s*)?(?::|-\s|(?:was|is)?\s*(?:with|showed|shows|show|showing|revealed|"
                           r"reveals|demonstrat\w*|notable\s+for|significant\s+for|c/w|consistent\s+with|without|w/o|"
                           r"no\s+(?:new|acute|change)|unchanged|improved|clear|negative|neg\b|read\s+as|impression))", re.I)
_STUDY = (r"(?:portable\s+)?(?:cxr|chest\s+x-?ray|x-?ray|ct|cta|mri|mra|echo(?:cardiogram)?|tte|tee|ekg|ecg|kub|"
          r"(?:ruq\s+|renal\s+|abd(?:ominal)?\s+)?(?:us|ultrasound|u/s|doppler)|imaging|radiology|scan)")
_READING_HEAD = re.compile(r"^\s*(?:[-*#\u2022]\s*)?" + _STUDY + r"\b[^:.;]{0,30}:", re.I)
_READING_VERB = re.compile(r"\b" + _STUDY + r"\b[^.;]{0,40}?\b(?:showed|shows|show|showing|revealed|reveals|demonstrat\w*|"
                           r"c/w|consistent\s+with|notable\s+for|significant\s+for|read\s+as|concerning\s+for)\b[^.;]*$", re.I)
_GENERIC_TRANSFUSION = re.compile(r"^(?:transfus\w*|blood\s+transfusions?)$", re.I)
_LINES_TUBES = ("arterial_line", "ng_tube", "foley", "central_line", "picc")
_ROUTE_BEFORE = re.compile(r"\b(?:via|through|thru|per|by|from)\s+(?:the\s+|an?\s+|his\s+|her\s+|(?:r|l|rt|lt|right|left)\s+)?$"
                           r"|\bon\s+(?:the\s+)?$", re.I)
_ELSEWHERE_AFTER = re.compile(r"^\s*(?:at|in|from)\s+(?:the\s+|an?\s+)?(?:osh|outside\s+(?:hospital|facility)|ed|er|"
                              r"emergency\s+(?:department|room)|field|nursing\s+home|rehab)\b|^\s*prior\s+to\s+"
                              r"(?:arrival|admission|transfer)\b", re.I)
_CONDITIONAL = re.compile(r"\b(?:if|unless|in\s+case\s+of|should\s+(?:he|she|pt|patient)\s+(?:become|be|get))\s+[^.;:]{0,40}$", re.I)
_IMPERATIVE = re.compile(r"^\s*(?:[-*\u2022]\s*|#\s*[A-Za-z/ ]{1,20}?\s+-\s+)?(?:start|give|replete|avoid|check|send|obtain|transfuse|add|"
                         r"increase|decrease|restart|resume|wean|trend|monitor|hold|continue|cont|titrate|consider|"
                         r"discontinue|d/c|stop|renally\s+dose|recheck|repeat|follow|f/u|goal)\b", re.I)
_OPINION = re.compile(r"\b(?:recommend\w*|recs?|feels?|felt|thinks?|thought|believes?|suggest\w*|likely|possibl[ey]|"
                      r"probabl[ey]|presum\w*|suspect\w*|concern(?:ed|ing)?\s+for|r/o|rule\s+out|ddx|differential|"
                      r"cannot\s+exclude|versus|vs\.?|\?)\s+(?:\S+\s+){0,2}$", re.I)
_ADMITTED_WITH = re.compile(r"\b(?:admitted|readmitted|presented|presents|presenting|transferred|sent\s+in|brought\s+in)\b"
                            r"[^.;]{0,80}?\b(?:with|w/|for|after)(?=\s)[^.;]*$", re.I)
_TIME_CLAUSE = re.compile(r"\b(?:once|after|until|till|before|following|upon|when|while)\s+(?:(?:being|getting|the|his|her|"
                          r"off|on|of|she|he|pt|was|is|were)\s+){0,3}$", re.I)
_INDICATION = re.compile(r"\b(?:for|given\s+for|treated\s+for|to\s+treat)\s+(?:his|her|the|their|presumed|possible|"
                         r"likely|ongoing|worsening|persistent|suspected)?\s*$", re.I)
_UNITS_OF = re.compile(r"^\s*(?:(?:an?|one|two|three|\d+)\s*(?:units?|u|bags?|packs?)?\s*(?:of\s+)?)?$", re.I)
_PROC_JOIN = re.compile(r"^\s*(?:with|and|w/|&|plus)\s*$", re.I)
_DEVICE_ACTION = re.compile(r"\b(?:plac(?:ed|ement)|insert\w*|remov\w*|pulled|d/?c'?d|discontinu\w*|chang\w*|exchang\w*|"
                            r"replac\w*|re-?sited|new|started|out)\b", re.I)
_URINE_LOOK = re.compile(r"\b(?:yellow|amber|clear|cloudy|sediment\w*|bloody|pink|tea|concentrated|dark|hematuria)\b", re.I)
_ALLERGY = re.compile(r"^\s*(?:allerg(?:y|ies)|adverse\s+drug\s+reactions?|nkda)\b", re.I)


def _clause(text: str, start: int, end: int) -> tuple[str, str]:
    """The clause text before and after a mention (to the nearest sentence or list break)."""
    before = re.split(r"[.;]\s|[,;]\s(?=[A-Z#])|\n", text[:start])[-1]
    after = re.split(r"[.;](?:\s|$)", text[end:])[0]
    return before, after


def non_statement_reason(m: Mention, text: str, others: Sequence[Mention] = ()) -> str | None:
    """Why mention ``m`` (positions in ``text``) is not a statement, or None when it may be one."""
    before, after = _clause(text, m.start, m.end)
    full_before = text[:m.start]
    line_before = full_before.rsplit("\n", 1)[-1]
    title_end = m.start + len(m.text) if text.startswith(m.text, m.start) else m.end
    headed = bool(_TITLE_PREFIX.match(line_before)) or (
        # "HYPERTENSION: continued metoprolol", "Hyperkalemia: K 6.9": a problem named as the
        # label of its own paragraph (a field label with its value, "Lungs: clear", is a finding)
        not line_before.strip() and m.kind in ("interpretation", "diagnosis")
        and (not m.value or m.value.lower() == m.text.lower()))
    if (m.concept != "code_status" and m.end <= title_end + 1 and headed and not re.search(r"\d", m.text)
            and re.match(r"^\s*(?::|-\s|--)", text[title_end:]) and not _TITLE_CLAIM.match(text[title_end:])):
        return "problem-list title"
    if (m.text[:1].isalpha() and m.start > 0 and text[m.start - 1].isalpha()) or (
            m.text[-1:].isalpha() and text[title_end:title_end + 1].isalpha()):
        return "a fragment of a longer word ('bal' in 'balance')"
    line_after = text[title_end:].split("\n", 1)[0]
    if (m.kind in ("interpretation", "diagnosis", "finding") and m.concept not in ("procedure_code", "code_status")
            and not m.attributes.get("negated")
            and (not m.value or m.value.lower() == m.text.lower()) and not _ADJECTIVE.search(m.text)
            and _LONE_PREFIX.match(line_before) and _LONE_SUFFIX.fullmatch(line_after)):
        return "a problem title alone on its line ('# Hypotension', 'Problem: Hyperkalemia', 'Anemia.')"
    if re.search(r"\bhome\s+(?:dose\s+(?:of\s+)?)?$", before, re.I) and m.kind in ("medication", "infusion"):
        return "a home medication"
    if m.concept == "code_status" and m.text.lower() == "code":
        window = text[max(0, m.start - 12):m.end + 25]
        if (not _STATUS_WORD.search(window) and not re.match(r"\s*:\s*\w", text[m.end:])
                and re.search(r"(?:\b(?:during|after|since|before|following|post)\s+(?:the\s+|a\s+)?|\bpost-)$", text[:m.start], re.I)):
            # "asystole during code", "post-code": the arrest as a time reference; "code called" is the
            # arrest itself (a procedure event), left to verification
            return "a code event, not a code status"
    if m.concept.startswith("imaging_") and _IMAGING_READ.match(text[m.end:]):
        return "imaging interpretation"
    if _READING_HEAD.match(line_before) or _READING_VERB.search(before):
        return "part of a study's reading ('EKG: sinus rhythm', 'Echo at OSH showed ...')"
    if m.text in ("pt", "Pt") and m.kind != "interpretation" and not re.search(r"\d", (m.value or "") + after[:12]):
        return "'pt' meaning the patient, not the prothrombin time"
    if m.concept == "transfusion" and _GENERIC_TRANSFUSION.match(m.text.strip()):
        for o in others:
            if o is not m and o.concept == "transfusion" and o.start >= m.end and not _GENERIC_TRANSFUSION.match(
                    o.text.strip()) and _UNITS_OF.match(text[m.end:o.start]):
                return "generic transfusion word beside its product"
    if m.concept in _LINES_TUBES and (_ROUTE_BEFORE.search(before) or (
            m.concept in ("ng_tube", "foley") and re.match(r"^\s*(?:in\s+place|intact)\b", after, re.I))):
        # a central or arterial line "intact" / "in place" is charted as a line with a start and end;
        # a tube in place is not a statement annotators check
        return "device named as a route or site, not a claim about it"
    if re.match(r"^\s*(?:consult|consulted|team|recs?)\b", after, re.I) and m.kind == "procedure":
        return "a consult request, not the procedure"
    if m.kind in ("procedure", "medication", "infusion", "diagnosis") and _ELSEWHERE_AFTER.match(after):
        return "an event at the outside hospital or in the ED"
    if not m.value and m.kind == "procedure":
        for o in others:
            if o is not m and o.concept == m.concept and o.end <= m.start and _PROC_JOIN.match(text[o.end:m.start]):
                return "the same procedure named twice ('intubation and mechanical ventilation')"
    if _CONDITIONAL.search(before):
        return "a condition of an order ('if hypotensive again, give IVF'), not an observation"
    if (_IMPERATIVE.match(before + m.text) and not re.search(r"\b(?:was|were|had|has\s+been)\b", before)
            and not (m.kind in ("measurement", "range", "trend") and re.search(r"\d", m.value or ""))):
        # "Repeat lactate 2.1": a lab with its number is a result, not an order
        return "an order in the imperative ('replete lytes prn', 'start heparin'), a plan"
    if m.kind in ("interpretation", "diagnosis") and _OPINION.search(before):
        return "a consultant's opinion or a hedged impression, not a charted fact"
    if m.kind in ("interpretation", "diagnosis") and _ADMITTED_WITH.search(full_before[-160:]):
        return "the reason for admission ('admitted with septic shock'), told as history"
    if m.concept == "consciousness" and re.match(r"^\s*(?:on|with|w/)\s", text[title_end:], re.I) and any(
            o.concept == "drug" and 0 <= o.start - title_end <= 8 for o in others):
        return "sedation named by its drug ('sedated on propofol 30'): the drug is the statement"
    if m.concept == "o2_flow" and any(o.concept == "o2_device" and 0 <= o.start - m.end <= 2 for o in others):
        return "the flow of the oxygen device named next ('2L NC'): one statement, the device's"
    members = m.attributes.get("drugs") or ()
    if m.concept == "drug" and members and any(
            o.concept == "drug" and o.end <= m.start and re.fullmatch(r"[ \t]?", text[o.end:m.start])
            and list(o.attributes.get("drugs") or ()) == list(members) for o in others):
        return "a second name of the drug just named ('regular insulin SSI')"
    if m.concept == "drug" and len(members) > 1:
        for o in others:
            if (o is not m and o.concept == "drug" and o.start >= m.end and len(o.attributes.get("drugs") or ()) == 1
                    and o.attributes["drugs"][0] in members and not re.search(r"[.;]", text[m.end:o.start])):
                return "a drug class whose member drug the clause names"
    if (m.kind in ("procedure", "medication", "infusion") and _TIME_CLAUSE.search(before)
            and not re.search(r"\d", (m.value or "") + after[:15])):
        return "a time reference ('once off pressors', 'after ERCP'), not a claim"
    if m.kind in ("interpretation", "diagnosis") and _INDICATION.search(before):
        return "the indication of a treatment, not a claim about the patient's state"
    if m.concept == "procedure_code":
        # the joining word may sit inside the tail's own text ("with control of bleeding")
        lead = re.match(r"(?:with|and)(?=\s)", m.text, re.I)
        for o in others:
            # after a named bedside procedure ("Bronchoscopy with BAL"); two coded procedures
            # ("colectomy with end ileostomy") stay two entities
            if (o is not m and o.end <= m.start and o.line == m.line and o.concept != "procedure_code"
                    and _PROC_JOIN.match(text[o.end:m.start] + (lead.group(0) if lead else ""))):
                return "tail of a split procedure name"
    if (m.concept == "foley" and not _DEVICE_ACTION.search(before + " " + m.text + " " + after[:30])
            and not _URINE_LOOK.search(after[:40]) and not re.match(r"^\W{0,3}\d", after)):
        # "foley 2.4 L today" is the urine output
        return "device named without a claim about it"
    return None


def is_allergy_paragraph(lines: Sequence[str], first_line: int) -> bool:
    """The paragraph is (or directly follows) an allergy header: drug names there are reactions."""
    if _ALLERGY.match(lines[first_line]):
        return True
    # only the line right above counts (a blank line in between ends the header's reach);
    # looking no further keeps a note of many blank lines linear
    j = first_line - 1
    return j >= 0 and bool(lines[j].strip()) and bool(re.match(r"^\s*allerg(?:y|ies)\s*:?\s*$", lines[j], re.I))


def is_drug_class(m: Mention) -> bool:
    """A class word ("abx", "pressors", "IVF"): an entity only when the patient has a member
    item to check it against (protocol: a class maps to a concrete item or is no entity)."""
    return m.concept == "drug" and len(m.attributes.get("drugs") or ()) > 1


def drop_non_statements(text: str, mentions: Sequence[Mention]) -> list[Mention]:
    """``mentions`` of one paragraph without those that are not statements (see module doc)."""
    return [m for m in mentions if non_statement_reason(m, text, mentions) is None]
