"""Numbers as clinical notes write them: results blocks, panels, series, prose forms.

A value in a note is rarely a bare number. This module owns the general forms, each
parsed by one pure function over the text that follows an analyte name (or over a whole
line, for blocks and panels):

* MIMIC results blocks, ``Hgb-13.4* WBC-11.2 K-4.2 Base XS--2``: a hyphen that joins a
  name to a number is a separator; a second hyphen is the sign, and only analytes that
  take negative values (``signed_items`` in ``result_panels.yaml``) keep it.
* Thousands separators (``12,400``): a comma followed by exactly three digits groups
  thousands; a comma followed by a space separates list items.
* Slash panels: ``AST/ALT 310/205`` pairs names and values in order; ``ABG 7.28/52/64``
  takes its item order from a panel definition (data, not code).
* Series with arrows (``1.9 <- 1.6 <- 1.4`` is newest first, ``1.4 -> 1.9`` oldest
  first), ranges (``3.1-3.5``, ``3.1 to 3.5``, ``between 3 and 4``), decades (``110s``),
  comparators (``<0.01``), charges (``K+ 3.1``, ``Mg++ 1.6``).
* Prose: ``of 131`` ("a sodium of 131"), ``rose to``/``fell to`` (a value reached with a
  direction), ``from 1.4 to 1.9`` (a series), ``peaked at``/``nadir of`` (a maximum or
  minimum), ``stayed at baseline`` (a baseline statement, with or without its value).

Offsets in every result are into the text given, so a caller can place the reading and
arbitrate it against other spans.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ehrlib.datafiles import load_data

__all__ = [
    "Reading",
    "Item",
    "parse_number",
    "takes_negative",
    "parse_value",
    "parse_series",
    "block_items",
    "panel_items",
    "strip_charge",
    "is_table_row",
    "skeleton_items",
]

#: one unsigned number: thousands groups only as ``d{1,3}(,ddd)+``, never ``1,2``
NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_NUM_RE = re.compile(NUMBER)
_ARROW = r"->|-->|→|=>|<-|<--|←"


@dataclass(frozen=True, slots=True)
class Reading:
    """What one value statement asserts.

    ``role``: ``value`` (a level), ``max``/``min`` (a peak or nadir), ``range`` (``low``-
    ``high``, no single value), ``series`` (``series`` oldest first; ``value`` is the
    newest), ``baseline`` (the level equals the patient's baseline; ``value`` when written).
    ``direction`` (up/down/stable) comes from an arrow or a trend verb; ``comparator`` from
    ``<``/``>``; ``flagged`` from MIMIC's ``*`` after an abnormal result.
    """

    value: float | None
    start: int
    end: int
    role: str = "value"
    low: float | None = None
    high: float | None = None
    series: tuple[float, ...] = ()
    direction: str | None = None
    comparator: str | None = None
    flagged: bool = False


@dataclass(frozen=True, slots=True)
class Item:
    """One named value of a block or panel: ``name`` as written (or as the panel
    definition names it), its reading, and the span of the name-value pair.
    """

    name: str
    reading: Reading
    start: int
    end: int
    source: str  # block | panel | slash


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return load_data("result_panels.yaml")


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.strip().lower())


def parse_number(text: str) -> float | None:
    """``"12,400"`` -> 12400.0, ``"7.28"`` -> 7.28; ``None`` unless the whole text is one number."""
    t = text.strip()
    sign = -1.0 if t.startswith("-") else 1.0
    t = t.lstrip("-").strip()
    if not _NUM_RE.fullmatch(t):
        return None
    return sign * float(t.replace(",", ""))


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def takes_negative(name: str) -> bool:
    """Whether the analyte ``name`` can have a negative value (a base excess can; a
    haemoglobin cannot), per ``signed_items``.
    """
    signed = {_key(n) for n in _data()["signed_items"]}
    return _key(strip_charge(name)[0]) in signed


def strip_charge(name: str) -> tuple[str, int]:
    """``"Mg++"`` -> ``("Mg", 2)``, ``"K+"`` -> ``("K", 1)``: an ion's charge is part of
    its name, not a sign or a grade.
    """
    m = re.fullmatch(r"(.*?)(\++)", name.strip())
    return (m.group(1), len(m.group(2))) if m else (name.strip(), 0)


# --- one value after a name --------------------------------------------------------------------

_LEAD = re.compile(
    r"(?P<charge>\+{1,2})?(?P<sep>\s*[:=~]\s*|\s*\(\s*|\s+|(?=-))?"
    r"(?:(?:a|an|the|his|her|their|level|value|count|result|of|is|was|were|are|now|currently|remains?|remained|"
    r"stayed|had\s+been|has\s+been|at|with|initially|~|approx\.?|approximately|about|around)\s+)*", re.I)
_UP = r"rose|risen|rising|increased|climbed|went\s+up|trended\s+up|up-?trended|bumped|uptitrated|elevated"
_DOWN = (r"fell|fallen|dropped|decreased|declined|trended\s+down|down-?trended|came\s+down|improved|"
         r"normali[sz]ed|weaned|tapered|down-?titrated")
_TREND = re.compile(r"(?P<verb>" + _UP + "|" + _DOWN + r")(?:\s+(?:again|further|slightly|briefly))?\s+"
                    r"(?:from\s+(?P<a>" + NUMBER
                    + r")\s*(?:to|->|→)\s*|to\s+|at\s+)(?:a\s+(?:peak|high|nadir|low)\s+of\s+)?"
                    r"(?P<b>" + NUMBER + r")", re.I)
_FROM_TO = re.compile(r"from\s+(?P<a>" + NUMBER + r")\s*(?:to|->|→)\s*(?P<b>" + NUMBER + r")", re.I)
_EXTREME = re.compile(r"(?:(?P<max>peaked|peaking|peak|max(?:imum|imal)?|highest|as\s+high\s+as|up\s+to)|"
                      r"(?P<min>nadired|nadir|min(?:imum|imal)?|lowest|as\s+low\s+as))"
                      r"(?:\s+(?:value|level))?(?:\s+(?:of|at|was|is|=|:))?\s*(?P<v>" + NUMBER + r")", re.I)
_BASELINE = re.compile(r"(?:(?:at|near|to|back\s+to)\s+)?(?:(?:his|her|their|the\s+patient'?s|pt'?s)\s+)?baseline"
                       r"(?:\s*(?:of|at|\(|~|=|:)?\s*(?P<v>" + NUMBER + r")\)?)?", re.I)
_BETWEEN = re.compile(r"between\s+(?P<a>" + NUMBER + r")\s+and\s+(?P<b>" + NUMBER + r")", re.I)
_COMPARATOR = re.compile(r"(?P<c><=|>=|≤|≥|<|>|less\s+than|greater\s+than|under|over)\s*(?P<v>" + NUMBER + r")", re.I)
_PLAIN = re.compile(r"(?P<v>" + NUMBER + r")(?P<dec>s(?![A-Za-z]))?(?P<flag>\*)?"
                    r"(?:\s*(?:-|–|to)\s*(?P<v2>" + NUMBER + r")(?P<dec2>s(?![A-Za-z]))?)?(?P<flag2>\*)?")


def _dir(verb: str) -> str:
    return "down" if re.fullmatch(_DOWN, verb, re.I) else "up"


def parse_series(text: str, start: int = 0) -> Reading | None:
    """Arrow series at ``text[start:]``: ``1.9 <- 1.6 <- 1.4`` (newest first) and
    ``1.4 -> 1.9`` (oldest first) both give ``series`` oldest first; mixed arrows are not
    a series.
    """
    m = re.compile(r"\s*(?P<body>(?:" + NUMBER + r")(?:\s*(?:" + _ARROW + r")\s*(?:" + NUMBER + r"))+)").match(text,
                                                                                                               start)
    if not m:
        return None
    body = m.group("body")
    arrows = {("back" if a in ("<-", "<--", "←") else "fwd") for a in re.findall(_ARROW, body)}
    if len(arrows) != 1:
        return None
    nums = [_num(x) for x in _NUM_RE.findall(body)]
    if arrows == {"back"}:
        nums.reverse()
    return Reading(nums[-1], m.start("body"), m.end("body"), "series", series=tuple(nums),
                   direction=_series_direction(nums))


def _series_direction(nums: list[float]) -> str:
    if nums[-1] > nums[0]:
        return "up"
    return "down" if nums[-1] < nums[0] else "stable"


def parse_value(text: str, *, signed: bool = False) -> Reading | None:
    """The value statement that starts ``text`` (the text right after an analyte name).

    ``signed``: the analyte takes negative values (see :func:`takes_negative`). A hyphen
    touching the name (``-13.4``) is a separator; a hyphen after a space or a colon is a
    minus sign only when ``signed``. Returns ``None`` when no value is stated, and for a
    number that continues as ``/<number>`` (a ratio, a panel or a blood pressure, which
    :func:`panel_items` reads whole).
    """
    lead = _LEAD.match(text)
    pos = lead.end() if lead else 0
    negative = False
    if text.startswith("-", pos):
        touching = pos == 0 or (lead is not None and lead.group("charge") and lead.end() == lead.end("charge"))
        if text.startswith("--", pos):
            negative, pos = signed, pos + 2  # "Base XS--2": separator, then the sign
        elif touching:
            pos += 1  # "Hgb-13.4": a separator
        else:
            negative, pos = signed, pos + 1
        pos += len(text[pos:]) - len(text[pos:].lstrip())
        if not negative:
            lead = _LEAD.match(text, pos)  # (every part is optional: it always matches)
            pos = lead.end() if lead else pos
    sign = -1.0 if negative else 1.0
    for parse in (_trend_at, _extreme_at, _baseline_at, _between_at, _comparator_at):
        r = parse(text, pos)
        if r is not None:
            return r
    series = parse_series(text, pos)
    if series is not None:
        return series
    m = _PLAIN.match(text, pos)
    if not m or re.match(r"\s*/\s*\d", text[m.end():]):
        return None
    v = sign * _num(m.group("v"))
    flagged = bool(m.group("flag") or m.group("flag2"))
    if m.group("v2") is not None and not negative:
        lo, hi = v, _num(m.group("v2"))
        if m.group("dec2"):
            hi += 9
        return Reading(None, m.start(), m.end(), "range", low=min(lo, hi), high=max(lo, hi), flagged=flagged)
    if m.group("dec"):
        return Reading(None, m.start(), m.end(), "range", low=v, high=v + 9)
    return Reading(v, m.start(), m.end(), flagged=flagged)


def _trend_at(text: str, pos: int) -> Reading | None:
    m = _TREND.match(text, pos)
    if m:
        b = _num(m.group("b"))
        if m.group("a"):
            a = _num(m.group("a"))
            return Reading(b, m.start(), m.end(), "series", series=(a, b), direction=_series_direction([a, b]))
        return Reading(b, m.start(), m.end(), direction=_dir(m.group("verb")))
    m = _FROM_TO.match(text, pos)
    if m:
        a, b = _num(m.group("a")), _num(m.group("b"))
        return Reading(b, m.start(), m.end(), "series", series=(a, b), direction=_series_direction([a, b]))
    return None


def _extreme_at(text: str, pos: int) -> Reading | None:
    m = _EXTREME.match(text, pos)
    if not m:
        return None
    return Reading(_num(m.group("v")), m.start(), m.end(), "max" if m.group("max") else "min")


def _baseline_at(text: str, pos: int) -> Reading | None:
    m = _BASELINE.match(text, pos)
    if not m:
        return None
    v = m.group("v")
    return Reading(_num(v) if v else None, m.start(), m.end(), "baseline", direction="stable")


def _between_at(text: str, pos: int) -> Reading | None:
    m = _BETWEEN.match(text, pos)
    if not m:
        return None
    a, b = _num(m.group("a")), _num(m.group("b"))
    return Reading(None, m.start(), m.end(), "range", low=min(a, b), high=max(a, b))


def _comparator_at(text: str, pos: int) -> Reading | None:
    m = _COMPARATOR.match(text, pos)
    if not m:
        return None
    c = m.group("c").lower()
    c = {"≤": "<=", "≥": ">=", "less than": "<", "under": "<", "greater than": ">", "over": ">"}.get(
        re.sub(r"\s+", " ", c), c)
    return Reading(_num(m.group("v")), m.start(), m.end(), comparator=c)


# --- results blocks ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _block_re() -> re.Pattern[str]:
    two = "|".join(re.escape(n).replace(r"\ ", r"\s") for n in sorted(_data()["block_names"], key=len, reverse=True))
    # a hyphenated name is one analyte ("D-Dimer-2361", "CK-MB-7"): its hyphen joins two words
    name = r"(?:" + two + r"|[A-Za-z]+-[A-Za-z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*(?:\([A-Za-z0-9]+\))?\+{0,2})"
    return re.compile(r"(?<![\w\-/.])(?P<name>" + name + r")-(?P<neg>-)?(?P<cmp><=|>=|<|>)?(?P<v>" + NUMBER + r")"
                      r"(?:-(?P<v2>" + NUMBER + r"))?(?P<flag>\*)?(?![\w.\-/])")


def block_items(text: str) -> list[Item]:
    """Every ``Name-value`` item of a MIMIC results block, in text order.

    ``Hgb-13.4*`` is haemoglobin 13.4 (flagged abnormal), never -13.4; ``Base XS--2`` is
    a base excess of -2; ``RBC-0-2`` is a range; ``cTropnT-<0.01`` keeps its comparator.
    Names are as written: the caller maps them to analytes and ignores the rest.
    """
    out: list[Item] = []
    for m in _block_re().finditer(text):
        name = re.sub(r"\s+", " ", m.group("name"))
        v = _num(m.group("v"))
        flagged = bool(m.group("flag"))
        if m.group("v2") is not None:
            lo, hi = v, _num(m.group("v2"))
            reading = Reading(None, m.start("v"), m.end("v2"), "range", low=min(lo, hi), high=max(lo, hi),
                              flagged=flagged)
        else:
            if m.group("neg") and takes_negative(name):
                v = -v
            reading = Reading(v, m.start("v"), m.end("v"), comparator=m.group("cmp"), flagged=flagged)
        out.append(Item(name, reading, m.start(), m.end(), "block"))
    return out


# --- slash panels -----------------------------------------------------------------------------

#: a panel name: two or more characters, or one capital ("K"); single lower-case letters are
#: shorthand ("s/p", "w/o", "c/o"), never analytes
_NAME = r"(?:[A-Za-z][A-Za-z0-9]+|[A-Z])\+{0,2}"
_VALUES = r"(?P<vals>-?(?:" + NUMBER + r")\*?(?:\s*/\s*-?(?:" + NUMBER + r")\*?)+)(?![\d/.])"
_SLASH_NAMES = re.compile(r"(?<![\w/])(?P<names>" + _NAME + r"(?:\s*/\s*" + _NAME + r")+)(?![\w/])"
                          r"\s*(?:[:=]|\bwas\b|\bwere\b|\bof\b)?\s*" + _VALUES
                          # "AST/ALT 227/67, down from 352/76": the same items' earlier values
                          + r"(?:\s*,?\s*\(?(?i:(?:(?:down|up)\s+)?from)\s+(?P<prev>-?(?:" + NUMBER
                          + r")\*?(?:\s*/\s*-?(?:" + NUMBER + r")\*?)+)(?![\d/]|\.\d))?")


@functools.lru_cache(maxsize=1)
def _panel_re() -> re.Pattern[str]:
    # longest first, ties by name: the same pattern text in every process (a set's order is not)
    names = sorted({n for p in _data()["panels"] for n in p["names"]}, key=lambda n: (-len(n), n))
    alt = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in names)
    return re.compile(r"(?<![\w/])(?P<panel>" + alt + r")(?![\w/])\s*(?:[:=]|\bwas\b|\bof\b)?\s*" + _VALUES, re.I)


def _panel_items_of(name: str) -> list[str] | None:
    for p in _data()["panels"]:
        if any(_key(n) == _key(name) for n in p["names"]):
            return list(p["items"])
    return None


def _values(m: re.Match[str]) -> list[tuple[float, int, int, bool]]:
    base = m.start("vals")
    out = []
    for v in re.finditer(r"(-?)(" + NUMBER + r")(\*?)", m.group("vals")):
        num = _num(v.group(2)) * (-1.0 if v.group(1) else 1.0)
        out.append((num, base + v.start(), base + v.end(), bool(v.group(3))))
    return out


def _items(names: list[str], values: list[tuple[float, int, int, bool]], start: int, end: int,
           source: str) -> list[Item] | None:
    items = []
    for name, (v, s, e, flag) in zip(names, values, strict=False):
        if v < 0 and not takes_negative(name):
            return None  # a negative where the analyte cannot be one: not this panel
        items.append(Item(name, Reading(v, s, e, flagged=flag), start, end, source))
    return items


def panel_items(text: str) -> list[Item]:
    """One item per value of every slash panel in ``text``.

    ``AST/ALT 310/205`` -> AST 310, ALT 205 (names and values must pair one to one);
    ``ABG 7.28/52/64`` -> pH, pCO2, pO2 in the order ``result_panels.yaml`` defines (fewer
    values than items fill the first items; more values refuse the reading).
    """
    out: list[Item] = []
    taken: list[tuple[int, int]] = []
    for m in _panel_re().finditer(text):
        order = _panel_items_of(m.group("panel")) or []
        values = _values(m)
        if len(values) > len(order):
            continue
        items = _items(order, values, m.start(), m.end(), "panel")
        if items:
            out.extend(items)
            taken.append((m.start(), m.end()))
    for m in _SLASH_NAMES.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        names = [n.strip() for n in m.group("names").split("/")]
        values = _values(m)
        if len(names) != len(values) or _panel_items_of(m.group("names")) is not None:
            continue
        items = _items(names, values, m.start(), m.end("vals"), "slash")
        if items:
            out.extend(items)
            prev = [(_num(v.group(0).strip("*")), m.start("prev") + v.start(), m.start("prev") + v.end(), False)
                    for v in re.finditer(r"-?(?:" + NUMBER + r")\*?", m.group("prev") or "")]
            if len(prev) == len(names):
                out.extend(_items(names, prev, m.start("prev"), m.end("prev"), "slash") or ())
    return sorted(out, key=lambda it: (it.start, it.reading.start))


# --- table rows -------------------------------------------------------------------------------

_COLUMN_GAP = re.compile(r"[\d*%)]\s{2,}(?=[A-Za-z])")


def is_table_row(line: str) -> bool:
    """Whether ``line`` is a row of name-value columns (``Na 136  K 5.8  Cl 95``): two or
    more values each followed by a column gap. A row is complete in itself; it never
    continues into the next line as a wrapped sentence does.
    """
    return len(_COLUMN_GAP.findall(line.strip())) >= 2


# --- the blood count skeleton -----------------------------------------------------------------

_SKELETON = re.compile(r"(?<![\w./])(?P<a>" + NUMBER + r")\*?\s*>\s*(?P<b>" + NUMBER + r")\*?\s*/\s*(?P<c>" + NUMBER
                       + r")\*?\s*<\s*(?P<d>" + NUMBER + r")\*?(?![\w/]|\.\d)")


def skeleton_items(text: str) -> list[Item]:
    """The items of every flattened blood-count fishbone (``12.1 > 9.8 / 29.5 < 210`` =
    WBC, Hgb, Hct, Plt in the order ``cbc_skeleton`` of ``result_panels.yaml`` names).
    """
    names = _data()["cbc_skeleton"]
    out: list[Item] = []
    for m in _SKELETON.finditer(text):
        for name, g in zip(names, "abcd", strict=True):
            out.append(Item(name, Reading(_num(m.group(g)), m.start(g), m.end(g)), m.start(), m.end(), "skeleton"))
    return out
