"""Medication mentions: drug names with dose, rate, route, frequency, action and course.

``vanc/zosyn started [**10-23**]``, ``lasix 40 mg IV x1``, ``levophed gtt at 0.1``,
``a 7-day course of levofloxacin``, ``vanc/zosyn day 5``. Names come from the lexicon and
from the patient's own order labels; a drug in a susceptibility ("resistant to cipro") is
no order, and two names of one drug ("Piperacillin/Tazobactam (Zosyn)") are one mention.
Slash-joined drugs share their clause's action and time; each drug keeps its own dose,
route and rates. A number right after the name with no unit is a dose in the drug's
recorded unit ("atorvastatin 40"); the rest of the sentence may state a course, one
mention per rate or stop (:mod:`.infusion_course`), or later doses. Brand and ward names
the lexicon lacks come from ``drug_synonyms.yaml``. Ambiguous abbreviations (which need
an infusion context; which mean another drug in their sentence's context, :mod:`.drug_senses`)
are data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import MedicationClaim
from ehrlib.pipeline.offline.clauses import clause_before
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.drug_phrases import denied_after, last_dose, named_before, own_item
from ehrlib.pipeline.offline.drug_senses import drug_senses, sense_of
from ehrlib.pipeline.offline.infusion_course import (
    CLAUSE_TIME_RULE,
    COURSE_RULE,
    HEAD_ONLY,
    CourseStep,
    course_steps,
    number,
)
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention, concept_flags, line_clause, overlaps
from ehrlib.pipeline.offline.microsens import is_susceptibility_name
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.timex import parse_duration_days

__all__ = ["medication_mentions", "RULES"]

_FLAGS = concept_flags()
_SENSES = drug_senses(_FLAGS)
#: a limit on intake ("free water restrict", "fluid restriction") orders no drug
_RESTRICTION = "|".join(_FLAGS.get("restriction_words") or ["(?!)"])
_RESTRICTED_AFTER = re.compile(rf"\s*(?:{_RESTRICTION})\b", re.I)
_RESTRICTED_BEFORE = re.compile(rf"\b(?:{_RESTRICTION})\s+(?:of\s+|to\s+)?$", re.I)
_DOSE = re.compile(r"(?<![\d.,])(?P<dose>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*"
                   r"(?P<unit>mg|mcg|g|gm|grams?|units?|u|meq|mmol|ml|cc|mg/kg|mcg/kg/min|mcg/min|"
                   r"mg/hr|units/hr|u/hr|l)\b", re.I)
#: a number right after the drug name with no unit ("atorvastatin 40, ...", "lasix 40 IV"): a dose in the
#: drug's recorded unit, when what follows ends the item or is a route, frequency or count
_BARE_DOSE = re.compile(r"\s*(?P<dose>\d+(?:\.\d+)?)(?=\s*(?:$|[,;)]|\.(?:\s|$)|\s+(?:IV|IVP|PO|PR|SC|SQ|SubQ|IM|SL|NG|"
                        r"daily|qd|bid|tid|qid|qhs|q\s?\d{1,2}h?|prn|x\s?\d|once|and|then|continued|given|started)\b))",
                        re.I)
#: a further dose of the drug later in its sentence ("then 10 mg", ", 10mg IV at 2030"), after a word break
_LATER_DOSE = re.compile(r"(?<=[\s,;(])(?:then\s+)?(?P<dose>\d+(?:\.\d+)?)\s*"
                         r"(?P<unit>mg|mcg|g|gm|units?|meq|mmol)\b(?!\s*/)"
                         r"(?:\s+(?P<route>IV|IVP|PO|SC|SQ|SubQ|IM|PR|SL))?", re.I)
#: a count of administrations ("x3"), not a duration ("x 5 days")
_COUNT = re.compile(r"(?<![A-Za-z])x\s?(?P<n>[1-9]\d?)\b(?!\s*(?:/|days?\b|d\b|wks?\b|weeks?\b|hrs?\b|hours?\b))", re.I)
#: a count of doses told before the drug's name ("one dose of", "two doses of IV", "a single dose of")
_DOSES_OF = re.compile(r"\b(?P<n>[1-9]|one|two|three|four|five|an?\s+single|single|an?\s+one-time)\s+"
                       r"(?:doses?|boluses|bolus|pushes|push)\s+of\s+(?:[A-Za-z]+\s+)?$", re.I)
_DOSE_WORDS = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "single": 1.0, "one-time": 1.0}
#: ampules right after the drug ("D50 1 amp", "bicarb 2 amps"): each is one push, a count of administrations
_AMPS = re.compile(r"\s*(?P<n>[1-9])\s*amps?\b", re.I)
_ROUTE = re.compile(r"\b(IV|IVP|PO|SC|SQ|SubQ|IM|PR|SL|NG|inh|neb|topical|gtt|drip|infusion)\b", re.I)
#: a route before the drug's name, with at most two plain modifier words between ("SQ UF heparin"); a dose,
#: frequency or joiner between ("IV q8h + florinef") makes it the drug before's
_ROUTE_BEFORE = re.compile(r"\b(IV|IVP|PO|SC|SQ|SubQ|IM|PR|SL|NG|inh|neb|topical)\s+(?:(?!(?:and|or|then|plus|with|"
                           r"to|daily|qd|bid|tid|qid|qhs|prn)\b)[A-Za-z]{1,12}\s+){0,2}$", re.I)
#: a change of route later in the drug's clause ("changed to PO on [date]", "switched over to oral", "IV -> PO"):
#: the new route is a claim of its own, at the change's time; what comes before it is the first route's
_ROUTE_SWITCH = re.compile(r"(?:\b(?:changed|switched|converted|transitioned|stepped\s+down|narrowed)\s+(?:over\s+)?"
                           r"(?:back\s+)?to\s+|(?<=\b(?:IV|PO))\s*(?:->|→|to)\s*)"
                           r"(?P<route>IV|PO|SC|SQ|SubQ|IM|PR|NG|oral)\b", re.I)
_ROUTE_NAMES = {"SQ": "SC", "SUBQ": "SC", "ORAL": "PO"}


def route_switch(text: str) -> re.Match[str] | None:
    """The first change of route in a drug's clause, or None."""
    return _ROUTE_SWITCH.search(text)
_FREQ = re.compile(r"\b(q\s?\d{1,2}h?|q\s?\d{1,2}\s?hrs?|qd|daily|bid|tid|qid|qhs|qod|prn|once|x\s?1|stat|weekly)\b",
                   re.I)
_MED_ACTION = re.compile(r"\b(?P<a>start(?:ed)?|added|initiat(?:ed|e)|begun|began|given|gave|received|bolus(?:ed)?|"
                         r"load(?:ed)?|hung|pushed|"
                         r"continued|continue|on|restart(?:ed)?|resumed|stopp?(?:ed)?|discontinued|d/c'?d|dc'?d|d/c|held|hold|"
                         r"weaned(?:\s+off)?|titrated\s+(?:up|down|off)|off|increased|decreased|switched|changed|completed|"
                         r"repleted|transfused|diuresed)\b", re.I)


def _own_rate(head: str, step: CourseStep) -> bool:
    """Whether the sentence's first rate is the drug's own claim rather than a step of its
    course: nothing but infusion words precede it ("Lasix gtt 30 -> 20 mg/hr"), or it is
    a plain rate ("running 1300 u/hr", "started 2200 at 4 units/hr") after no dose of the
    drug, or a titration with nothing stated before it ("on levophed, up to 0.25"); a chain
    after other words, a titration after a time, or any rate after a clause of the drug's
    own ("started 1255 for dyssynchrony, at 25 mcg/kg/min": the start and the rate are two
    claims), is a step.
    """
    if HEAD_ONLY.fullmatch(head):
        return True
    if step.chained or len(head) > 60 or _DOSE.search(head) or _BARE_DOSE.match(head):
        return False
    clause = re.split(r"[,;]", head)
    if len(clause) > 1 and clause[0].strip() and not HEAD_ONLY.fullmatch(clause[0]):
        return False
    return step.action is None or not re.search(r"\d", head)


#: what may stand between a drug's name and its action ("TPN d/c'd", "heparin gtt was held")
_NAME_TO_ACTION = re.compile(r"\s*(?:gtt|drip|infusion)?\s*(?:(?:was|were|is|has\s+been|been)\s+)?", re.I)


def _owned_by_drug_before(raw: str, at: int, spans: list[tuple[int, int, list[str]]]) -> bool:
    """Whether the action word at ``at`` directly follows another drug's name: it is that
    drug's action ("TPN d/c'd this AM, TF advanced to goal"), not the next drug's.
    """
    return any(b <= at and _NAME_TO_ACTION.fullmatch(raw[b:at]) for _, b, _ in spans)


def _nearest_action(lead: str) -> re.Match[str] | None:
    """The action word of the text right before a drug's name: the run of action words
    nearest the name, read from its first word ("started on heparin" is a start), after the
    lead's last comma or semicolon ("levophed weaned off, remains on vasopressin": the stop
    is the other drug's, the state word "on" is vasopressin's).
    """
    tail = re.split(r"[,;]", lead)[-1]
    found = list(_MED_ACTION.finditer(tail))
    if not found:
        return None
    first = len(found) - 1
    while first > 0 and not tail[found[first - 1].end():found[first].start()].strip():
        first -= 1
    got = _MED_ACTION.match(lead, len(lead) - len(tail) + found[first].start())
    return got


#: a number that may continue a product's name: a decimal not followed by a unit or a rate ("Isosource 1.5 at")
_NAME_NUMBER = re.compile(r"[ \t]+(?P<n>\d\.\d{1,2})(?![\d.]|\s*(?:%|/|[a-z]*\s*/\s*(?:hr|h|min)\b|mg|mcg|g\b|ml|cc|"
                          r"units?|meq|mmol))", re.I)
_FORMULAS = re.compile("(?:" + "|".join(re.escape(w) for w in _FLAGS.get("formula_names") or ["(?!)"]) + ")$", re.I)


def _with_name_number(raw: str, span: tuple[int, int, list[str]], labels: set[str]) -> tuple[int, int, list[str]]:
    """A drug span stretched over a number that belongs to the product's name: one that
    continues the patient's order label ("Isosource 1.5", "Nutren 2.0" items) or the
    caloric density after an enteral formula's name ("Glucerna 1.5 at 60 mL/hr"); the
    number is then no dose.
    """
    a, b, names = span
    got = _NAME_NUMBER.match(raw, b)
    if got is None:
        return span
    name = re.sub(r"\s+", " ", raw[a:got.end()].lower())
    density = 1.0 <= float(got.group("n")) <= 2.0 and _FORMULAS.search(raw[a:b])
    return (a, got.end(), names) if name in labels or density else span


#: an amount written before the drug's name ("40 mEq KCl", "a 2 L LR bolus", "500 mL of NS", "20 mg IV lasix")
_DOSE_BEFORE = re.compile(r"(?<![\d.,])(?P<dose>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?P<unit>mg|mcg|g|gm|grams?|units?|"
                          r"meq|mmol|ml|cc|l|liters?)[ \t]+(?:of[ \t]+)?(?:(?:IV|IVP|PO|SC|SQ)[ \t]+)?$", re.I)
#: what sets an amount apart from the drug before it ("albumin 5% 500 mL and a 2 L LR bolus")
_JOINER = re.compile(r"[,;+]|\b(?:and|then|plus|with|also)\b", re.I)


#: a span after the drug that makes an amount before it a running total ("7L LR since arrival", "120 mEq KCl
#: over the first two days"), whose rows (other units, the ED) the window may not hold: no single dose
_SPAN_TOTAL = re.compile(r"\W*(?:\w+\W+){0,3}?(?:since|over\s+the|so\s+far|in\s+total|total|during)\b", re.I)


def _dose_before(raw: str, s: int, prev_end: int | None) -> re.Match[str] | None:
    """The amount written right before the drug name at ``s``, on its line: the drug's
    dose when no other drug precedes it in the clause, or a comma or joiner sets it apart
    from the one that does ("vancomycin 1 g cefepime" leaves the 1 g to vancomycin).
    """
    floor = max(0, s - 30, prev_end or 0)
    lead = raw[floor:s].rsplit("\n", 1)[-1]
    got = _DOSE_BEFORE.search(lead)
    if got is None:
        return None
    if prev_end is not None and prev_end >= s - 30 and not _JOINER.search(lead[:got.start()]):
        return None
    return got


def _own_route(raw: str, s: int, e: int, mine: str, reaches_next: bool) -> re.Match[str] | None:
    """The route word of the drug at ``raw[s:e]``: the one adjacent to it in its own
    clause. After the name first, but a route right before the next drug's name is that
    drug's ("PO vancomycin 125 mg plus IV metronidazole"); else one right before the name,
    on the same line ("heparin 5000 SC" ends the line above "K-Phos 15 mmol").
    """
    after = mine
    if reaches_next and (lead := _ROUTE_BEFORE.search(after)) and "\n" not in lead.group(0):
        after = after[:lead.start()]
    before = raw[max(0, s - 40):s].rsplit("\n", 1)[-1]
    return _ROUTE.search(raw[s:e] + after[:50]) or _ROUTE_BEFORE.search(before)


def _switch_mention(raw: str, line: int, base: int, m: re.Match[str], names: list[str]) -> Mention:
    a, b = base + m.start(), base + m.end()
    route = m.group("route").upper()
    claim = MedicationClaim(drugs=tuple(names), route=_ROUTE_NAMES.get(route, route), action="changed")
    return Mention(line, a, b, raw[a:b].strip(), "medication", "drug", None, claim)


def _dose_step(raw: str, line: int, base: int, d: re.Match[str], names: list[str]) -> Mention:
    a, b = base + d.start(), base + d.end()
    route = d.group("route")
    attrs: dict[str, Any] = {"drugs": tuple(names), "dose": float(d.group("dose")),
                             "dose_unit": d.group("unit").lower(),
                             "route": {"SQ": "SC", "SUBQ": "SC", "IVP": "IV"}.get(route.upper(), route.upper())
                             if route else None}
    return Mention(line, a, b, raw[a:b].strip(), "medication", "drug", None, MedicationClaim(**attrs))


def _step_mention(raw: str, line: int, base: int, step: CourseStep, names: list[str]) -> Mention:
    a, b = base + step.start, base + step.end
    if step.dose:  # "20 -> 40 mg IV": a dose of its own
        return Mention(line, base + step.start, base + step.end, raw[base + step.start:base + step.end].strip(),
                       "medication", "drug", None, MedicationClaim(drugs=tuple(names), dose=step.rate,
                                                                   dose_unit=step.unit, action=step.action))
    if step.given:  # "- last dose 0600": an administration at that time, of a drug that need not be a drip
        return Mention(line, a, b, raw[a:b].strip(), "medication", "drug", None,
                       MedicationClaim(drugs=tuple(names), action=step.action))
    attrs: dict[str, Any] = {"drugs": tuple(names), "infusion": True, "action": step.action}
    if step.rate is not None:
        attrs.update({"rate": step.rate, "rate_unit": step.unit})
    return Mention(line, a, b, raw[a:b].strip(), "infusion", "drug", None, MedicationClaim(**attrs))


#: "a second unit", "(1 unit also given at midnight)": units with no product named after them
_UNIT_PHRASE = re.compile(r"\b(?P<n>a\s+second|a\s+third|another|one\s+more|a|one|1|2|two)\s+"
                          r"(?:more\s+)?units?\b(?!\s*(?:of\b|/|[a-z]*\s*(?:prbc|ffp|plt|platelet|cryo|packed|blood|"
                          r"insulin|heparin)))", re.I)
_UNIT_COUNT = {"2": 2.0, "two": 2.0}


def unit_anaphors(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    """Units of blood product stated without the product ("1 unit PRBC overnight and a
    second unit late this morning"): each a transfusion claim of its own, about the
    product named before it in the paragraph (within 200 characters).
    """
    concept = lex.concepts.get("transfusion")
    if concept is None or not re.search(r"units?\b", raw, re.I):
        return []
    products = _product_words(tuple(concept.forms))
    out: list[Mention] = []
    for m in _UNIT_PHRASE.finditer(raw):
        if overlaps(taken, m.start(), m.end()) or not products.search(raw[max(0, m.start() - 200):m.start()]):
            continue
        units = _UNIT_COUNT.get(m.group("n").lower(), 1.0)
        out.append(Mention(line, m.start(), m.end(), m.group(0), "medication", concept.cid, None,
                           MedicationClaim(drugs=(concept.cid,), units=units)))
        taken.append((m.start(), m.end()))
    return out


@functools.lru_cache(maxsize=4)
def _product_words(forms: tuple[str, ...]) -> re.Pattern[str]:
    alt = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alt})(?![A-Za-z])", re.I)


_LEXICON_VIEWS: dict[int, tuple[Lexicon, dict[str, str], re.Pattern[str], set[tuple[str, ...]]]] = {}


def _views(lex: Lexicon) -> tuple[dict[str, str], re.Pattern[str], set[tuple[str, ...]]]:
    """(synonyms, their pattern, the class member tuples) of a lexicon, built once per lexicon."""
    got = _LEXICON_VIEWS.get(id(lex))
    if got is None or got[0] is not lex:
        table, pattern = _synonyms(frozenset(lex.drugs) | frozenset(lex.drug_classes))
        got = (lex, table, pattern, {tuple(v) for v in lex.drug_classes.values()})
        _LEXICON_VIEWS[id(lex)] = got
    return got[1], got[2], got[3]


@functools.lru_cache(maxsize=4)
def _synonyms(known: frozenset[str]) -> tuple[dict[str, str], re.Pattern[str]]:
    """Brand and ward names of ``drug_synonyms.yaml`` the lexicon lacks ("imdur", "atorva",
    "dostinex") -> their generic, and the pattern finding them as whole words.
    """
    table = {str(k).lower(): str(v).lower() for k, v in load_data("drug_synonyms.yaml")["drug_synonyms"].items()
             if str(k).lower() not in known}
    alt = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True)) or "(?!)"
    return table, re.compile(rf"(?<![A-Za-z])(?:{alt})(?![A-Za-z])", re.I)


def medication_mentions(raw: str, line: int, lex: Lexicon, patient_drugs: Iterable[str],
                        taken: list[tuple[int, int]]) -> list[Mention]:
    """The medication mentions of one line, outside the spans already ``taken``."""
    out: list[Mention] = unit_anaphors(raw, line, lex, taken)
    spans: list[tuple[int, int, list[str]]] = []
    for m in lex.drug_re.finditer(raw):
        word = re.sub(r"\s+", " ", m.group(0).lower())
        if word in _FLAGS["ambiguous_drug_words"] and not re.search(r"(gtt|drip|bolus|\d|iv|ml|l\b|cc|@|at|,|and)",
                                                                    raw[m.end():m.end() + 12], re.I):
            continue
        if word in lex.drug_classes and re.match(r"\s*:", raw[m.end():]):
            continue  # "Last dose of Antibiotics:" is a header
        names = list(lex.drug_classes.get(word, ())) or [lex.drugs[word]]
        if word in _SENSES:  # "levo 0.8 mcg/kg/min" is levophed; "levo/flagyl" levofloxacin
            names = [sense_of(raw, m.start(), m.end(), names[0], _SENSES[word], lex)]
        spans.append((m.start(), m.end(), names))
    known = {s for s, _, _ in spans}
    words: set[str] = set()
    labels = {re.sub(r"\s+", " ", str(d or "").lower().split("(")[0].strip()) for d in patient_drugs}
    for d in patient_drugs:
        head = re.split(r"[^a-z]+", (d or "").lower().strip())
        head = [w for w in head if w]
        if head and len(head[0]) >= 5:
            words.add(head[0])
    if words:
        for m in re.finditer(r"(?<![A-Za-z])([A-Za-z][A-Za-z]{4,})(?![A-Za-z])", raw):
            w = m.group(1).lower()
            if w in words and m.start() not in known and not any(a <= m.start() < b for a, b, _ in spans):
                whole = next((i for i, (a, b, _) in enumerate(spans) if not raw[b:m.start()].strip()
                              and raw[a:m.end()].lower() in labels), None)
                if whole is not None:  # "Heparin Sodium": the salt is part of the order's name, not a drug
                    spans[whole] = (spans[whole][0], m.end(), spans[whole][2])
                    continue
                spans.append((m.start(), m.end(), [lex.drugs.get(w, w)]))
    # brand and ward names of the synonym table, after the patient's own labels ("Dostinex" stays the order's name)
    synonyms, synonym_re, classes = _views(lex)
    for m in synonym_re.finditer(raw):
        if not any(a < m.end() and m.start() < b for a, b, _ in spans):
            spans.append((m.start(), m.end(), [synonyms[re.sub(r"\s+", " ", m.group(0).lower())]]))
    spans = sorted(_with_name_number(raw, sp, labels) for sp in spans)
    # "resistant to ciprofloxacin" names a susceptibility, not an order
    spans = [sp for sp in spans if not re.search(r"(?:resistant|sensitive|susceptible|resistance)\s+(?:to\s+)?"
                                                 r"(?:[a-z/\-]+\s*(?:,|and|/)\s*)*$", raw[max(0, sp[0] - 60):sp[0]],
                                                 re.I)]
    spans = [sp for sp in spans if not is_susceptibility_name(raw, sp[0], sp[1])]  # "levo R", "R to cipro"
    deduped: list[tuple[int, int, list[str]]] = []
    for sp in spans:
        if (deduped and raw[deduped[-1][1]:sp[0]].strip() == "(" and tuple(deduped[-1][2]) in classes
                and set(sp[2]) <= set(deduped[-1][2])):
            deduped[-1] = sp  # "pressors (levophed, dopamine)": the members named are the statement's drugs
            continue
        if deduped and not raw[deduped[-1][1]:sp[0]].strip() and tuple(sp[2]) in classes \
                and _family_after_member(deduped[-1][2], tuple(sp[2])):
            deduped[-1] = (deduped[-1][0], sp[1], deduped[-1][2])  # "Jevity 1.2 tube feeds": the member, named
            continue
        if deduped and re.fullmatch(r"\s*[(/]\s*", raw[deduped[-1][1]:sp[0]]) and (
                set(sp[2]) & set(deduped[-1][2]) or raw[deduped[-1][1]:sp[0]].strip() == "("):
            a, _, names = deduped[-1]
            # "Piperacillin/Tazobactam (Zosyn)", "Midazolam (Versed)": one drug, known by both names
            deduped[-1] = (a, sp[1], list(dict.fromkeys(names + sp[2])) if len(names) == 1 == len(sp[2]) else names)
            continue
        deduped.append(sp)
    spans = deduped
    # "vanc/zosyn started 10-23": slash-joined drugs share the clause's dose, action, ...
    span_starts = [a for a, _, _ in spans]
    for s, e, names in spans:
        if overlaps(taken, s, e):
            continue
        clause = line_clause(raw, e)
        k = bisect.bisect_right(span_starts, s)   # spans are in start order: the next drug named after this one
        nxt = span_starts[k] if k < len(span_starts) else None
        prev_end = max((b for _, b, _ in spans if b <= s), default=None)
        own = clause[: (nxt - e) if nxt is not None and nxt - e > 0 and not re.fullmatch(r"\s*[/,&+]\s*(?:and\s*)?",
                                                                                       raw[e:nxt]) else len(clause)]
        attrs: dict[str, Any] = {"drugs": tuple(names)}  # the MedicationClaim's fields
        # a shared clause lends its action and time, not the next drug's dose, route or rates
        mine = own[:nxt - e] if nxt is not None and 0 < nxt - e < len(own) else own
        if nxt is not None and e + len(mine) >= nxt and (ahead := _dose_before(raw, nxt, e)) is not None:
            mine = mine[:len(mine) - len(ahead.group(0))]  # "lasix 40 mg IV, 20 mEq KCl": the 20 mEq is KCl's
        mine = mine[:own_item(mine, _MED_ACTION)]  # "thiamine 100 IV, folate 1 mg": the 1 mg is the next item's
        steps = course_steps(mine)
        # the sentence's first stated rate is the drug's own ("on levophed, up to 0.25 mcg/kg/min"), unless
        # the drug already has a dose before it ("150 mg IV bolus, then drip at 1 mg/min": the drip is a step)
        first = steps[0] if steps and steps[0].rate is not None and steps[0].unit and _own_rate(
            mine[:steps[0].start], steps[0]) else None
        if first is not None and first.dose:  # "furosemide 20 -> 40 mg IV": the first dose is the drug's own
            attrs.update({"dose": first.rate, "dose_unit": first.unit})
            steps = steps[1:]
        elif first is not None:
            # "propofol weaned 40 -> 10 mcg/kg/min": the drug's own claim is the first rate
            attrs.update({"rate": first.rate, "rate_unit": first.unit, "infusion": True})
            steps = steps[1:]
        full = mine
        own, mine = (own[:steps[0].start], mine[:steps[0].start]) if steps else (own, mine)
        # another statement already read after the name (a blood product, "given platelets and cryo 118 cc")
        # ends the drug's own dose and route; later doses may still follow it ("5 mg for HR 110s, 10 mg at 2030")
        after = min((a for a, _ in taken if e <= a < e + len(mine)), default=None)
        mine = mine[:after - e] if after is not None else mine
        switch = route_switch(mine)
        if switch is not None:  # "750 mg IV, changed to PO on [date]": the PO is a later claim of its own
            own, mine = own[:switch.start()], mine[:switch.start()]
        dose = _DOSE.search(mine[:40]) if first is None else None
        if dose:
            per = re.match(r"\s*(?:/\s*kg\s*)?/\s*(?:hr|h|hour|min)\b|\s*per\s+(?:hr|hour|min)",
                           mine[dose.end():dose.end() + 12], re.I)
            unit = dose.group("unit").lower()
            if per or "/" in unit:
                attrs.update({"rate": number(dose.group("dose")), "rate_unit": unit + (per.group(0).strip() if per
                                                                                      else "")})
                attrs["infusion"] = True
            else:
                attrs.update({"dose": number(dose.group("dose")), "dose_unit": unit})
        elif first is None and (before := _dose_before(raw, s, prev_end)) is not None and not _SPAN_TOTAL.match(own):
            unit = before.group("unit").lower()
            attrs.update({"dose": number(before.group("dose")), "dose_unit": "l" if unit.startswith("liter") else unit})
        elif first is None and (bare := _BARE_DOSE.match(mine)):
            attrs["dose"] = float(bare.group("dose"))  # unit: the drug's recorded one
        # a route before the name is the drug's only right before it ("IV lasix"); "100 mg IV q8h + florinef"
        # has the route of the drug before
        route = _own_route(raw, s, e, mine, reaches_next=nxt is not None and e + len(mine) >= nxt)
        if route:
            r = route.group(1).upper()
            attrs["route"] = {"SQ": "SC", "SUBQ": "SC", "IVP": "IV", "DRIP": "IV", "GTT": "IV",
                              "INFUSION": "IV"}.get(r, r)
            if r in ("GTT", "DRIP", "INFUSION"):
                attrs["infusion"] = True
        # the drug's own item: "gtt 50 mcg/hr, bolus x3" is the bolus's; "D50 1 amp": an ampule is one push
        count = _COUNT.search(mine.split(",")[0][:50]) or _AMPS.match(mine)
        doses_of = _DOSES_OF.search(raw[max(0, s - 30):s])
        if count:
            attrs["units"] = float(count.group("n"))  # "KCl 20 mEq IV x3": three administrations
        elif doses_of:  # "one dose of haloperidol 5 mg IV": a count of administrations, told before the name
            n = doses_of.group("n").lower()
            attrs["units"] = float(n) if n.isdigit() else _DOSE_WORDS.get(n.split()[-1], 1.0)
        freq = _FREQ.search(mine[:50])
        if freq:
            attrs["freq"] = freq.group(1).lower()
        near = raw[max(0, s - 25):s]
        lead = clause_before(near, len(near), "phrase")
        lead_act = _nearest_action(lead)
        if lead_act and _owned_by_drug_before(raw, s - len(lead) + lead_act.start(), spans):
            lead_act = None  # "TPN d/c'd this AM, TF advanced": the action is TPN's, told after its name
        act = _MED_ACTION.search(own[:60]) or lead_act
        if act:
            attrs["action"] = act.group("a").lower()
        elif last_dose(raw[max(0, s - 50):s], raw[e:]):
            attrs["action"] = "last"  # "(last ceftriaxone dose ___)": the course's end, up to the note
        if first is not None and first.action:
            attrs["action"] = first.action  # "weaned 40 -> 10 mcg/kg/min" titrates; it does not stop
        dur = parse_duration_days(own[:min(60, own_item(own, _MED_ACTION))])
        before_dur = re.search(r"(\d{1,2})[-\s]day\s+(?:course|trial)\s+of\s+(?:\w+\s+)?$", raw[max(0, s - 30):s], re.I)
        if dur:
            attrs["duration_days"] = dur
        elif before_dur:
            attrs["duration_days"] = float(before_dur.group(1))  # "a 7-day course of levofloxacin"
        day_n = re.match(r"[\s/a-z0-9.,(]*?\bday\s*#?\s*(\d{1,2})\b", own[:30], re.I)
        if day_n:
            attrs["course_day"] = int(day_n.group(1))  # "vanc/zosyn day 5"
        negated_after = denied_after(own)
        attrs["negated"] = bool(negated_before(raw[:s], raw[e:]) or negated_after)
        if _RESTRICTED_AFTER.match(raw[e:]) or _RESTRICTED_BEFORE.search(raw[max(0, s - 20):s]):
            continue  # "free water restrict", "free water deficit": a limit or a need, not an order
        word = re.sub(r"\s+", " ", raw[s:e].lower().strip())
        is_class = len(names) > 1 and names == list(lex.drug_classes.get(word, ()))
        if is_class and not any(k in attrs for k in ("action", "dose", "rate", "duration_days", "course_day")):
            continue  # a bare class word ("Abx changed", "sedation") names no checkable order
        kind = "infusion" if attrs.get("infusion") else "medication"
        value = raw[e:e + len(own)].strip()[:60] or None
        out.append(Mention(line, s, e, raw[s:e].strip(), kind, "drug", value, MedicationClaim(**attrs)))
        if not attrs["negated"]:
            out += [_step_mention(raw, line, e, st, names) for st in steps]
            if switch is not None:
                out.append(_switch_mention(raw, line, e, switch, names))
            if attrs.get("dose_unit"):  # "5 mg IV x1 at 1520, 10 mg IV at 2030": each later dose is a claim
                later = _LATER_DOSE.finditer(full, dose.end() if dose else 0)
                out += [_dose_step(raw, line, e, d, names) for d in later
                        if not any(st.start <= d.start() < st.end for st in steps) and not named_before(full, d)]
    return out


def _family_after_member(names: list[str], family: tuple[str, ...]) -> bool:
    """Whether a family word right after a product ("Jevity 1.2 tube feeds") restates that product."""
    return bool(names) and set(names) <= set(family)


RULES = (
    COURSE_RULE,
    CLAUSE_TIME_RULE,
    Rule("extract.unit_anaphor", "Units of blood product stated without the product (\"a second unit\") are a "
         "transfusion claim about the product named before them in the paragraph.", unit_anaphors),
    Rule("extract.route_switch", "A change of route in a drug's clause (\"IV, changed to PO on [date]\") is a claim "
         "of its own about the new route at the change's time; the route before it is the drug's first.", route_switch),
    Rule("extract.product_name_number", "A number continuing a product's name (the patient's order label, or an "
         "enteral formula's caloric density: \"Isosource 1.5\") is part of the name, not a dose.", _with_name_number),
    Rule("extract.unitless_dose", "A number right after a drug name, ending its list item or followed by a route, "
         "frequency or count, is the drug's dose in the unit its own rows record.", _BARE_DOSE.match),
    Rule("extract.family_after_member", "A product family's word right after a member product's name (\"Jevity 1.2 "
         "tube feeds\") restates that product: one statement about the member, not a second about the family.",
         _family_after_member),
)
