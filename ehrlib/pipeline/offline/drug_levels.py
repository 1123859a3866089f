"""Drug levels: a drug's measured blood concentration is a lab value, not a dose.

Notes write a level three ways: the drug name joined to a number the way a results block
joins any analyte ("Vanco-33.9*"), the drug name with a bare number no dose unit, route or
frequency follows ("dilantin 6.2"), or a level word after the drug's order in the same
sentence ("vancomycin 1 g IV q12h (trough 14.2)", "phenytoin 100 mg TID, level 11.6"). Each
is a measurement of the drug's level concept (its lab item), read with the ordinary value
parser, so its time, trend and series follow as for any analyte. Which drugs have a level
and which bare numbers can be a dose are data (``drug_levels.yaml``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.measurements import measurement_mention
from ehrlib.pipeline.offline.mention import Mention, overlaps
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["drug_level_mentions", "RULE"]

#: a drug name's own number: a results block's joining hyphen or a space, then the number
#: a level word's number: "trough 14.2", "level of 9", "random level: 12"
_WORD_VALUE = re.compile(r"\s*(?:of\s+|was\s+|is\s+|:\s*|=\s*)?\d")
_BARE = re.compile(r"(?:-|\s*:?\s*)(?P<v>" + NUMBER + r")\*?(?![\d/]|[.,]\d)")


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    return load_data("drug_levels.yaml")


@functools.lru_cache(maxsize=1)
def _words_re() -> re.Pattern[str]:
    words = sorted(_data()["words"], key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z])(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
                      + r")(?![A-Za-z])", re.I)


def _drug_hits(raw: str, lex: Lexicon) -> list[tuple[int, int, str]]:
    """(start, end, generic) of every single-drug name in the line."""
    hits = []
    for m in lex.drug_re.finditer(raw):
        generic = lex.drugs.get(re.sub(r"\s+", " ", m.group(0).lower()))
        if generic:
            hits.append((m.start(), m.end(), generic))
    return hits


def _level(raw: str, line: int, m: re.Match[str], cid: str, lex: Lexicon, out: list[Mention],
           taken: list[tuple[int, int]]) -> bool:
    concept = lex.concepts.get(cid)
    if concept is None:
        return False
    return measurement_mention(raw, line, m, concept, raw[:m.start()].rstrip(), None, out, taken)


def drug_level_mentions(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    """The drug-level measurements of one line, outside the spans already ``taken``."""
    data = _data()
    levels: Mapping[str, str] = data["levels"]
    dose_after = re.compile(data["dose_after"], re.I)
    out: list[Mention] = []
    drugs = _drug_hits(raw, lex)
    for s, e, generic in drugs:
        cid = levels.get(generic)
        if cid is None or generic not in data["bare_min"] or overlaps(taken, s, e):
            continue
        b = _BARE.match(raw, e)
        if b is None or dose_after.match(raw, b.end()) or float(b.group("v").replace(",", "")) < data["bare_min"][
                generic]:
            continue
        name = re.compile(re.escape(raw[s:e])).match(raw, s)
        if name is not None:
            _level(raw, line, name, cid, lex, out, taken)
    for w in _words_re().finditer(raw):
        if overlaps(taken, w.start(), w.end()) or not _WORD_VALUE.match(raw, w.end()):
            continue
        # the drug named last before the level word in its sentence, with no sentence end between
        before = [d for d in drugs if d[1] <= w.start() and not re.search(r"[.;]\s|\.$", raw[d[1]:w.start()])]
        if not before or before[-1][2] not in levels:
            continue
        _level(raw, line, w, levels[before[-1][2]], lex, out, taken)
    return out


RULE = Rule("extract.drug_level", "A drug's name joined to a number without a dose unit, route or frequency, or a "
            "level word after the drug's order in its sentence, states the drug's blood level: a lab value of the "
            "drug's level item, not an administration.", drug_level_mentions, ("measurement",))
