"""Cut an overlong text into pieces, so the extractor's cost stays linear in note length.

The extractor reads a paragraph as one text, and many of its steps look at the text
before or after each mention (``text[:start]``, the rest of the line, the clause). That
is fine for a real paragraph (a few hundred characters) but quadratic for a pasted
1 MB line or a 30,000-line hard-wrapped block: each of its thousands of mentions
rescans the whole text. A statement never spans thousands of characters, so a text
longer than :data:`PIECE_CHARS` is read as consecutive pieces, each cut at the last line
start, else sentence end, else space, in its second half. Texts up to that size (every
paragraph of a real note) are untouched.
"""
from __future__ import annotations

import re
from typing import Sequence

__all__ = ["PIECE_CHARS", "piece_spans"]

#: longest text read in one piece (characters)
PIECE_CHARS = 20_000
_SENTENCE_END = re.compile(r"[.;!?]\s")


def _cut(text: str, start: int, end: int, line_starts: Sequence[int]) -> int:
    """Where to end the piece ``text[start:end]``: a break in its second half if there is one."""
    half = start + (end - start) // 2
    at = [s for s in line_starts if half < s < end]
    if at:
        return at[-1]
    last = None
    for last in _SENTENCE_END.finditer(text, half, end):
        pass
    if last is not None:
        return last.end()
    space = text.rfind(" ", half, end)
    return space + 1 if space > 0 else end


def piece_spans(text: str, line_starts: Sequence[int] = (), limit: int = PIECE_CHARS) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` covering ``text`` in order, each at most ``limit`` long;
    ``[(0, len(text))]`` for a text within the limit. ``line_starts``: offsets where a
    source line begins (preferred cuts), ascending."""
    if len(text) <= limit:
        return [(0, len(text))]
    spans, start, k = [], 0, 0
    while len(text) - start > limit:
        while k < len(line_starts) and line_starts[k] <= start:
            k += 1
        j = k
        while j < len(line_starts) and line_starts[j] < start + limit:
            j += 1
        end = _cut(text, start, start + limit, line_starts[k:j])
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    return spans
