"""Medication mentions: drug names with dose, rate, route, frequency, action and course.

``vanc/zosyn started [**10-23**]``, ``lasix 40 mg IV x1``, ``levophed gtt at 0.1``,
``a 7-day course of levofloxacin``, ``vanc/zosyn day 5``. Names come from the lexicon and
from the patient's own order labels; a drug in a susceptibility ("resistant to cipro") is
no order, and two names of one drug ("Piperacillin/Tazobactam (Zosyn)") are one mention.
Slash-joined drugs share their clause's claim fields. Ambiguous abbreviations (which need
an infusion context, which mean another drug with a rate) are data
(``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ehrlib.pipeline.claims import MedicationClaim
from ehrlib.pipeline.offline.clauses import clause_before
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention, concept_flags, line_clause, overlaps
from ehrlib.pipeline.offline.microsens import is_susceptibility_name
from ehrlib.pipeline.offline.timex import parse_duration_days

__all__ = ["medication_mentions"]

_FLAGS = concept_flags()
_DOSE = re.compile(r"(?P<dose>\d+(?:\.\d+)?)\s*(?P<unit>mg|mcg|g|gm|grams?|units?|u|meq|ml|cc|mg/kg|mcg/kg/min|mcg/min|mg/hr|units/hr|u/hr|l)\b", re.I)
_ROUTE = re.compile(r"\b(IV|IVP|PO|SC|SQ|SubQ|IM|PR|SL|NG|inh|neb|topical|gtt|drip|infusion)\b", re.I)
_FREQ = re.compile(r"\b(q\s?\d{1,2}h?|q\s?\d{1,2}\s?hrs?|qd|daily|bid|tid|qid|qhs|qod|prn|once|x\s?1|stat|weekly)\b", re.I)
_MED_ACTION = re.compile(r"\b(?P<a>start(?:ed)?|added|initiat(?:ed|e)|begun|began|given|gave|received|bolus(?:ed)?|load(?:ed)?|"
                         r"continued|continue|on|restart(?:ed)?|resumed|stopp?(?:ed)?|discontinued|d/c'?d|dc'?d|d/c|held|hold|"
                         r"weaned(?:\s+off)?|titrated\s+(?:up|down|off)|off|increased|decreased|switched|changed|completed|"
                         r"repleted|transfused|diuresed)\b", re.I)


def medication_mentions(raw: str, line: int, lex: Lexicon, patient_drugs: Iterable[str],
                        taken: list[tuple[int, int]]) -> list[Mention]:
    """The medication mentions of one line, outside the spans already ``taken``."""
    out: list[Mention] = []
    spans: list[tuple[int, int, list[str]]] = []
    for m in lex.drug_re.finditer(raw):
        word = re.sub(r"\s+", " ", m.group(0).lower())
        if word in _FLAGS["ambiguous_drug_words"] and not re.search(r"(gtt|drip|bolus|\d|iv|ml|l\b|cc|@|at|,|and)", raw[m.end():m.end() + 12], re.I):
            continue
        if word in lex.drug_classes and re.match(r"\s*:", raw[m.end():]):
            continue  # "Last dose of Antibiotics:" is a header
        names = list(lex.drug_classes.get(word, ())) or [lex.drugs[word]]
        if word in _FLAGS["rate_names"] and re.match(r"[\s@:-]*(?:gtt|drip|infusion|at\s+)?[\s@]*\d*\.?\d*\s*(?:mcg|gtt|drip)", raw[m.end():m.end() + 20], re.I):
            names = [_FLAGS["rate_names"][word]]  # "levo 0.8 mcg/kg/min" is levophed; "levo/flagyl" levofloxacin
        spans.append((m.start(), m.end(), names))
    known = {s for s, _, _ in spans}
    words: set[str] = set()
    for d in patient_drugs:
        head = re.split(r"[^a-z]+", (d or "").lower().strip())
        head = [w for w in head if w]
        if head and len(head[0]) >= 5:
            words.add(head[0])
    if words:
        for m in re.finditer(r"(?<![A-Za-z])([A-Za-z][A-Za-z]{4,})(?![A-Za-z])", raw):
            w = m.group(1).lower()
            if w in words and m.start() not in known and not any(a <= m.start() < b for a, b, _ in spans):
                spans.append((m.start(), m.end(), [lex.drugs.get(w, w)]))
    spans.sort()
    # "resistant to ciprofloxacin" names a susceptibility, not an order
    spans = [sp for sp in spans if not re.search(r"(?:resistant|sensitive|susceptible|resistance)\s+(?:to\s+)?"
                                                 r"(?:[a-z/\-]+\s*(?:,|and|/)\s*)*$", raw[max(0, sp[0] - 60):sp[0]], re.I)]
    spans = [sp for sp in spans if not is_susceptibility_name(raw, sp[0], sp[1])]  # "levo R", "R to cipro"
    deduped: list[tuple[int, int, list[str]]] = []
    for sp in spans:
        if deduped and re.fullmatch(r"\s*[(/]\s*", raw[deduped[-1][1]:sp[0]]) and (
                set(sp[2]) & set(deduped[-1][2]) or raw[deduped[-1][1]:sp[0]].strip() == "("):
            a, _, names = deduped[-1]
            deduped[-1] = (a, sp[1], names)  # "Piperacillin/Tazobactam (Zosyn)", "Midazolam (Versed)": one drug
            continue
        deduped.append(sp)
    spans = deduped
    # "vanc/zosyn started 10-23": slash-joined drugs share the clause's dose, action, ...
    for s, e, names in spans:
        if overlaps(taken, s, e):
            continue
        clause = line_clause(raw, e)
        nxt = next((a for a, _, _ in spans if a > s), None)
        own = clause[: (nxt - e) if nxt is not None and nxt - e > 0 and not re.fullmatch(r"\s*[/,&+]\s*(?:and\s*)?",
                                                                                       raw[e:nxt]) else len(clause)]
        attrs: dict[str, Any] = {"drugs": tuple(names)}  # the MedicationClaim's fields
        dose = _DOSE.search(own[:40])
        if dose:
            per = re.match(r"\s*(?:/\s*kg\s*)?/\s*(?:hr|h|hour|min)\b|\s*per\s+(?:hr|hour|min)", own[dose.end():dose.end() + 12], re.I)
            unit = dose.group("unit").lower()
            if per or "/" in unit:
                attrs.update({"rate": float(dose.group("dose")), "rate_unit": unit + (per.group(0).strip() if per else "")})
                attrs["infusion"] = True
            else:
                attrs.update({"dose": float(dose.group("dose")), "dose_unit": unit})
        route = _ROUTE.search(raw[s:e] + own[:50]) or _ROUTE.search(raw[max(0, s - 10):s])
        if route:
            r = route.group(1).upper()
            attrs["route"] = {"SQ": "SC", "SUBQ": "SC", "IVP": "IV", "DRIP": "IV", "GTT": "IV", "INFUSION": "IV"}.get(r, r)
            if r in ("GTT", "DRIP", "INFUSION"):
                attrs["infusion"] = True
        freq = _FREQ.search(own[:50])
        if freq:
            attrs["freq"] = freq.group(1).lower()
        near = raw[max(0, s - 25):s]
        lead = clause_before(near, len(near), "phrase")
        act = _MED_ACTION.search(own[:60]) or _MED_ACTION.search(lead)
        if act:
            attrs["action"] = act.group("a").lower()
        dur = parse_duration_days(own[:60])
        before_dur = re.search(r"(\d{1,2})[-\s]day\s+(?:course|trial)\s+of\s+(?:\w+\s+)?$", raw[max(0, s - 30):s], re.I)
        if dur:
            attrs["duration_days"] = dur
        elif before_dur:
            attrs["duration_days"] = float(before_dur.group(1))  # "a 7-day course of levofloxacin"
        day_n = re.match(r"[\s/a-z,]*?\bday\s*#?\s*(\d{1,2})\b", own[:30], re.I)
        if day_n:
            attrs["course_day"] = int(day_n.group(1))  # "vanc/zosyn day 5"
        negated_after = re.match(r"\W*(?:not\s+(?:yet\s+)?(?:started|given|initiated|restarted)|(?:was\s+)?held|on\s+hold)\b",
                                 own, re.I)
        attrs["negated"] = bool(negated_before(raw[:s]) or negated_after)
        if len(names) > 1 and not any(k in attrs for k in ("action", "dose", "rate", "duration_days", "course_day")):
            continue  # a bare class word ("Abx changed", "sedation") names no checkable order
        kind = "infusion" if attrs.get("infusion") else "medication"
        value = raw[e:e + len(own)].strip()[:60] or None
        out.append(Mention(line, s, e, raw[s:e].strip(), kind, "drug", value, MedicationClaim(**attrs)))
    return out
