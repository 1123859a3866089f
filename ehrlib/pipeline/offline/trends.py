"""Trend phrases: the words and verbs that state a direction ("downtrending", "rose to", "stable").

A trend verb before a value ("Cr rose to 2.3") gives the value a direction; a trend word
near a concept without a value ("lactate downtrending") is a trend statement of its own.
"peaked" and "nadired" state a maximum or minimum, not a direction (:mod:`.values`).
"""
from __future__ import annotations

import re

from ehrlib.pipeline.offline.lexicon import Concept

__all__ = ["TREND_VERB", "trend_word", "verb_direction"]

TREND_VERB = (r"(?:(?:briefly\s+|then\s+|subsequently\s+|again\s+)?(?:climbed|rose|risen|increased|bumped|went\s+up|"
              r"trended\s+up|"
              r"up-?trended|decreased|fell|dropped|declined|improved|worsened|came\s+down|trended\s+down|down-?trended|"
              r"weaned|reduced|lowered|titrated\s+(?:up|down)|turned\s+(?:up|down)|spiked|"
              r"normalized|cleared|peaked|nadired|drifted(?:\s+(?:down|up))?|was\s+up|was\s+down|(?:came\s+|went\s+)?back(?:\s+down|\s+up)?)(?:\s+again)?\s+)")

_TREND_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.I), d) for p, d in (
    (r"\b(?:down-?trending|trending\s+down|trended\s+down|decreas(?:ing|ed)|declin(?:ing|ed)|falling|fell|dropp(?:ing|ed)|"
     r"drop|down|downward|down-?trended|came\s+down|coming\s+down|lower(?:ing)?|cleared|normalized|normali[sz]ing|"
     r"resolv(?:ed|ing)|(?:to|continues?\s+to|continued\s+to)\s+(?:fall|drop|decline|decrease|drift\s+down|trend\s+down)|"
     r"drift(?:ing|ed)\s+down)\b", "down"),
    (r"\b(?:up-?trending|trending\s+up|trended\s+up|increas(?:ing|ed)|ris(?:ing|en)|rose|elevat(?:ing)|climb(?:ing|ed)|"
     r"up|upward|bump(?:ed)?|went\s+up|uptrended|peaked|(?:to|continues?\s+to|continued\s+to)\s+(?:climb|rise|increase|"
     r"drift\s+up|trend\s+up)|drift(?:ing|ed)\s+up)\b", "up"),
    (r"\b(?:stable|unchanged|flat|steady|stabilized|at\s+baseline|plateau(?:ed)?)\b", "stable"),
    (r"\b(?:improv(?:ing|ed|ement)|better)\b", "improving"),
    (r"\b(?:worsen(?:ing|ed)|wors(?:e|t))\b", "worsening"),
))


_DOWN_VERB = re.compile(r"decreas|fell|drop|declin|improv|came\s+down|drifted\s+down|trended\s+down|down-?trend|"
                        r"wean|reduc|lower|titrated\s+down|turned\s+down|"
                        r"normaliz|nadir|"
                        r"was\s+down", re.I)


def verb_direction(verb: str, concept: Concept | None) -> str | None:
    """The direction a trend verb states ("fell" down, "improved" or "cleared" improving; "normalized" none)."""
    if not verb:
        return None
    if re.search(r"improv|worsen|clear", verb, re.I):  # a marker "cleared" as it improved
        return "improving" if re.search(r"improv|clear", verb, re.I) else "worsening"
    if re.search(r"normaliz|\bback\b|\bdrifted\b(?!\s+(?:up|down))", verb, re.I):
        return None  # "normalized", "back to", a bare "drifted to": no direction stated
    return "down" if _DOWN_VERB.search(verb) else "up"


def trend_word(text: str) -> tuple[str, str] | None:
    """(direction, word) of the first trend word in ``text``."""
    best: tuple[int, str, str] | None = None
    for pattern, direction in _TREND_WORDS:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), direction, m.group(0))
    return (best[1], best[2]) if best else None
