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
from ehrlib.pipeline.offline.statement_time import stamp_clock
from ehrlib.pipeline.records import Entity, Segment

__all__ = ["LAB_CATEGORY", "categorical_results", "grade", "abbreviates"]

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


def categorical_results(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                        profile: Callable[[str], Sequence[str]],
                        taken: Iterable[tuple[int, tuple[int, int] | None]] = ()) -> list[Entity]:
    """Entities of the categorical results on the results-record lines of ``seg``, outside
    the (line, span) of entities already extracted.
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
        hits = list(_result_re().finditer(text))
        if not hits or (stamp_clock(text) is None and len(_BLOCK_ITEM.findall(text)) < 2):
            continue
        for m in hits:
            items = _items_for(m.group("name"), labs, profile)
            if not items:
                continue
            a, b = m.start(), m.end()
            if any(x < b and a < y for x, y in used.get(i, ())):
                continue
            out.append(Entity(
                entity_id=f"L{i}:{a}", line=i, text=m.group("name"), kind="finding", segment=seg.index,
                value=m.group("word").upper(), claim=Claim(concept=LAB_CATEGORY, section=seg.section),
                items=tuple(it for it, _ in items[:3]), item_keys=tuple(k for _, k in items[:3]), time_text=None,
                window=seg.default_window, source="ontology", span=(a, b)))
    return out
