"""Output volumes written after the site that put them out.

"Chest tubes put out 430 cc on POD 1", "a Blakemore tube was placed, draining 1,850 cc",
"UOP poor, 222 cc total today", "CT output 445 cc yesterday, 115 cc today", "only 150 cc
of urine on the second day": the volume is the statement and the site word (urine /
Foley, chest tube, drain / JP, NGT / OGT / gastric, ostomy, stool) before it in the same
sentence, or right after it ("cc of urine"), says which output items it is about. Each
volume not already part of another mention becomes an output mention of the site's
lexicon concept, in mL (cc = mL, L x 1000), unless intake words ("received", "bolus",
"NS") stand between the site and the volume or right after it. A volume followed by a period word ("today",
"for the day", "on POD 2", "total") or large enough to be a shift's total is a period
sum, which verification compares with the day's total; a small one is one charting. The
site words and period words are data (``verification_terms.yaml``).
"""
from __future__ import annotations

import functools
import re
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.mention import Mention, concept_flags, emit, overlaps
from ehrlib.pipeline.offline.values import numeric_claim

__all__ = ["output_volume_mentions", "drop_site_devices", "states_period", "positioned_outputs"]

_VOLUME = re.compile(r"(?<![\d.,/])(?P<approx>~\s*)?(?P<n>\d{1,2},\d{3}|\d+(?:\.\d+)?)\s*(?P<u>cc|ml|mls|l)\b", re.I)
#: between two volumes of one site's series: a few words, one clause break ("out initially; ")
_SERIES_GAP = re.compile(r"[^.;\d]{0,25}[;,]\s*(?:(?:and|then|another|plus)\s+)?~?\s*")
#: an hourly output range ("10-50 cc/hr", "20 to 140 mL/h")
_HOURLY_RANGE = re.compile(r"(?<![\d.,/])(?P<a>\d{1,4})\s*(?:-|–|to)\s*(?P<b>\d{1,4})\s*(?:cc|ml|mls)?\s*(?:/|per)\s*"
                           r"(?:h|hr|hour)\b", re.I)
#: a drain's position between its site word and its volume ("JP medial 190", "CT #2: 40 cc")
_POSITION = r"(?:medial|lateral|anterior|posterior|superior|inferior|upper|lower|left|right|[RL]|#\s*\d)"
#: how far before a volume its site word may stand, within one sentence
_REACH = 70


@functools.cache
def _sites() -> tuple[tuple[str, re.Pattern[str]], ...]:
    terms = load_data("verification_terms.yaml")["output_sites"]
    return tuple((concept, re.compile(r"(?<![A-Za-z])(?:" + "|".join(words) + r")(?![A-Za-z])", re.I))
                 for concept, words in terms.items())


@functools.cache
def _period() -> re.Pattern[str]:
    words = load_data("verification_terms.yaml")["output_period_words"]
    return re.compile(r"^[\s,]*(?:[a-z/]+\s+){0,3}?(?:" + "|".join(words) + r")\b", re.I)


@functools.cache
def _intake() -> re.Pattern[str]:
    words = load_data("verification_terms.yaml")["output_intake_words"]
    return re.compile(r"(?<![A-Za-z])(?:" + "|".join(words) + r")(?![A-Za-z])", re.I)


@functools.cache
def _headings() -> re.Pattern[str]:
    words = load_data("verification_terms.yaml")["output_period_headings"]
    return re.compile(r"^\W*(?:" + "|".join(words) + r")\s*(?:\([^)]*\)\s*)?:", re.I)


def states_period(raw: str, end: int) -> bool:
    """Whether the volume ending at ``end`` is a period's total: a period word follows it
    ("for the day", "today", "since MN"), or it is listed under an intake/output heading
    ("I/O: UOP 1.2 L, JP 190"), which sums each site over the period.
    """
    return bool(_period().match(raw[end:end + 40]) or _headings().match(raw))


def _sentence_before(raw: str, start: int) -> str:
    before = raw[max(0, start - _REACH):start]
    cut = max((m.end() for m in re.finditer(r"[;]|\.(?!\d)\s|:\s*$", before)), default=0)
    return before[cut:]


def _site(raw: str, v: re.Match[str]) -> tuple[str, int, int] | None:
    """(concept, start, end) of the nearest site word before the volume, or right after it
    ("cc of urine").
    """
    after = re.match(r"\s+of\s+(\w+(?:\s+\w+)?)", raw[v.end():])
    if after:
        for concept, pat in _sites():
            if pat.match(after.group(1)):
                return concept, v.end() + after.start(1), v.end() + after.end(1)
    if _intake().match(raw[v.end():].lstrip()):
        return None  # "500 cc NS": a fluid given
    before = _sentence_before(raw, v.start())
    offset = v.start() - len(before)
    best: tuple[int, int, str] | None = None
    for concept, pat in _sites():
        for m in pat.finditer(before):
            if best is None or m.start() > best[0]:
                best = (m.start(), m.end(), concept)
    if best is None or _intake().search(before[best[1]:]):
        return None  # "UOP 30 cc/hr, received 1 L": the volume is an intake
    return best[2], offset + best[0], offset + best[1]


def drop_site_devices(raw: str, found: list[Mention]) -> list[Mention]:
    """``found`` without the devices named, with no action of their own, as the site of an
    output stated later in the same sentence ("Foley w/ clear urine, UOP 2.1 L": one statement).
    """
    sites = dict(_sites())
    spans: list[tuple[int, int]] = []
    for o in found:
        pat = sites.get(o.concept) if o.kind == "output" else None
        if pat is not None:
            before = _sentence_before(raw, o.start)
            at = o.start - len(before)
            spans += [(at + m.start(), at + m.end()) for m in pat.finditer(before)]
    return [m for m in found if not (m.kind == "procedure" and not getattr(m.claim, "action", None)
                                     and any(m.start < y and x < m.end for x, y in spans))]


def output_volume_mentions(raw: str, line: int, taken: list[tuple[int, int]],
                           found: list[Mention] | None = None) -> list[Mention]:
    """The output-volume mentions of one line outside ``taken``. A device named as the
    volume's site without an action of its own ("OGT to LIWS, 900 cc") is the same
    statement: it is removed from ``found``; one placed or removed stays its own.
    """
    out: list[Mention] = []
    for v in _HOURLY_RANGE.finditer(raw):
        # "UOP ~600 cc for the day (10-50 cc/hr)": the range of the site's hourly chartings
        site = None if overlaps(taken, v.start(), v.end()) else _site(raw, v)
        if site is not None:
            lo, hi = float(v.group("a")), float(v.group("b"))
            if lo < hi:
                emit(out, taken, Mention(line, v.start(), v.end(), v.group(0), "output", site[0], v.group(0),
                                         numeric_claim({"value": lo, "min": lo, "max": hi, "unit": "mL",
                                                        "per_hour": True})))
    for v in _VOLUME.finditer(raw):
        if overlaps(taken, v.start(), v.end()) or re.match(r"\s*(?:/|per)\s*(?:h|hr|hour)\b", raw[v.end():], re.I):
            continue  # another statement's value, or a rate ("30 cc/hr") the hourly rules read
        site = _site(raw, v)
        if site is None and out and _SERIES_GAP.fullmatch(raw[out[-1].end:v.start()]) and not (
                _intake().match(raw[v.end():].lstrip()) or _intake().search(raw[out[-1].end:v.start()])):
            # "~2.1 L out initially; 845 mL since MN": a volume in a series reads the site of the one before
            concept, a, b = out[-1].concept, v.start(), v.start()
        elif site is None:
            continue
        else:
            concept, a, b = site
        if found is not None:
            found[:] = [m for m in found if not (m.kind == "procedure" and not getattr(m.claim, "action", None)
                                                 and m.start < b and a < m.end)]
        value = float(v.group("n").replace(",", "")) * (1000.0 if v.group("u").lower() == "l" else 1.0)
        parsed: dict[str, Any] = {"value": value, "unit": "mL"}
        if states_period(raw, v.end()) or value >= concept_flags()["day_total_min"]:
            parsed["per_day"] = True
        if v.group("approx"):
            parsed["approx"] = True
        emit(out, taken, Mention(line, v.start(), v.end(), v.group(0).strip(), "output", concept, v.group(0).strip(),
                                 numeric_claim(parsed)))
    return out


def positioned_outputs(raw: str, line: int, taken: list[tuple[int, int]]) -> list[Mention]:
    """Outputs of a site named with its position and a bare volume ("JP medial 190", "JP
    lateral 450 serosang", "CT #2 40 cc"): the position says which of the site's drains, so
    the mention's name keeps it (the items are narrowed by it); without a unit the number is
    the site's volume in mL. Under an intake/output heading or before a period word it is
    the period's total.
    """
    out: list[Mention] = []
    for concept, pat in _sites():
        for m in re.finditer(r"(?P<site>" + pat.pattern + r")\s+" + _POSITION + r"\s*:?\s*"
                             r"(?P<n>\d{1,2},\d{3}|\d+(?:\.\d+)?)\s*(?P<u>cc|ml|mls|l)?(?![\w./%-])", raw, re.I):
            if overlaps(taken, m.start(), m.end()) or re.match(r"\s*(?:/|per)\s*h", raw[m.end():], re.I) or \
                    _intake().match(raw[m.end():].lstrip()):
                continue
            value = float(m.group("n").replace(",", "")) * (1000.0 if (m.group("u") or "").lower() == "l" else 1.0)
            parsed: dict[str, Any] = {"value": value, "unit": "mL"}
            if states_period(raw, m.end()) or value >= concept_flags()["day_total_min"]:
                parsed["per_day"] = True
            name = raw[m.start():m.start("n")].strip().rstrip(":").strip()
            emit(out, taken, Mention(line, m.start(), m.end(), name, "output", concept,
                                     raw[m.start("n"):m.end()].strip(), numeric_claim(parsed)))
    return out
