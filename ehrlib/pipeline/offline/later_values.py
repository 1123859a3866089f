"""Further values of an analyte later in its sentence: ``Hct 30.9 at 0230, 32.4 this AM``.

A number after an analyte's value, with no other analyte between and not a time, dose or
count, is another value of that analyte with its own time; an extreme word before it
("peaking at 1.8") makes it the course's maximum or minimum. Run by
:func:`ehrlib.pipeline.offline.mentions.find_mentions` once every other scanner has taken
its spans.
"""
from __future__ import annotations

import re

from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.measurements import plausible
from ehrlib.pipeline.offline.mention import Mention, emit, overlaps
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.values import numeric_claim, parse_value

__all__ = ["later_values", "RULE"]


_SENTENCE = re.compile(r"\.(?!\d)|[;|\n]")  # a decimal point is followed by its digits
_MASKED = re.compile(r"`{3}[^`]*`{3}")
_NOT_A_VALUE_BEFORE = re.compile(r"(?:\b(?:at|by|since|until|from|around|@|x|q|HD|POD|day|days|hours?|hrs?|goal|"
                                 r"target|keep|if)|/|#|(?<![-=])[<>≤≥]=?)\s*$", re.I)
_NOT_A_VALUE_AFTER = re.compile(r"\s*(?:/|:\d|x\b|%|°|[FC]\b|mg|mcg|g\b|gm|grams?|units?|u\b|meq|mmol|ml|cc|l\b|"
                                r"liters?|"
                                r"hours?|hrs?|h\b|days?|d\b|min|weeks?|years?|yo\b|y/o|times|pm\b|am\b|-\d)"
                                # a count of what it names ("2 bags of platelets", "1 amp"): no level
                                r"|\s*(?:bags?|packs?|doses?|tabs?|amps?|vials?|bottles?|puffs?|boluse?s?|sets?)\b"
                                # a letter labelling the number ("diff 86 N 12 L"): a share of that cell type
                                r"|\s(?-i:[A-Z])\b(?![/.'])", re.I)
_LATER_SEP = re.compile(r"\s*(?:,|;|\)|->|-->|→|\bthen\b|\band\b|\bbut\b)")
#: an extreme word before a later value ("Cr 1.7 on admission, peaking at 1.8", "-> peak 270"):
#: the value is the course's maximum or minimum, read by the value parser with its word
_EXTREME_CUE = re.compile(r"\b(?:peak(?:ed|ing)?|nadir(?:ed|ing)?|max(?:imum)?|min(?:imum)?|highest|lowest)"
                          r"(?:\s+(?:value|level))?(?:\s+(?:of|at|was|is|=|:))?\s*$", re.I)
#: an arrow right before a number (an extreme word between): the next value of a series,
#: never a clock time ("AST 2651 -> peak 3905 -> 2159")
_AFTER_ARROW = re.compile(r"(?:->|-->|→|=>)\s*(?:(?:peak|nadir|max|min)\w*\s*(?:of|at)?\s*)?$", re.I)


def later_values(raw: str, line: int, out: list[Mention], taken: list[tuple[int, int]], stops: list[int],
                 concepts: dict[str, Concept]) -> list[Mention]:
    """"Hct 30.9 at 0230, 32.4 this AM", "Cr 1.4 (1.3 yesterday)", "K 5.5 on admission, ... 3.6 on
    [**8-9**]": a number after an analyte's value in the same sentence, with no other analyte
    between, is a further value of that analyte, each a claim of its own.

    ``stops`` are where analyte names start (the next one ends the search); a number that
    is a time, a date, a dose or a count ("at 0230", "15 gm", "x2"), or that another scanner
    took, is skipped. Each value's mention runs to the end of its own phrase, so the time
    written there ("this AM", "at discharge") is that value's time.
    """
    masked = [(a.start(), a.end()) for a in _MASKED.finditer(raw)]
    found: list[Mention] = []
    for anchor in sorted((x for x in out if x.concept in concepts and isinstance(x.claim, NumericClaim)
                          and x.claim.reading.value is not None), key=lambda x: x.start):
        concept = concepts[anchor.concept]
        # up to the analyte's next mention, which carries the chain on
        stop = min([x.start for x in out if x.concept == anchor.concept and x.start >= anchor.end]
                   + [_stop(raw, anchor.end, stops)])
        for n in re.finditer(r"(?<![\w.,`\-])(?:" + NUMBER + r")(?![\w`])", raw[anchor.end:stop]):
            a, b = anchor.end + n.start(), anchor.end + n.end()
            cue = _EXTREME_CUE.search(raw, max(anchor.end, a - 30), a)
            start = cue.start() if cue and not overlaps(taken, cue.start(), a) else a
            unit_after = concept.unit == "%" and re.match(r"\s*%", raw[b:b + 3]) is not None  # "weaned to 60%"
            if overlaps(taken, a, b) or overlaps(masked, a, b) or (
                    _NOT_A_VALUE_AFTER.match(raw[b:b + 8]) and not unit_after) or (
                    start == a and _NOT_A_VALUE_BEFORE.search(raw[max(0, a - 8):a])):
                continue
            if _named_value(raw[anchor.end:a]):
                break  # "WBC 9, SG 1.019, protein 30": a list item's own name owns its number and the rest
            if _value_before_name(raw, b, stops):
                continue  # "WBC 10.3 with 12 bands": a number written before a name is that name's value
            if re.fullmatch(r"(?:[01]\d|2[0-3])[0-5]\d", n.group(0)) and not _AFTER_ARROW.search(raw, anchor.end, a):
                continue  # "gtt started 1149": four bare digits that read as a clock are a time
            if raw[:a].rstrip().endswith("(") and raw[b:].lstrip().startswith(")"):
                continue  # "Hct 30.0 (26.3)": a bare number in brackets may be a prior, a reference or a unit
            v = float(n.group(0).replace(",", ""))
            parsed = parse_value(raw[start:], concept) if start < a else None
            parsed = {k: x for k, x in parsed.items() if not k.startswith("_")} if parsed else {"value": v}
            if not plausible({"value": v}, concept):
                continue
            sep = _LATER_SEP.search(raw, b, stop)
            later = [x.start for x in out if x.start >= b]
            e = min([sep.start() if sep else stop, b + 40, *later])
            e = len(raw[:e].rstrip())
            kind = "range" if any(k in parsed for k in ("min", "max")) else "measurement"
            mention = Mention(line, start, e, anchor.text, kind, anchor.concept, raw[start:e].strip("` "),
                              numeric_claim(parsed))
            emit(found, taken, mention)
    return found


_LIST_ITEM = re.compile(r"[,;]\s*(?P<name>[A-Za-z][A-Za-z/]*(?:\s+[A-Za-z][A-Za-z/]*)?)\s*[:=]?\s*$")
#: words that carry an analyte's own course on ("..., down from 1.6", "..., repeat 1.8", "..., 3.6 on admission")
_COURSE_WORDS = frozenset(
    "then now to from at was is were of and on in by repeat recheck rechecked later again down up peak peaked "
    "peaking nadir max min high low baseline initially initial last this prior previously previous yesterday "
    "today tonight am pm morning evening night overnight admission admit discharge rose fell trended trending "
    "improved improving increased increasing decreased decreasing worsened worsening dropped rising falling "
    "stable around about approx approximately goal target with after before since until "
    "range ranged ranging".split())


#: an abbreviation written right before a number ("AST 37 AlkP 385"): a name of its own, known or not
_ABBREVIATION = re.compile(r"(?<![\w/])(?P<name>[A-Za-z]*[A-Z][A-Za-z0-9]*)\s*[:=]?\s*$")


#: a noun introducing the number as its own quantity ("with an A-a gradient of 550", "an output of 300"); the
#: analyte's own words for a further reading ("a level of", "a repeat of") carry its course on instead
_OWN_NOUN = re.compile(r"(?<![\w-])(?P<name>[A-Za-z][A-Za-z-]{3,})\s+(?:of|was|is|were|=)\s*$")
_READING_WORDS = frozenset("level levels value values reading readings result results count draw check".split())


def _named_value(between: str) -> bool:
    """Whether the text between an analyte's value and a later number ends in a list item
    naming the number as its own ("..., SG 1.019"; not "..., down from 1.6"), in an
    abbreviation written before it ("ALT 39 AST 37 AlkP 385": AlkP's, though no concept),
    or in a noun of another quantity ("pO2 143 with an A-a gradient of 550").
    """
    m = _LIST_ITEM.search(between) or _ABBREVIATION.search(between)
    if m is not None and not any(w.lower() in _COURSE_WORDS for w in m.group("name").split()):
        return True
    noun = _OWN_NOUN.search(between)
    return noun is not None and noun.group("name").lower() not in _COURSE_WORDS | _READING_WORDS


def _value_before_name(raw: str, end: int, stops: list[int]) -> bool:
    """Whether the number ending at ``end`` is written before an analyte's name that has no value
    after it ("with 12 bands", "93% polys"): the name's value, not the earlier analyte's.
    """
    at = end + len(re.match(r"\s*%?\s*", raw[end:]).group(0))  # type: ignore[union-attr]  # always matches
    return at in stops and not re.match(r"[A-Za-z][\w()+/-]*\s*[:=]?\s*-?\.?\d", raw[at:])


def _stop(raw: str, start: int, stops: list[int]) -> int:
    end = _SENTENCE.search(raw, start)
    limit = end.start() if end else len(raw)
    return min([s for s in stops if start <= s < limit] + [limit])


RULE = Rule("extract.later_values", "A number after an analyte's value in the same sentence, with no other analyte "
            "between and not a time, dose or count, is a further value of that analyte, with its own time.",
            later_values, ("measurement",))
