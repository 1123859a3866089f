"""Findings that state several charted attributes at once, each read as its own claim.

"R pupil 4mm and non-reactive" states the right pupil's size and its response; MIMIC
charts the two in different items ("Pupil Size Right", "Pupil Response Right"). A finding
concept listed under ``attributes`` in ``finding_states.yaml`` is read as the attribute
values its words contain, each with the body side written before it (or the finding's
own side: "R pupil ...", "pupils ... bilaterally"); a side word right before a later
value starts a new side ("..., L sluggish"). Verification narrows the items to the labels
naming the stated side (:func:`side_of_label`) and compares a number with the charted
numbers, a state word with the charted states.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.datafiles import load_data

__all__ = ["Attribute", "AttributeValue", "attributes_of", "attribute_values", "side_of", "side_of_label",
           "is_number_attribute"]


@dataclass(frozen=True, slots=True)
class Attribute:
    """One attribute of a finding: the concept it is charted under and how notes write its value."""

    concept: str
    pattern: re.Pattern[str]
    number: bool = False


@dataclass(frozen=True, slots=True)
class AttributeValue:
    """An attribute value found in a finding's words (offsets in the scanned text)."""

    attribute: Attribute
    start: int
    end: int
    side: str | None  # right | left | both | None (not stated)
    side_start: int | None  # where a side word written right before the value starts


@functools.cache
def _data() -> Mapping[str, Any]:
    return load_data("finding_states.yaml")


@functools.cache
def _attributes() -> Mapping[str, tuple[Attribute, ...]]:
    raw = _data().get("attributes") or {}
    return {cid: tuple(Attribute(a["concept"], re.compile(a["pattern"], re.I), bool(a.get("number", False)))
                       for a in specs) for cid, specs in raw.items()}


def attributes_of(concept: str) -> tuple[Attribute, ...]:
    """The attributes a finding concept's words may state (empty: an ordinary finding)."""
    return _attributes().get(concept, ())


@functools.cache
def is_number_attribute(concept: str) -> bool:
    """Whether ``concept`` is an attribute compared as a number (pupil size in mm)."""
    return any(a.concept == concept and a.number for specs in _attributes().values() for a in specs)


@functools.cache
def _sides() -> tuple[re.Pattern[str], tuple[tuple[str, re.Pattern[str]], ...]]:
    s = _data()["sides"]
    return re.compile(s["note"], re.I), tuple((k, re.compile(s[k], re.I)) for k in ("right", "left", "both"))


def side_of(word: str) -> str | None:
    """Right | left | both for a side word ("R", "left", "bilaterally"), else None."""
    _, kinds = _sides()
    w = word.strip().rstrip(".").lower()
    return next((k for k, p in kinds if p.search(w)), None)


def _side_in(text: str) -> tuple[str | None, int | None]:
    """The last side word of ``text`` and where it starts."""
    note, _ = _sides()
    found = list(note.finditer(text))
    if not found:
        return None, None
    last = found[-1]
    return side_of(last.group("side")), last.start()


def attribute_values(concept: str, text: str, head_start: int, head_end: int, end: int,
                     lead: int | None = None) -> list[AttributeValue]:
    """The attribute values of a finding whose name is ``text[head_start:head_end]`` and whose
    words run to ``end``: each with its side (a side word right before it, else the last side
    stated so far, else the name's own; a side word right after, "brisk bilaterally", counts
    for a value with none before). ``lead``: where a value written before the name starts
    ("8.0 ETT": a tube's size stands before it as often as after).
    """
    specs = attributes_of(concept)
    if not specs:
        return []
    head_side, _ = _side_in(text[head_start:head_end])
    note, _ = _sides()
    found: list[tuple[int, int, Attribute]] = []
    for a in specs:
        found += [(m.start(), m.end(), a) for m in a.pattern.finditer(text, head_end, end)]
        if lead is not None:
            found += [(m.start(), m.end(), a) for m in a.pattern.finditer(text, lead, head_end)
                      if m.start() < head_start]
    found.sort(key=lambda x: x[0])
    out: list[AttributeValue] = []
    current = head_side
    prev_end = head_end
    for a0, a1, attr in found:
        if any(v.start < a1 and a0 < v.end for v in out):
            continue
        gap = text[prev_end:a0]
        side, at = _side_in(gap[-8:]) if re.search(r"[,;]|\band\b", gap) or prev_end == head_end else (None, None)
        side_start = (a0 - len(gap[-8:]) + at) if at is not None else None
        if side is not None:
            current = side
        elif current is None:
            after = note.match(text, a1 + (len(text[a1:end]) - len(text[a1:end].lstrip())))
            current = side_of(after.group("side")) if after else None
        out.append(AttributeValue(attr, a0, a1, current, side_start))
        prev_end = a1
    return out


def side_of_label(label: str) -> str | None:
    """The body side an item label names ("Pupil Size [Right]", "Pupil Response Left")."""
    m = re.search(r"\b(right|left)\b", label, re.I)
    return m.group(1).lower() if m else None


def narrow_to_side(side: str | None, labels: Sequence[str]) -> list[int]:
    """Indexes of the labels that fit a stated side (all when no side, both sides, or no label names one)."""
    if side not in ("right", "left") or not any(side_of_label(x) for x in labels):
        return list(range(len(labels)))
    return [i for i, x in enumerate(labels) if side_of_label(x) in (side, None)]
