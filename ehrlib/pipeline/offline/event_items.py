"""Procedure events named by the patient's own item dictionary.

The lexicon's bedside concepts cover the common lines and tubes; a stay's procedure
events hold many more (a transthoracic echo, an EEG, a pan culture, a Blakemore tube).
So each of the patient's procedure-event items is read as note phrases: its label (each
"/"- or " - "-separated alternative, without a parenthesis, without the action or generic
words at its edges, words joined by a space or hyphen, the last one inflected: "Pan
Culture" -> "pan-cultured", "Blakemore Inserted" -> "Blakemore") and every shipped
abbreviation whose expansion is that phrase ("TTE" -> "transthoracic echo"); a label naming
the placement or removal of a device is also the device followed by any verb of that
edge ("Chest Tube Removed" -> "chest tubes pulled"). A phrase of
generic words only, or one common word, is not used; a one-word label must be an acronym
or long, and a short name before a small number ("HD#3") counts days. A match is a
procedure mention aligned to exactly the items whose phrases it matches, so the verdict
is about the statement's window and clock time. The tables read
and the generic words are data (``verification_terms.yaml``, ``event_items``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.mention import Mention, emit, overlaps
from ehrlib.pipeline.offline.procedures import procedure_claim

__all__ = ["EVENT_ITEM", "EventForm", "event_forms", "event_item_mentions", "event_item_pairs"]

#: the concept name of a mention found through the item dictionary
EVENT_ITEM = "event_item"


@dataclass(frozen=True, slots=True)
class EventForm:
    """One note phrase of one patient item."""

    key: str
    label: str
    pattern: re.Pattern[str]


def _config() -> tuple[frozenset[str], frozenset[str], int]:
    cfg = load_data("verification_terms.yaml")["event_items"]
    return frozenset(cfg["tables"]), frozenset(w.lower() for w in cfg["generic_words"]), int(cfg["min_single_word"])


@functools.cache
def _abbreviations() -> dict[str, tuple[str, ...]]:
    """Expansion (lower case) -> the abbreviations that stand for it."""
    out: dict[str, list[str]] = {}
    for abbr, expansions in load_data("abbreviations.yaml")["abbreviations"].items():
        for x in expansions:
            out.setdefault(str(x).lower(), []).append(str(abbr))
    return {k: tuple(v) for k, v in out.items()}


def label_phrases(label: str) -> list[tuple[str, ...]]:
    """The word sequences a label may be written as (original case), empty when none is specific."""
    _, generic, min_single = _config()
    out: list[tuple[str, ...]] = []
    for alt in re.split(r"/|\s-\s|,", re.sub(r"\([^)]*\)", " ", label)):
        words = re.findall(r"[A-Za-z0-9]+", alt)
        while words and words[0].lower() in generic:
            words = words[1:]
        while words and words[-1].lower() in generic:
            words = words[:-1]
        if not words or all(w.lower() in generic for w in words):
            continue
        if len(words) == 1 and not (len(words[0]) >= 3 and words[0].isupper()) and len(words[0]) < min_single:
            continue
        out.append(tuple(words))
    return out


#: the last word of a label that names an edge of the device's dwell ("Chest Tube Removed")
_EDGE_LABEL_WORDS = {"removed": "removal", "discontinued": "removal", "placed": "placement",
                     "inserted": "placement", "insertion": "placement"}


def edge_phrases(label: str) -> list[tuple[tuple[str, ...], str]]:
    """(device words, edge) of a label naming the placement or removal of a device: written
    as the device and any verb of that edge ("chest tubes pulled" for "Chest Tube Removed"),
    however generic the device's own words are.
    """
    _, generic, _ = _config()
    out: list[tuple[tuple[str, ...], str]] = []
    for alt in re.split(r"/|\s-\s|,", re.sub(r"\([^)]*\)", " ", label)):
        words = re.findall(r"[A-Za-z0-9]+", alt)
        edge = _EDGE_LABEL_WORDS.get(words[-1].lower()) if len(words) >= 2 else None
        device = words[:-1]
        while device and device[0].lower() in generic - {"chest", "tube", "line"}:
            device = device[1:]
        if edge and device:
            out.append((tuple(device), edge))
    return out


@functools.cache
def _edge_verbs(edge: str) -> str:
    return "|".join(load_data("verification_terms.yaml")["procedure_edges"][edge])


@functools.cache
def _size_units() -> dict[str, tuple[str, ...]]:
    units = load_data("verification_terms.yaml")["event_items"].get("size_units") or {}
    return {k.lower(): tuple(v) for k, v in units.items()}


@functools.cache
def _places() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    """(label pattern, place names, direction) of the places a patient is taken to and back from."""
    places = load_data("verification_terms.yaml")["event_items"].get("places") or ()
    return tuple((re.compile(p["label"], re.I), "|".join(p["names"]), p.get("direction", "")) for p in places)


def place_pattern(names: str, direction: str) -> re.Pattern[str]:
    """"taken to the OR" / "back from OR" / "to IR": a move to (or back from) a place; its
    names keep their case (an upper-case "OR" is the operating room, no conjunction).
    """
    to = r"(?:to|into)"
    back = r"(?:back\s+)?from"
    prep = to if direction == "to" else back if direction == "from" else f"(?:{to}|{back})"
    # the verb on the same line only: a statement is located at its first word's line
    verb = r"(?:(?:was|were|is)[ \t]+)?(?:taken|went|brought|sent|returned|came|transferred|transported|rushed)[ \t]+"
    return re.compile(r"(?<![A-Za-z])(?i:" + verb + r")?(?i:" + prep + r")\s+(?i:the\s+)?(?:" + names
                      + r")(?![A-Za-z])")


#: a move named as the time of another observation ("on return from OR") or as where the
#: patient was admitted from: no event statement
_MOVE_AS_TIME = re.compile(r"(?:\b(?:on|upon|after|since)\s+(?:(?:his|her|the)\s+)?(?:return|arrival|coming\s+back)|"
                           r"\badmitted|\bpost)\s*$", re.I)


def _last_word(w: str) -> str:
    """A label's last word with its plural: "Bronchoscopy" -> "bronchoscopies"."""
    return re.escape(w[:-1]) + "(?:y|ies)" if len(w) > 3 and w[-1] in "yY" and w[-2] not in "aeiouAEIOU" \
        else re.escape(w)


def _phrase_pattern(words: Sequence[str]) -> str:
    """A label's words joined by a space, hyphen or slash; a size unit after a number may be
    written short ("18 Gauge" as "18g", "20 ga").
    """
    join = r"[\s\-/]*"
    body = ""
    for i, w in enumerate(words):
        short = _size_units().get(w.lower()) if i and words[i - 1].isdigit() else None
        if short:  # a one-letter unit only joined to its number ("18g", not "18 g of protein")
            spaced = [re.escape(x) for x in (w, *short) if len(x) > 1]
            joined = [re.escape(x) for x in short if len(x) == 1]
            body += "(?:" + "|".join([join + "(?:" + "|".join(spaced) + ")", *joined]) + ")"
        else:
            body += (join if i else "") + (_last_word(w) if i == len(words) - 1 else re.escape(w))
    return r"(?<![A-Za-z0-9])" + body + r"(?:s|es|d|ed|ing)?(?![A-Za-z0-9])"


@functools.lru_cache(maxsize=512)
def event_forms(items: tuple[tuple[str, str], ...]) -> tuple[EventForm, ...]:
    """The note phrases of the patient's procedure-event items, given as (key, label) pairs."""
    out: list[EventForm] = []
    for key, label in items:
        for words in label_phrases(label):
            if len(words) == 1 and words[0].isupper() and len(words[0]) <= 4:
                pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(words[0]) + r"s?(?![A-Za-z0-9])")  # "EEG"
            else:
                pattern = re.compile(_phrase_pattern(words), re.I)
            out.append(EventForm(key, label, pattern))
            for abbr in _abbreviations().get(" ".join(words).lower(), ()):
                out.append(EventForm(key, label, re.compile(_phrase_pattern(abbr.split()), re.I)))
        for label_re, names, direction in _places():
            if label_re.search(label):
                out.append(EventForm(key, label, place_pattern(names, direction)))
        for device, edge in edge_phrases(label):
            body = r"[\s\-/]*".join(re.escape(w) for w in device)
            out.append(EventForm(key, label, re.compile(
                r"(?<![A-Za-z0-9])" + body + r"s?\s+(?:(?:was|were|is|are|been|got)\s+)?(?:" + _edge_verbs(edge)
                + r")(?![A-Za-z0-9])", re.I)))
    return tuple(out)


def patient_event_items(pairs: Iterable[tuple[ItemRef, str]]) -> tuple[tuple[str, str], ...]:
    """(key, label) of the patient's items in the dictionary's tables."""
    tables = _config()[0]
    return tuple(sorted((k, it.label or "") for it, k in pairs if it.table in tables and it.label))


@functools.lru_cache(maxsize=512)
def _any_form(forms: tuple[EventForm, ...]) -> re.Pattern[str]:
    """One pattern matching wherever any form matches (each form keeps its own case rule)."""
    return re.compile("|".join(f"(?{'i' if f.pattern.flags & re.I else '-i'}:{f.pattern.pattern})" for f in forms))


#: a short name right before a small number counts days ("HD#3", "HD 2"), it is no procedure
_DAY_COUNT = re.compile(r"\s*#?\s*\d{1,2}\b(?![-/:.]\d)")


def event_item_mentions(raw: str, line: int, forms: Sequence[EventForm], taken: list[tuple[int, int]]) -> list[Mention]:
    """Procedure mentions of one line found through the item dictionary, longest first, outside ``taken``."""
    if not forms or not _any_form(tuple(forms)).search(raw):
        return []  # one combined scan first: most lines name none of the patient's procedures
    hits = sorted(((m.start(), m.end()) for f in forms for m in f.pattern.finditer(raw)),
                  key=lambda h: (-(h[1] - h[0]), h[0]))
    out: list[Mention] = []
    for a, b in hits:
        if overlaps(taken, a, b) or (b - a <= 4 and _DAY_COUNT.match(raw[b:])) or _MOVE_AS_TIME.search(raw[:a]):
            continue
        claim, action = procedure_claim(raw, a, b)
        emit(out, taken, Mention(line, a, b, raw[a:b].strip(), "procedure", EVENT_ITEM, action, claim))
    return sorted(out, key=lambda m: m.start)


def event_item_pairs(text: str, pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The patient's items whose phrases the mention text is (alignment of an :data:`EVENT_ITEM` mention)."""
    pairs = list(pairs)
    keys = {f.key for f in event_forms(patient_event_items(pairs)) if f.pattern.fullmatch(text.strip())}
    return [(it, k) for it, k in pairs if k in keys]
