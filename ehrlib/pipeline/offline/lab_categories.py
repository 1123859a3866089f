"""Categorical lab results: a result word on a results record ("Nitrite-NEG", "Leuks-LG").

Urinalysis dipsticks and urine toxicology screens are labevents whose result is a word, not
a number. A results record writes them as ``Name-WORD``; the name is the laboratory's own
short form of the item label ("Leuks" for Leukocytes, "Amphetm" for Amphetamine Screen,
Urine), so it is resolved against the patient's own lab labels rather than a vocabulary:
the name, less a plural ``s``, equals the label's first word or starts it (four letters at
least) with its remaining letters in order. Only items whose recorded values are result
words count, so a urine glucose ("Glucose-NEG") is not the serum glucose. The result word
is compared by grade (negative < trace < small < moderate < large, ``lab_categories.yaml``)
in :mod:`.verification.categories`.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.statement_time import stamp_clock
from ehrlib.pipeline.records import Entity, Segment

__all__ = ["LAB_CATEGORY", "categorical_results", "prose_categories", "PROSE_RULE", "grade", "abbreviates"]

#: ``claim.concept`` of the entities this module emits
LAB_CATEGORY = "lab_category"

#: any results-block item ("Hgb-9.8*", "Blood-NEG"): two of them make a line a results record
_BLOCK_ITEM = re.compile(r"(?<![\w\-/.])[A-Za-z][A-Za-z0-9()]*-{1,2}[<>]?[\dA-Za-z]")


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    return load_data("lab_categories.yaml")


@functools.lru_cache(maxsize=1)
def _result_re() -> re.Pattern[str]:
    words = sorted(_data()["grades"], key=len, reverse=True)
    return re.compile(r"(?<![\w\-/.])(?P<name>[A-Za-z][A-Za-z0-9]*)-(?P<word>" + "|".join(words) + r")(?![\w\-])",
                      re.I)


def grade(word: str) -> int | None:
    """The ordinal grade of a result word ("TR" 1, "LG" 4, "POS" -1: positive, ungraded), or of
    a number a categorical item records (0 is negative, above 0 positive); None for others.
    """
    w = str(word or "").strip().upper()
    grades: Mapping[str, int] = _data()["grades"]
    if w in grades:
        return grades[w]
    try:
        return _data()["negative_grade"] if float(w.replace(",", "")) == 0 else -1
    except ValueError:
        return None


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def abbreviates(name: str, label: str) -> int:
    """2 when ``name`` is the label's first word, 1 when it is a short form of it, else 0."""
    n = name.lower()
    first = re.match(r"[a-z]+", (label or "").lower())
    if first is None:
        return 0
    word = first.group(0)
    if n == word or (n.endswith("s") and n[:-1] == word):
        return 2
    stem = n[:-1] if n.endswith("s") and len(n) > 4 else n
    return 1 if len(stem) >= 4 and word.startswith(stem[:4]) and _subsequence(stem, word) else 0


def _categorical(values: Iterable[str]) -> bool:
    return any(grade(v) is not None and re.search(r"[A-Za-z]", str(v)) for v in values)


def _items_for(name: str, labs: Sequence[tuple[ItemRef, str]],
               profile: Callable[[str], Sequence[str]]) -> list[tuple[ItemRef, str]]:
    scored = [(abbreviates(name, it.label or ""), (it, k)) for it, k in labs]
    best = max((s for s, _ in scored), default=0)
    if not best:
        return []
    return [p for s, p in scored if s == best and _categorical(profile(p[1]))]


@functools.lru_cache(maxsize=1)
def _prose_re() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(name then result word: "nitrite neg"; result word then name: "rare yeast")."""
    words = "|".join(sorted(_data()["grades"], key=len, reverse=True))
    before = "|".join(sorted(_data().get("prose", {}).get("before_words", {}), key=len, reverse=True)) or "(?!)"
    name = r"(?P<name>[A-Za-z][A-Za-z]+(?:\s+esterase)?)"
    return (re.compile(r"(?<![\w\-/.])" + name + r"\s*[:=]?\s+(?P<word>" + words + r")\b(?![\w\-])", re.I),
            re.compile(r"(?<![\w\-/.])(?P<word>" + before + r")\s+" + name + r"\b(?![\w\-])", re.I))


def prose_categories(text: str, fluid_at: Callable[[int], str | None]) -> list[tuple[int, int, str, str]]:
    """(start, end, name, result word) of the result words written in prose beside their
    name ("nitrite neg", "rare yeast") where ``fluid_at`` says the words name a specimen
    other than blood; the name is the label word a listed short form stands for.
    """
    prose = _data().get("prose", {})
    out: list[tuple[int, int, str, str]] = []
    after, before = _prose_re()
    for rx, mapped in ((after, False), (before, True)):
        for m in rx.finditer(text):
            if fluid_at(m.start("name")) in (None, "Blood"):
                continue
            word = m.group("word").lower()
            result = prose["before_words"][word] if mapped else word.upper()
            name = prose["names"].get(m.group("name").lower(), m.group("name"))
            if not any(a < m.end() and m.start() < b for a, b, _, _ in out):
                out.append((m.start(), m.end(), name, result))
    return sorted(out)


def categorical_results(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                        profile: Callable[[str], Sequence[str]],
                        taken: Iterable[tuple[int, tuple[int, int] | None]] = (),
                        fluid_at: Callable[[str, int], str | None] | None = None) -> list[Entity]:
    """Entities of the categorical results on the results-record lines of ``seg``, outside
    the (line, span) of entities already extracted; with ``fluid_at`` (the specimen a name
    at a line position names, blood or None without one) also those written in prose in a
    specimen's clause ("UA: nitrite neg, rare yeast").
    """
    used: dict[int, list[tuple[int, int]]] = {}
    for line, span in taken:
        if span is not None:
            used.setdefault(line, []).append(span)
    labs = [(it, k) for it, k in pairs if it.table == "labevents" and it.label]
    if not labs:
        return []
    out: list[Entity] = []
    for i in range(seg.start_line, min(seg.end_line + 1, len(lines))):
        text = lines[i]
        if not text or text.isspace():
            continue  # a blank line holds no result
        hits = [(m.start(), m.end(), m.group("name"), m.group("word").upper()) for m in _result_re().finditer(text)]
        in_prose = not hits or (stamp_clock(text) is None and len(_BLOCK_ITEM.findall(text)) < 2)
        if in_prose:
            if fluid_at is None:
                continue
            hits = prose_categories(text, functools.partial(fluid_at, text))
        for a, b, name, word in hits:
            items = _items_for(name, labs, profile)
            if not items:
                continue
            if any(x < b and a < y for x, y in used.get(i, ())):
                continue
            out.append(Entity(
                entity_id=f"L{i}:{a}", line=i, text=text[a:b] if in_prose else name, kind="finding", segment=seg.index,
                value=word, claim=Claim(concept=LAB_CATEGORY, section=seg.section),
                items=tuple(it for it, _ in items[:3]), item_keys=tuple(k for _, k in items[:3]), time_text=None,
                window=seg.default_window, source="ontology", span=(a, b)))
    return out


PROSE_RULE = Rule("extract.prose_category", "A result word written beside a lab name in a clause whose words name a "
                  "specimen (UA: nitrite neg, rare yeast) is that specimen's categorical result, graded on the "
                  "dipstick and microscopy scale (none < rare < few < moderate < many).", prose_categories,
                  ("finding",))
