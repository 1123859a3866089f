"""Four digits written where a value could stand that are a 24-hour clock time instead.

Notes time a draw by writing its clock right after the panel's or analyte's name ("ABG 0631
(on vent): 7.42/34/96", "CBC 0608: WBC 8.2", "INR back at 0348 10.2"). Read as a value,
such a time becomes a nonsense level (631, or 3.48 after a scale guess). The value and
prose-result parsers skip a token this module calls a clock.
"""
from __future__ import annotations

import re

__all__ = ["reads_as_clock"]

_HHMM = re.compile(r"(?:[01]\d|2[0-3])[0-5]\d")
_TIME_WORD_BEFORE = re.compile(r"(?:\b(?:at|by|since|until|around|from)|@)\s*$", re.I)
_VALUE_AFTER = re.compile(r"\s*(?:\([^()\d]{0,20}\))?\s*(?::|,?\s*-?(?:\d|\.\d))")


def reads_as_clock(text: str, start: int, end: int) -> bool:
    """Whether the four digits ``text[start:end]`` are a 24-hour clock time rather than a value.

    A value is never written with a leading zero ("ABG 0631", "back at 0348"); a time
    word before it ("at 1400") or a heading colon or another number after it ("CBC 1608:
    WBC 8.2", "K at 1400 3.2") makes any valid HHMM the time the next value was drawn.
    """
    token = text[start:end]
    if len(token) != 4 or not _HHMM.fullmatch(token):
        return False
    return token[0] == "0" or bool(_VALUE_AFTER.match(text, end)) and (
        bool(_TIME_WORD_BEFORE.search(text, 0, start)) or bool(re.match(r"\s*(?:\([^()]{0,20}\))?\s*:", text[end:])))
