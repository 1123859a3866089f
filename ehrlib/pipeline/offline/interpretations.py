"""Interpretation mentions: a criterion state named by a word ("afebrile", "hypotensive to 80s").

The words are the names and negations of the clinical criteria (the file the
Get_Clinical_Criterion tool reads, plus the lexicon's own states), so extraction and
verification agree on what "febrile" means. Negation is a value here, not a filter:
"afebrile", "no fevers" and "Hypotension: none" are verified as negated states. A problem
list heading ("# Hypokalemia:") names a diagnosis, not a state, and a state word right after
a measured item the criterion does not read ("HR spiked to 189") is that item's change.
"""
from __future__ import annotations

import re

from ehrlib.pipeline.claims import InterpretationClaim, Reading
from ehrlib.pipeline.offline.clauses import LIST_MARKER
from ehrlib.pipeline.offline.context import cue, negated_before
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention, emit
from ehrlib.pipeline.offline.timex import parse_duration_days
from ehrlib.pipeline.offline.values import parse_value

__all__ = ["interpretation_mentions", "criterion_concepts"]

_PROBLEM_HEADING = re.compile(r"^\s*(?:" + LIST_MARKER + r")?(?:[A-Za-z/]+\s*){0,3}$")

#: "Hypotension: none", "Fever - resolved": a problem heading negated by what follows it
_NEG_AFTER = cue("negation_after_title")


def interpretation_mentions(raw: str, line: int, lex: Lexicon, out: list[Mention],
                            taken: list[tuple[int, int]]) -> None:
    """Emit the interpretation mentions of one line (scanned first: nothing is taken yet)."""
    for m in lex.term_re.finditer(raw):
        term = lex.term_index.get(re.sub(r"\s+", " ", m.group(0).lower()))
        if term is None:
            continue
        if (_PROBLEM_HEADING.match(raw[:m.start()]) and not _NEG_AFTER.match(raw[m.end():])
                and re.match(r"\s*(?:[:/]|-\s|$|,\s*(?:s/p|resolved|improved))", raw[m.end():])):
            continue  # "# Hypokalemia:", "3. Anemia -": a problem list heading names a diagnosis
        if _other_item_before(raw, m.start(), term.criterion, lex):
            continue  # "HR spiked to 189": the word is the heart rate's verb, not a fever
        negated = term.negated or negated_before(raw[:m.start()]) or bool(_NEG_AFTER.match(raw[m.end():]))
        tail = raw[m.end():m.end() + 40]
        val = parse_value(tail) if re.match(r"\s*(?:to|at|with|in|x|\()", tail,
                                            re.I) or term.text.endswith(" to") else None
        reading, unit = Reading(), None
        if val and not re.match(r"\s*x\s*\d", tail):
            end = m.end() + int(val.pop("_end"))
            # the state's own value or extreme ("febrile to 101.5", "tachycardic to the 120s")
            reading = Reading(value=val.get("value"), min=val.get("min"), max=val.get("max"), max_lo=val.get("max_lo"))
            unit = val.get("unit")
        else:
            end = m.end()
        dur = parse_duration_days(raw[m.end():m.end() + 20]) if re.match(r"\s*(?:x|for)\s*\d", raw[m.end():m.end()
                                                                                                   + 8], re.I) else None
        claim = InterpretationClaim(criterion=term.criterion, negated=bool(negated), state=term.text, reading=reading,
                                    unit=unit, duration_days=dur or None)
        emit(out, taken, Mention(line, m.start(), end, raw[m.start():end].strip(), "interpretation", term.criterion,
                                 raw[m.start():end].strip(), claim))


def _other_item_before(raw: str, start: int, criterion: str, lex: Lexicon) -> bool:
    """Whether a measured item the criterion does not read is named right before its word
    ("HR spiked", "BP spiking"): the word then tells that item's change, not the criterion.
    """
    lead = raw[max(0, start - 25):start]
    named = [h for pattern in (lex.concept_re, lex.cased_re) for h in pattern.finditer(lead)
             if not lead[h.end():].strip()]
    concepts = [c for h in named for c in lex.concepts_for(h.group(0))  # a bedside item ("Pt" is no PT here)
                if c.kind == "measurement" and "chartevents" in c.tables]
    if not concepts:
        return False
    read = criterion_concepts(lex, criterion)
    return bool(read) and all(c.cid not in read for c in concepts)


def criterion_concepts(lex: Lexicon, criterion: str) -> frozenset[str]:
    """The bedside concepts a criterion reads: the lexicon state's own concept, or those whose
    catalogue labels the criterion's chart tests name (fever: temperature; tachycardia: heart rate).
    """
    extra = lex.extra_criteria.get(criterion)
    if extra is not None:
        return frozenset({str(extra["concept"])})
    tests = (lex.criteria.get(criterion) or {}).get("tests") or ()
    labels = [str(t.get("label", "")) for t in tests if t.get("table") == "chartevents"]
    return frozenset(c.cid for c in lex.concepts.values() if c.kind == "measurement" and "chartevents" in c.tables
                     and any(re.search(lab, name, re.I) for name in c.search for lab in labels))
