"""Finding rules: categorical exam and nursing states against the charted values.

A stated state is confirmed by a charted value of the same state and contradicted when the
window's values use the vocabulary (``finding_states.yaml``) but never the stated state
(for multi-valued concepts: only when an excluding state is charted). Edema is judged on
presence and pitting grade; findings aligned by the data-driven fallback
(:mod:`ehrlib.pipeline.offline.findings_data`) on their value words.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.finding_attributes import attributes_of, is_number_attribute, narrow_to_side, side_of
from ehrlib.pipeline.offline.finding_sites import named_sites
from ehrlib.pipeline.offline.findings_data import normalise_value
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.denied_states import denied_state_rule
from ehrlib.pipeline.offline.verification.finding_time import at_stated_time
from ehrlib.pipeline.offline.verification.named_diagnosis import diagnosis_only
from ehrlib.pipeline.offline.verification.numbered import at_numbered_site
from ehrlib.pipeline.offline.verification.periods import whole_period_rule
from ehrlib.pipeline.offline.verification.prevailing import has_own_time, prevailing_state_rule
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.site_judge import judge_site_finding
from ehrlib.pipeline.records import Entity, Verdict

__all__ = ["RULES", "CHAIN", "ATTRIBUTE_VALUE", "DATA_VALUE", "PREVAILING_STATE", "SITE_VALUE", "judge_data_finding",
           "judge_site_finding", "pitting_grade"]

Rows = list[Mapping[str, Any]]


def _vocab() -> Mapping[str, Any]:
    return load_data("finding_states.yaml")


@functools.cache
def _state_patterns(concept: str, column: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(state, compiled pattern) of ``concept``'s vocabulary states, compiled once per process
    (every charted row of every finding is read against them).
    """
    return tuple((x["state"], re.compile(x[column], re.I)) for x in _vocab()["states"].get(concept, ()))


def _states(concept: str, text: str, column: str) -> set[str]:
    """The vocabulary states of ``concept`` that ``text`` names (column: note | chart)."""
    return {state for state, pattern in _state_patterns(concept, column) if pattern.search(text)}


def pitting_grade(value: str) -> str | None:
    """Pitting-edema grade of a charted value: "2+" -> 2; depth "4 mm" -> 2 (2 mm per
    grade, the usual 1+ to 4+ pitting scale); "Trace" -> 0.
    """
    m = re.search(r"([1-4])\s*\+|\+\s*([1-4])", value)
    if m:
        return m.group(1) or m.group(2)
    m = re.search(r"(\d+)\s*mm", value, re.I)
    if m:
        return str(min(4, max(1, round(int(m.group(1)) / 2))))
    return "0" if re.search(r"trace", value, re.I) else None


def _concept(c: Case) -> str:
    return str(c.entity.claim.concept)


def _stated(c: Case) -> set[str]:
    concept, e = _concept(c), c.entity
    absence = (_vocab().get("absence_states") or {}).get(concept)
    if absence and c.entity.claim.negated:
        return {absence}  # "no edema", "no BS", "no eye opening": the absence is the claim
    note = f"{e.value or ''}" if concept not in _vocab()["self_named"] else f"{e.text} {e.value or ''}"
    return _states(concept, note.lower(), "note")


def _charted(c: Case) -> tuple[set[str], Rows]:
    """(states charted in the window, rows charting a stated state)."""
    stated, charted, hits = _stated(c), set(), []
    for r in c.item_rows()[0]:
        got = _states(_concept(c), str(r.get("value") or "").lower(), "chart")
        charted |= got
        if got & stated:
            hits.append(r)
    return charted, hits


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _is_attribute(concept: str) -> bool:
    return any(a.concept == concept for finding in _vocab().get("attributes", {}) for a in attributes_of(finding))


def _attribute_value(c: Case) -> Verdict | None:
    """"R pupil 4mm", "L sluggish": the stated side's items, the charted value at the time;
    a size as a number (a range "3-4mm" by either end), a response as a state.
    """
    e, concept = c.entity, _concept(c)
    if not _is_attribute(concept):
        return None
    words = c.claim_as(FindingClaim).words or e.value or ""
    first, _, rest = words.partition(" ")
    side = side_of(first) if rest else None
    value = rest if side else words
    keep = narrow_to_side(side, [it.label or "" for it in e.items])
    rows = [r for i in keep if i < len(e.item_keys) for r in c.session.rows(e.item_keys[i], e.window)[0]
            if str(r.get("value") or "").strip()]
    if not rows:
        return None
    where = f"{side} " if side in ("right", "left") else ""
    if is_number_attribute(concept):
        stated = [float(x) for x in _NUMBER.findall(value)]
        numbered = [(r, float(n[0])) for r in rows if (n := _NUMBER.findall(str(r.get("value"))))]
        if not stated or not numbered:
            return None
        hits = [r for r, n in numbered if any(abs(n - x) < 0.26 for x in stated)]
        shown = ", ".join(sorted({str(r.get("value")) for r, _ in numbered})[:5])
        if hits:
            return verdict(c, True, f"{e.text}: {where}{value} charted in the window", hits[:4])
        return verdict(c, False, f"{e.text}: {where}{value} not charted (charted {shown})",
                       [r for r, _ in numbered][:4])
    stated_states = _states(concept, value.lower(), "note")
    charted = {st: r for r in rows for st in _states(concept, str(r.get("value")).lower(), "chart")}
    if not stated_states or not charted:
        return None
    if stated_states & set(charted):
        return verdict(c, True, f"{e.text}: {where}{', '.join(sorted(stated_states))} charted in the window",
                       [charted[s] for s in stated_states if s in charted])
    return verdict(c, False, f"{e.text}: note says {where}{', '.join(sorted(stated_states))}; table charts "
                   f"{', '.join(sorted(charted))}", list(charted.values())[:4])


def _no_known_state(c: Case) -> Verdict | None:
    if _stated(c):
        return None
    return verdict(c, True, f"{c.entity.text} charted in the window", c.item_rows()[0])


def _pitting(c: Case) -> Verdict | None:
    grade, inside = c.claim_as(FindingClaim).grade, c.item_rows()[0]
    if not grade:
        return None
    g = re.sub(r"\D", "", str(grade)) or ("0" if "trace" in str(grade).lower() else "")
    graded = {x for r in inside if (x := pitting_grade(str(r.get("value") or "")))}
    if graded and g and g not in graded:
        return verdict(c, False, f"{c.entity.text}: grade {grade} not recorded (charted {', '.join(sorted(graded))}+)",
                       inside[:4])
    return None


def _edema_presence(c: Case) -> Verdict | None:
    """An amount ("4 mm", "Trace") or a location other than "None" means edema was present."""
    charted, _ = _charted(c)
    if _concept(c) != "edema" or not charted:
        return None
    stated, inside = _stated(c), c.item_rows()[0]
    ok = "present" not in charted if "none" in stated else "present" in charted
    if not ok:
        return verdict(c, False, f"{c.entity.text}: note says {'no edema' if 'none' in stated else 'edema'}, "
                       f"table charts {', '.join(sorted(charted))}", inside[:4])
    return verdict(c, True, f"{c.entity.text} as charted", inside[:4])


def _stated_claim(c: Case) -> set[str]:
    """The stated states that are the claim ("hypoactive BS": the qualifier, not presence)."""
    stated = _stated(c)
    if _concept(c) == "bowel_sounds" and len(stated) > 1:
        stated.discard("present")
    return stated


def _charted_state(c: Case) -> Verdict | None:
    e, concept, inside = c.entity, _concept(c), c.item_rows()[0]
    stated = _stated_claim(c)
    charted, hits = _charted(c)
    missing = stated - charted
    if not charted:
        return verdict(c, True, f"{e.text}: charted values do not use the stated terms; not contradicted", inside[:3])
    opposites = _vocab()["opposites"]
    against = {o for st in missing for o in opposites.get(concept, {}).get(st, ())}
    if missing and concept in opposites and not (charted & against):
        return verdict(c, True, f"{e.text}: {', '.join(sorted(charted))} charted; not contradicted", inside[:3])
    if missing:  # a rhythm named only as a diagnosis ("# AF") is unverified
        return diagnosis_only(c, concept, missing, charted) or verdict(c, False, f"{e.text}: note says "
                       f"{', '.join(sorted(missing))}; table charts {', '.join(sorted(charted))}", inside[:4])
    return verdict(c, True, f"{e.text}: {', '.join(sorted(stated))} charted in the window", hits)


def _opposed(stated: frozenset[str], charted: frozenset[str]) -> bool:
    return any((stated & set(x) and charted & set(y)) or (stated & set(y) and charted & set(x))
               for x, y in _vocab()["opposed_values"])


def judge_data_finding(e: Entity, rows: Sequence[Mapping[str, Any]]) -> tuple[bool | None, str, Rows]:
    """(consistent?, reason, evidence) of a data-driven finding from its item's rows in the
    window; ``None`` means not judged: no charted value of the window speaks to the words.
    """
    stated = normalise_value(e.value or "")
    valued = [r for r in rows if re.search(r"[A-Za-z]", str(r.get("value") or ""))]
    hits = [r for r in valued if stated and stated <= normalise_value(str(r.get("value")))]
    if hits:
        return True, f"{e.text}: {e.value} charted in the window", hits[:4]
    against = [r for r in valued if _opposed(stated, normalise_value(str(r.get("value"))))]
    if against and len(against) == len(valued):
        shown = ", ".join(sorted({str(r.get("value")) for r in against})[:4])
        return False, f"{e.text}: note says {e.value}; table charts {shown}", against[:4]
    return None, f"{e.text}: charted values neither match nor contradict", valued[:3]


def _data_value(c: Case) -> Verdict | None:
    ok, reason, rows = judge_data_finding(c.entity, c.item_rows()[0])
    return verdict(c, ok is not False, reason if ok is not None else f"{reason}; not contradicted", rows)


def _site_value(c: Case) -> Verdict | None:
    e = c.entity
    rows_of, timed = at_stated_time(c, at_numbered_site(c, [(it.label or "", c.session.rows(k, e.window)[0]) for
                                                            it, k in zip(e.items, e.item_keys, strict=False) if k]))
    ok, reason, rows = judge_site_finding(e, rows_of, timed=timed or has_own_time(c.line(), e.span, e.time_text))
    rows = rows or [r for _, rs in rows_of for r in rs[:2]]
    return verdict(c, ok is not False, reason if ok is not None else f"{reason}; not contradicted", rows)


def _site_state(c: Case) -> Verdict | None:
    """A vocabulary finding charted per site ("crackles at both bases", "LS clear bilat"): the
    items its positions name, each judged as a site statement; no verdict falls through.
    """
    e = c.entity
    if c.claim_as(FindingClaim).negated:
        return None
    said = e.value or ""
    said = said if said.lower().startswith(e.text.lower()) else f"{e.text} {said}"
    words = re.split(r"[,;]", said)[0]  # its own phrase: "coarse BS bilat, dim at bases" states two
    keep = named_sites([it.label or "" for it in e.items], words)
    if not keep:
        return None
    rows_of, _ = at_stated_time(c, [(e.items[i].label or "", c.session.rows(e.item_keys[i], e.window)[0])
                                     for i in keep if i < len(e.item_keys) and e.item_keys[i]])
    ok, reason, rows = judge_site_finding(e, rows_of, words)
    return None if ok is None else verdict(c, ok, reason, rows)


_F = ("finding",)
ATTRIBUTE_VALUE = Rule("findings.attribute_value", "An attribute of a finding (a pupil's size or response) is "
                       "checked against its own items on the stated side: a number against the charted numbers, a "
                       "state against the charted states at the stated time.", _attribute_value, _F)
NO_KNOWN_STATE = Rule("findings.no_known_state", "A finding whose words name no state of the vocabulary claims only "
                      "that the item was charted, which its record in the window confirms.", _no_known_state, _F)
PITTING_GRADE = Rule("findings.pitting_grade", "A stated pitting-edema grade must be among the grades charted "
                     "(2 mm of pitting depth per grade).", _pitting, _F)
EDEMA_PRESENCE = Rule("findings.edema_presence", "Edema is present when any amount or location is charted, so "
                      "\"no edema\" and \"edema\" are judged on presence alone.", _edema_presence, _F)
CHARTED_STATE = Rule("findings.charted_state", "A stated exam state must be charted in the window; it is "
                     "contradicted only by a charted state that excludes it, and not judged when the charted "
                     "values use other words.", _charted_state, _F)
DENIED_STATE = denied_state_rule(_vocab, _states, _stated)
WHOLE_PERIOD = whole_period_rule(_vocab, _states, _stated)
DATA_VALUE = Rule("findings.data_value", "A finding aligned to a charted item by its words is confirmed by a charted "
                  "value with those words and contradicted only when every charted value is its opposite.",
                  _data_value, _F)
SITE_VALUE = Rule("findings.site_value", "A statement about a charted body site is checked on every item its sides "
                  "name: a charted state agreeing confirms it, else a charted state excluding it contradicts it; an "
                  "untimed normal state is judged on its day's prevailing state.", _site_value, _F)
SITE_STATE = Rule("findings.site_state", "A vocabulary finding charted per body site (lung sounds per lobe) is a claim "
                  "about each site its positions name, judged as a site statement; no verdict leaves it to the others.",
                  _site_state, _F)

PREVAILING_STATE = prevailing_state_rule(_vocab, _states, _stated_claim)

CHAIN = (ATTRIBUTE_VALUE, NO_KNOWN_STATE, SITE_STATE, PITTING_GRADE, EDEMA_PRESENCE, DENIED_STATE, WHOLE_PERIOD,
         PREVAILING_STATE, CHARTED_STATE)
RULES = (*CHAIN, DATA_VALUE, SITE_VALUE)
