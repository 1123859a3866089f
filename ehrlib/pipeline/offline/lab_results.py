"""Open-vocabulary lab results: a results record's ``Name-value`` the vocabulary does not name.

A laboratory reports far more analytes than any fixed vocabulary lists (ferritin, D-dimer,
vitamin B12, the differential's lymphocytes and monocytes, urine sodium and osmolality, drug
levels such as "tacroFK"), and a MIMIC results record writes each as the laboratory's own
short form of its label joined to the value (``Lymphs-1.6*``, ``VitB12-1214*``,
``D-Dimer-2361*``). So the name is resolved against the lab dictionary of the database,
restricted to the items the patient actually has, rather than against a word list:

* the name is the label, or the shipped abbreviation list expands it to the label
  (``abbreviations.yaml``), or it is a short form of the label's first word
  (:func:`.lab_categories.abbreviates`), or of the label read as one word ("VitB12" for
  "Vitamin B12", "UreaN" for "Urea Nitrogen": its first two letters and the rest in order);
* the item's specimen (d_labitems ``fluid``) is the one the record names after its stamp
  (``BLOOD``, ``URINE``, ``ASCITES``) or its line's cue (``UA:``, "urine"); blood without one;
* the item records numbers (its profile of values holds a number).

Each value becomes a measurement entity judged by the number rules like any analyte; its
time is the record's stamp, which the line's other values already carry. Specimen words
are data (``lab_results.yaml``).
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import ItemRef, TimeSpan
from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import NumericClaim, Reading
from ehrlib.pipeline.offline.clock_tokens import reads_as_clock
from ehrlib.pipeline.offline.lab_categories import abbreviates
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.numparse import NUMBER, block_items
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.specimen_scope import is_record as _is_record
from ehrlib.pipeline.offline.specimen_scope import line_fluid, scoped_fluid
from ehrlib.pipeline.records import Entity, Segment

__all__ = ["LAB_RESULT", "record_results", "record_specimen_items", "label_score", "line_fluid", "catalog_fluids",
           "catalog_labs", "prose_results", "dictionary_results", "prose_fluid", "fluid_items", "prose_specimen_items",
           "PROSE_RULE", "PROSE_SPECIMEN_RULE", "RULE", "SPECIMEN_RULE"]

#: ``claim.concept`` of the entities this module emits (no vocabulary concept: the label decides)
LAB_RESULT = "lab_result"
#: how many items a name may resolve to (the number rules read the first six)
_MAX_ITEMS = 3


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    data = load_data("lab_results.yaml")
    return {"default": data["default_fluid"],
            "prose": [{"fluid": f["fluid"], "before": re.compile(f["before"], re.I),
                       "heading": re.compile(f["heading"], re.I), "fused": re.compile(f["fused"]),
                       "strip": re.compile(f["strip"], re.I)} for f in data.get("prose", ())]}


@functools.lru_cache(maxsize=1)
def _expansions() -> Mapping[str, tuple[str, ...]]:
    """Abbreviation (lower case) -> the label words it stands for (``abbreviations.yaml``)."""
    raw = load_data("abbreviations.yaml")["abbreviations"]
    return {str(k).lower(): tuple(_squeeze(v) for v in vals) for k, vals in raw.items()}


@functools.lru_cache(maxsize=65536)
def _squeeze(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


def _in_order(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


@functools.lru_cache(maxsize=1 << 17)
def label_score(name: str, label: str) -> int:
    """How closely a written lab name names a dictionary label: 3 the label itself or its
    listed abbreviation, 2 its first word, 1 a short form of it, 0 none (memoised: each
    written name is scored against every lab label of the patient and of the dictionary).
    """
    n, whole = _squeeze(name), _squeeze(label)
    if not n or not whole:
        return 0
    if n == whole or whole in _expansions().get(name.lower(), ()):
        return 3
    first = abbreviates(name, label)
    if first:
        return first
    # the label read as one word: "VitB12" is "Vitamin B12", "AnGap" is "Anion Gap"
    return 1 if len(n) >= 3 and n[:2] == whole[:2] and _in_order(n, whole) else 0


#: a clause ends at a semicolon, or at a full stop that is no decimal point
_CLAUSE_END = re.compile(r";|\.(?!\d)")


@functools.lru_cache(maxsize=64)
def _clause_ends(text: str) -> list[int]:
    """Positions of the clause ends of ``text`` (``_CLAUSE_END`` over the whole text), in order."""
    return [m.start() for m in _CLAUSE_END.finditer(text)]


def clause_start(text: str, lo: int, hi: int) -> int:
    """Where the clause that holds position ``hi`` starts, looking back no further than
    ``lo``: just after the last match of ``_CLAUSE_END`` in ``text[lo:hi]``, else ``lo``.

    The text's clause ends are found once per text and looked up by bisection, so every
    statement on a long line costs its own lookup, not the line's length. Only a ``.``
    right at ``hi`` reads differently in the slice than in the whole text (nothing follows
    it there, so it ends a clause even before a digit).
    """
    if lo < hi and text[hi - 1] in ";.":
        return hi
    ends = _clause_ends(text)
    k = bisect.bisect_left(ends, hi - 1) - 1
    return ends[k] + 1 if k >= 0 and ends[k] >= lo else lo


def prose_fluid(text: str, start: int, name: str = "") -> tuple[str, str] | None:
    """The specimen a lab name written in prose at ``text[start:]`` names, with the name
    left once the specimen letter is taken off it: a specimen word right before it ("urine
    Na 40"), a specimen heading opening its clause ("UA: SG 1.015, WBC 3"), or a specimen
    letter fused to it ("UNa 40" -> "Na"); None without one (``lab_results.yaml`` prose).
    """
    line_start = text.rfind("\n", 0, start) + 1
    clause = clause_start(text, line_start, start)
    for cue in _data()["prose"]:
        if cue["fused"].match(name):
            return str(cue["fluid"]), name[1:]
        if cue["before"].search(text[max(line_start, start - 12):start]) or cue["heading"].match(text[clause:start]):
            return str(cue["fluid"]), name
    return None


def _initials(name: str, label: str) -> bool:
    """Whether ``name`` is the initials of a label of two or more words ("SG", "Specific Gravity")."""
    words = re.findall(r"[A-Za-z]+", label)
    return len(words) >= 2 and name.isupper() and name.lower() == "".join(w[0] for w in words).lower()


def fluid_items(name: str, fluid: str, labs: Sequence[tuple[ItemRef, str]], fluid_of: Callable[[str], str | None],
                profile: Callable[[str], Sequence[str]], pattern: re.Pattern[str] | None = None
                ) -> list[tuple[ItemRef, str]]:
    """The items of specimen ``fluid`` a name written in prose names: the label without its
    specimen words ("Sodium, Urine" -> "Sodium") matched by the analyte's concept
    (``pattern``), or named by ``name`` (the label, a listed abbreviation, a short form, the
    initials); the closest first, only items that record numbers.
    """
    strip = next((c["strip"] for c in _data()["prose"] if c["fluid"] == fluid), None)
    scored = []
    for it, k in labs:
        if not (fluid_of(k) or "").lower().startswith(fluid.lower()):
            continue
        label = it.label or ""
        base = strip.sub("", label) if strip is not None else label
        if pattern is not None and pattern.search(base.lower()):
            score = 4
        else:
            score = max(label_score(name, label), label_score(name, base), 2 if _initials(name, base) else 0)
        scored.append((score, (it, k)))
    best = max((sc for sc, _ in scored), default=0)
    if best < 1:
        return []
    kept = sorted((p for sc, p in scored if sc == best and _numeric(profile(p[1]))),
                  key=lambda p: len(p[0].label or ""))
    return kept[:_MAX_ITEMS]


def prose_specimen_items(text: str, start: int, name: str, concept_items: re.Pattern[str] | None,
                         items: Sequence[tuple[ItemRef, str]], pairs: Sequence[tuple[ItemRef, str]],
                         profile: Callable[[str], Sequence[str]], fluid_of: Callable[[str], str | None]
                         ) -> list[tuple[ItemRef, str]]:
    """The items of an analyte the vocabulary read in prose whose words name another
    specimen than blood ("urine Na 178", "UA: WBC 3, RBC 1"): the patient's items of that
    specimen the analyte names, when there are any; else ``items``.
    """
    if _is_record(text[text.rfind("\n", 0, start) + 1:]):
        return list(items)
    got = prose_fluid(text, start, name)
    if got is None or got[0] == _data()["default"]:
        return list(items)
    labs = [(it, k) for it, k in pairs if it.table == "labevents" and it.label and fluid_of(k)]
    return fluid_items(got[1] or name, got[0], labs, fluid_of, profile, concept_items) or list(items)


def _numeric(values: Sequence[str]) -> bool:
    """Whether an item's profile of values holds a number (an empty profile is unknown: kept)."""
    return not values or any(re.fullmatch(r"[<>]?\s*-?\d+(?:\.\d+)?", str(v).strip()) for v in values)


def _items_for(name: str, fluid: str, labs: Sequence[tuple[ItemRef, str]],
               fluid_of: Callable[[str], str | None], profile: Callable[[str], Sequence[str]], least: int = 1
               ) -> list[tuple[ItemRef, str]]:
    scored = [(label_score(name, it.label or ""), (it, k)) for it, k in labs
              if (fluid_of(k) or fluid).lower().startswith(fluid.lower())]
    best = max((s for s, _ in scored), default=0)
    if best < least:
        return []
    # the closest labels first, the shortest of them first ("Lymphocytes" before "Lymphocytes, Percent")
    kept = sorted((p for s, p in scored if s == best and _numeric(profile(p[1]))), key=lambda p: len(p[0].label or ""))
    return kept[:_MAX_ITEMS]


def catalog_labs(tools: Any) -> list[tuple[ItemRef, str]]:
    """Every lab item of the tools' database (the d_labitems dictionary) with its key."""
    catalog = getattr(getattr(tools, "env", None), "catalog", None)
    if catalog is None:
        return []
    got = _CATALOG_LABS.get(id(catalog))
    if got is None or got[0] is not catalog:
        if len(_CATALOG_LABS) > 4:
            _CATALOG_LABS.clear()
        got = (catalog, [(ItemRef("labevents", i.label, i.value), i.key) for i in catalog.items
                         if i.table == "labevents" and i.label])
        _CATALOG_LABS[id(catalog)] = got
    return got[1]


#: the lab items of a catalogue, built once per catalogue (a catalogue holds a dict: not hashable)
_CATALOG_LABS: dict[int, tuple[Any, list[tuple[ItemRef, str]]]] = {}


def catalog_fluids(tools: Any) -> Callable[[str], str | None]:
    """The d_labitems ``fluid`` of an item key, read from the tools' item catalogue (None
    without a catalogue or for an item of no fluid).
    """
    catalog = getattr(getattr(tools, "env", None), "catalog", None)

    def fluid(key: str) -> str | None:
        item = catalog.get(key) if catalog is not None else None
        return getattr(item, "fluid", None)
    return fluid


def _value_entity(seg: Segment, line: int, span: tuple[int, int], text: str, value: float,
                  found: Sequence[tuple[ItemRef, str]], window: TimeSpan | None, time_text: str | None) -> Entity:
    """A measurement entity of one lab value aligned to ``found``."""
    claim = NumericClaim(concept=LAB_RESULT, section=seg.section, reading=Reading(value=value))
    return Entity(entity_id=f"L{line}:{span[0]}", line=line, text=text, kind="measurement", segment=seg.index,
                  value=f"{value:g}", claim=claim, items=tuple(it for it, _ in found),
                  item_keys=tuple(k for _, k in found), time_text=time_text, window=window, source="ontology",
                  span=span)


def record_specimen_items(lines: Sequence[str], line: int, name: str, items: Sequence[tuple[ItemRef, str]],
                          pairs: Sequence[tuple[ItemRef, str]], profile: Callable[[str], Sequence[str]],
                          fluid_of: Callable[[str], str | None], concept_items: re.Pattern[str] | None = None
                          ) -> list[tuple[ItemRef, str]]:
    """The items of an analyte read by the vocabulary on a results record of another specimen
    than blood (``___ 04:10PM URINE RBC-3 WBC-12``), or on a line wrapped after one or under
    a specimen heading (:func:`.specimen_scope.scoped_fluid`): the patient's items of that
    specimen the name names, or whose label without its specimen words the concept's item
    pattern (``concept_items``) takes ("Na" is "Sodium, Urine" on a urine record), when there
    are any; else ``items`` (which the verifier then does not compare: .verification.specimens).
    """
    fluid = scoped_fluid(lines, line)
    if fluid == _data()["default"]:
        return list(items)
    labs = [(it, k) for it, k in pairs if it.table == "labevents" and it.label and fluid_of(k)]
    return (_items_for(name, fluid, labs, fluid_of, profile)
            or (fluid_items(name, fluid, labs, fluid_of, profile, concept_items) if concept_items is not None else [])
            or list(items))


def record_results(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                   profile: Callable[[str], Sequence[str]], fluid_of: Callable[[str], str | None],
                   known: Iterable[Entity] = (), catalog: Sequence[tuple[ItemRef, str]] = ()) -> list[Entity]:
    """Measurement entities of the results-record values of ``seg`` that no extracted entity
    covers (``known``), each aligned to the patient's lab item its name and specimen name.

    A name none of the patient's items takes is looked up in the database's lab dictionary
    (``catalog``), where it must be the label or its first word: the record states a result
    the admission has no row of (a missing record, not an unknown word). A value takes the
    window (and time text) of an entity already read on its line, which the record's stamp
    timed, else the segment's window.
    """
    labs = [(it, k) for it, k in pairs if it.table == "labevents" and it.label]
    if not labs and not catalog:
        return []
    used: dict[int, list[tuple[int, int]]] = {}
    timed: dict[int, tuple[TimeSpan | None, str | None]] = {}
    for e in known:
        if e.span is not None:
            used.setdefault(e.line, []).append(e.span)
            timed.setdefault(e.line, (e.window, e.time_text))
    concepts = load_lexicon()
    out: list[Entity] = []
    for i in range(seg.start_line, min(seg.end_line + 1, len(lines))):
        text = lines[i]
        if not text or text.isspace() or not _is_record(text):
            continue
        fluid = scoped_fluid(lines, i)
        for item in block_items(text):
            a, b = item.start, item.reading.end + (1 if item.reading.flagged else 0)
            if item.reading.value is None or any(x < b and a < y for x, y in used.get(i, ())):
                continue
            if concepts.concepts_for(item.name):
                continue  # a vocabulary name the concept scanner read (or chose not to)
            found = _items_for(item.name, fluid, labs, fluid_of, profile) or \
                _items_for(item.name, fluid, catalog, fluid_of, lambda k: (), least=2)
            if not found:
                continue
            window, ttext = timed.get(i, (seg.default_window, None))
            out.append(_value_entity(seg, i, (a, b), text[a:b], item.reading.value, found, window, ttext))
    return out


#: a lab name in prose and its value: "ferritin 442", "D-dimer of 1120", "phenobarb level 19.5"
_PROSE = re.compile(r"(?<![\w\-/.])(?P<name>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)?)(?P<level>\s+levels?)?"
                    r"(?:\s+(?:of|was|is|at)|\s*[:=])?\s*(?P<v>" + NUMBER + r")(?![\d/]|[.,]\d)")
#: what after the number makes it no lab value: a dose, a count, a duration, a time of day,
#: or another value (the number is then the time the value was drawn: "ABG 2340: 7.44/46")
_NOT_LAB = re.compile(r"\s*(?:(?:mg|mcg|g|gm|grams?|units?|u|meq|mmol|ml|cc|l|tabs?|caps?|x|q|hours?|hrs?|h|"
                      r"days?|d|min|weeks?|years?|yo|am|pm)\b(?!\s*/)|x\d|q\d|-\d|:\s*\.?\d|\d)", re.I)


def _lab_lines(known: Sequence[Entity]) -> set[int]:
    """The lines on which a lab value is already read (computed once per segment, not per line)."""
    return {e.line for e in known if any(it.table == "labevents" for it in e.items)}


def prose_results(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                  profile: Callable[[str], Sequence[str]], known: Sequence[Entity] = (),
                  catalog: Sequence[tuple[ItemRef, str]] = (),
                  fluid_of: Callable[[str], str | None] = lambda k: None) -> list[Entity]:
    """Measurement entities of lab values written in prose in a labs context ("ferritin 442",
    "D-dimer of 1120 on admission", "VPA level 46") whose name the vocabulary lacks: the name
    is a lab label (or its listed abbreviation), or with a level word a short form of one,
    among the patient's blood items, else the database's (a result the admission lacks).
    A line listing two or more such values is a labs context of its own ("ferritin 101,
    iron 17, TIBC 322"); words naming another specimen ("urine osm 294", "UA: SG 1.015,
    granular casts 9", "UNa 43") read that specimen's items (:func:`prose_fluid`).
    """
    labs = [(it, k) for it, k in pairs if it.table == "labevents" and it.label]
    lex = load_lexicon()
    used: dict[int, list[tuple[int, int]]] = {}
    for e in known:
        if e.span is not None:
            used.setdefault(e.line, []).append(e.span)
    blood = str(_data()["default"])
    lab_lines = _lab_lines(known)
    out: list[Entity] = []
    for i in range(seg.start_line, min(seg.end_line + 1, len(lines))):
        text = lines[i]
        if not text or text.isspace() or _is_record(text):  # a blank line holds no value
            continue
        context = seg.section == "results" or i in lab_lines  # a results section, or a line with a lab
        line_found: list[tuple[int, int, list[tuple[ItemRef, str]], float, bool]] = []
        for m in _PROSE.finditer(text):
            a, b = m.start(), m.end()
            if any(x < b and a < y for x, y in used.get(i, ())) or _NOT_LAB.match(text, b) or reads_as_clock(
                    text, m.start("v"), b):
                continue  # "ABG 0631 (on vent):": a panel's draw time, not a value
            name = m.group("name")
            specimen = prose_fluid(text, a, name)
            if specimen is not None and specimen[0] != blood:
                found = _specimen_found(text, a, name, specimen, labs, catalog, fluid_of, profile)
                if found:
                    line_found.append((a, b, found, float(m.group("v").replace(",", "")), True))
                    used.setdefault(i, []).append((a, b))
                continue
            if lex.concepts_for(name) or (not m.group("level") and lex.drug_re.fullmatch(name)):
                continue
            least = 1 if m.group("level") else 3
            found = _items_for(name, blood, labs, lambda k: None, profile, least) or \
                _items_for(name, blood, catalog, lambda k: None, lambda k: (), max(least, 2))
            if not found:
                continue
            line_found.append((a, b, found, float(m.group("v").replace(",", "")), bool(m.group("level"))))
            used.setdefault(i, []).append((a, b))
        listed = len(line_found) >= 2  # a list of lab values is a labs context of its own
        for a, b, found, value, own in line_found:
            if context or own or listed:  # a level word or a specimen word tells a measured value
                out.append(_value_entity(seg, i, (a, b), text[a:b], value, found, seg.default_window, None))
    return out


def _specimen_found(text: str, start: int, name: str, specimen: tuple[str, str],
                    labs: Sequence[tuple[ItemRef, str]], catalog: Sequence[tuple[ItemRef, str]],
                    fluid_of: Callable[[str], str | None], profile: Callable[[str], Sequence[str]]
                    ) -> list[tuple[ItemRef, str]]:
    """The items of the specimen a prose lab name names: its own name, else the two words
    ending in it ("granular casts"), among the patient's items, else the dictionary's.
    """
    fluid, bare = specimen
    prev = re.search(r"([A-Za-z]+)\s+$", text[:start])
    names = [bare] + ([f"{prev.group(1)} {bare}"] if prev else [])
    for pool, prof in ((labs, profile), (catalog, lambda k: ())):
        for n in reversed(names):
            concept = next(iter(load_lexicon().concepts_for(n)), None)
            pattern = concept.items if concept is not None and concept.kind == "measurement" else None
            found = fluid_items(n, fluid, pool, fluid_of, prof, pattern)
            if found:
                return found
    return []


def dictionary_results(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                       profile: Callable[[str], Sequence[str]], fluid_of: Callable[[str], str | None],
                       known: Sequence[Entity], tools: Any) -> list[Entity]:
    """The lab values of ``seg`` the vocabulary lacks, on results records and then in prose,
    resolved against the lab dictionary of the tools' database.
    """
    catalog = catalog_labs(tools)
    found = record_results(lines, seg, pairs, profile, fluid_of, known, catalog)
    return found + prose_results(lines, seg, pairs, profile, (*known, *found), catalog, fluid_of)


SPECIMEN_RULE = Rule("extract.record_specimen", "An analyte on a results record of a specimen other than blood (a "
                     "urine record's WBC or sodium) is that specimen's item of the patient, not the blood item of the "
                     "same name.", record_specimen_items, ("measurement",))
PROSE_RULE = Rule("extract.prose_result", "In a labs context, a lab's dictionary name followed by a number (not a "
                  "dose, count or time) is that lab's value, of the patient's item or, when the admission has none, "
                  "a result the record lacks.", prose_results, ("measurement",))
RULE = Rule("extract.record_result", "A results record's Name-value the vocabulary lacks is the value of the "
            "patient's lab item whose label the name abbreviates, of the specimen the record names.",
            record_results, ("measurement",))
PROSE_SPECIMEN_RULE = Rule("extract.prose_specimen", "A lab name in prose whose words name a specimen (a specimen "
                           "word before it, a heading opening its clause such as UA:, a fused specimen letter as in "
                           "UNa) is that specimen's item of the patient, not the blood item of the same name.",
                           prose_specimen_items, ("measurement",))
