"""Tokens and BIO tags of a note line, from gold spans and back.

Gold labels name an entity by its text and its line (no character offsets), so a span is
found by searching the entity's text in its line. Tags are per token: ``B`` opens an
entity, ``I`` continues it, ``O`` is outside. BIO cannot hold overlapping spans: of two
overlapping gold entities on a line the earlier (then the longer) one is kept.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Token", "Span", "TAGS", "tokenize", "locate_spans", "spans_to_tags", "tags_to_spans"]

TAGS: tuple[str, ...] = ("B", "I", "O")
#: a word (letters, digits, underscore) or one other non-space character
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Token:
    """A token of a line: its text and character offsets in that line."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Span:
    """An entity on a line: character offsets [start, end) and the text they cover."""

    line: int
    start: int
    end: int
    text: str


def tokenize(line: str) -> tuple[Token, ...]:
    """The line's tokens, in order."""
    return tuple(Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(line))


def locate_spans(line_no: int, line: str, entities: Iterable[str]) -> tuple[list[Span], list[str]]:
    """Gold entity texts of one line -> non-overlapping spans, and the texts not found.

    Each entity takes its first case-insensitive occurrence not taken by an earlier one,
    so "K 3.4 ... K 3.9" with two gold "K" entities gives two spans.
    """
    low = line.lower()
    found: list[Span] = []
    missing: list[str] = []
    for text in entities:
        needle = text.strip().lower()
        if not needle:
            continue
        at = low.find(needle)
        while at >= 0 and any(s.start == at and s.end == at + len(needle) for s in found):
            at = low.find(needle, at + 1)
        if at < 0:
            missing.append(text)
            continue
        found.append(Span(line_no, at, at + len(needle), line[at:at + len(needle)]))
    kept: list[Span] = []
    for s in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if all(s.end <= k.start or s.start >= k.end for k in kept):
            kept.append(s)
    return kept, missing


def spans_to_tags(tokens: Sequence[Token], spans: Iterable[Span]) -> list[str]:
    """BIO tags for ``tokens``: a token overlapping a span is inside it."""
    tags = ["O"] * len(tokens)
    for s in spans:
        inside = [i for i, t in enumerate(tokens) if t.start < s.end and s.start < t.end]
        for k, i in enumerate(inside):
            tags[i] = "B" if k == 0 else "I"
    return tags


def tags_to_spans(line_no: int, line: str, tokens: Sequence[Token], tags: Sequence[str]) -> list[Span]:
    """Spans of a tagged line; an ``I`` with nothing open opens a span (a tagger's slip)."""
    spans: list[Span] = []
    start: int | None = None
    end = 0
    for tok, tag in zip(tokens, tags, strict=True):
        if tag == "B" or (tag == "I" and start is None):
            if start is not None:
                spans.append(Span(line_no, start, end, line[start:end]))
            start, end = tok.start, tok.end
        elif tag == "I":
            end = tok.end
        elif start is not None:
            spans.append(Span(line_no, start, end, line[start:end]))
            start = None
    if start is not None:
        spans.append(Span(line_no, start, end, line[start:end]))
    return spans
