"""Which drug an abbreviation with two expansions means, read from its sentence.

"levo" is levofloxacin on an antibiotic line and norepinephrine on a pressor line. The
default expansion is the lexicon's; the alternative (``drug_senses`` in
``offline_concept_flags.yaml``) is taken when the abbreviation's sentence supports it and
nothing there supports the default: a rate or drip right after the name, another drug of the
alternative's family, or one of its words ("titrated", "MAP", "mcg/kg/min"). A member of the
default's family or one of its words in the same sentence ("levo/flagyl", "levo for CAP")
keeps the default, so a mixed sentence never changes a reading.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["DrugSense", "drug_senses", "sense_of", "RULE"]

#: what makes an abbreviation a drip ("levo 0.05 -> 0.14 mcg/kg/min" is levophed)
_RATE_AFTER = re.compile(r"[\s@:-]*(?:gtt|drip|infusion|at\s+)?[\s@]*(?:\d*\.?\d*\s*(?:->|to)\s*)?"
                         r"\d*\.?\d*\s*(?:mcg|gtt|drip)", re.I)
#: a sentence ends at a full stop before a space or a capital, never inside a number ("0.05")
_SENTENCE_END = re.compile(r"(?<!\d)\.(?=\s|$)|\.(?=\s+[A-Z])")


@dataclass(frozen=True)
class DrugSense:
    """The alternative expansion of one abbreviation and what supports each reading."""

    drug: str
    companions: frozenset[str]
    against: frozenset[str]
    words: re.Pattern[str]
    against_words: re.Pattern[str]


def _words(forms: list[str] | None) -> re.Pattern[str]:
    """Whole-word regular expressions joined into one pattern."""
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(forms or ['(?!)'])})(?![A-Za-z])", re.I)


def drug_senses(flags: Mapping[str, Any]) -> dict[str, DrugSense]:
    """The ``drug_senses`` table of the concept flags, compiled."""
    out: dict[str, DrugSense] = {}
    for word, spec in (flags.get("drug_senses") or {}).items():
        out[str(word).lower()] = DrugSense(
            drug=str(spec["drug"]).lower(),
            companions=frozenset(str(d).lower() for d in spec.get("companions") or ()),
            against=frozenset(str(d).lower() for d in spec.get("against") or ()),
            words=_words(spec.get("words")), against_words=_words(spec.get("against_words")))
    return out


def _sentence(raw: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence holding raw[start:end]."""
    a = 0
    for m in _SENTENCE_END.finditer(raw):
        if m.end() <= start:
            a = m.end()
        elif m.start() >= end:
            return a, m.start()
    return a, len(raw)


def sense_of(raw: str, start: int, end: int, default: str, sense: DrugSense, lex: Lexicon) -> str:
    """The drug the abbreviation at raw[start:end] means: the default unless its sentence
    supports only the alternative.
    """
    if _RATE_AFTER.match(raw[end:end + 28]):
        return sense.drug
    a, b = _sentence(raw, start, end)
    others: set[str] = set()
    for m in lex.drug_re.finditer(raw):
        if a <= m.start() and m.end() <= b and not m.start() <= start < m.end():
            word = re.sub(r"\s+", " ", m.group(0).lower())
            others.update(lex.drug_classes.get(word, ()) or [lex.drugs.get(word, word)])
    against = {d for x in sense.against for d in lex.drug_classes.get(x, (x,))}
    text = raw[a:start] + " " + raw[end:b]
    if others & (against - {default}) or sense.against_words.search(text):
        return default
    if others & {d for x in sense.companions for d in lex.drug_classes.get(x, (x,))} or sense.words.search(text):
        return sense.drug
    return default


RULE = Rule("extract.drug_sense", "An abbreviation with two drug expansions takes the one its sentence supports "
            "(a rate, a drip, a companion drug of the same family or a word of its use) and keeps the default "
            "when the sentence supports the default or nothing.", sense_of)
