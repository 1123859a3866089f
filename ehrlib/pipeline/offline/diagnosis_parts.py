"""A listed diagnosis that joins several concepts with a connective, read as one claim per concept.

A discharge diagnosis reads "Hematemesis from esophagitis", "Amyloidosis with nephrotic
syndrome", "Sepsis due to cholangitis", "Atrial fibrillation/flutter": each concept is
billed under its own code, and annotators label each as its own statement. So an entry
is cut at its connectives ("from", "due to", "secondary to", "caused by", "with", "w/",
"and", a slash between words) into pieces, and

- when one ICD title states the whole entry (``one_title``: "Esophageal varices with
  bleeding", "Diabetes with ketoacidosis") it stays whole;
- otherwise each piece that names a concept (``names``) is its own claim; a piece that
  names none is a qualifier of the piece before it ("Atrial fibrillation with rapid
  ventricular response" is one claim of atrial fibrillation, its span the whole entry);
- a one-word conjunct after "and" or a slash shares the modifiers of the conjunct before
  it ("atrial fibrillation/flutter": the second claim is "atrial flutter");
- when the first piece names no concept, the entry stays as written if it names one whole
  (the connective may be part of a name the matcher knows); else the pieces after it that
  name concepts are the claims, the unnamed piece none ("Proteus bacteremia and urinary
  tract infection" with no title for the first still states the urinary tract infection).

A claim's resolving phrase is its mention's ``value``; its ``text`` is the span of the note.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from ehrlib.pipeline.offline.mention import Mention

__all__ = ["connective_pieces", "split_compound"]

_CONNECTIVE = re.compile(r"\s+(?P<w>due\s+to|secondary\s+to|caused\s+by|from|with|w/|and)\s+"
                         r"|(?<=[A-Za-z]{3})(?P<s>\s*/\s*)(?=[A-Za-z]{3})", re.I)
#: connectives of a coordination, whose one-word conjunct may share the modifiers before it
_COORDINATION = ("and", "/")


def connective_pieces(text: str) -> list[tuple[int, int, str]]:
    """The pieces of ``text`` between connectives: (start, end, connective before it), the
    first piece's connective empty; blank pieces dropped.
    """
    out: list[tuple[int, int, str]] = []
    pos, joint = 0, ""
    for m in _CONNECTIVE.finditer(text):
        out.append((pos, m.start(), joint))
        pos, joint = m.end(), ("/" if m.group("s") is not None else re.sub(r"\s+", " ", m.group("w").lower()))
    out.append((pos, len(text), joint))
    trimmed = []
    for a, b, j in out:
        piece = text[a:b]
        a2 = a + len(piece) - len(piece.lstrip(" -,"))
        b2 = a + len(piece.rstrip(" -,."))
        if b2 > a2:
            trimmed.append((a2, b2, j))
    return trimmed


def _resolving(text: str, pieces: list[tuple[int, int, str]], k: int, names: Callable[[str], bool]) -> str | None:
    """The phrase piece ``k`` names, or None: the piece, or a one-word conjunct completed
    with the modifiers of the conjunct before it.
    """
    a, b, joint = pieces[k]
    piece = text[a:b]
    if k and joint in _COORDINATION and len(piece.split()) == 1:
        before = text[pieces[k - 1][0]:pieces[k - 1][1]].split()
        if len(before) >= 2:
            shared = " ".join([*before[:-1], piece])
            if names(shared):
                return shared
    return piece if names(piece) else None


def split_compound(m: Mention, names: Callable[[str], bool], one_title: Callable[[str], bool]) -> list[Mention]:
    """The claims of one listed diagnosis ``m`` (see the module docstring); ``[m]`` when it is one."""
    pieces = connective_pieces(m.text)
    if len(pieces) < 2 or one_title(m.text):
        return [m]
    values = [_resolving(m.text, pieces, k, names) for k in range(len(pieces))]
    if values[0] is None and (names(m.text) or all(v is None for v in values)):
        return [m]
    groups: list[tuple[int, int, str]] = []
    for (a, b, _), value in zip(pieces, values, strict=True):
        if value is not None:
            groups.append((a, b, value))
        elif groups:  # a qualifier of the concept before it
            ga, _, gv = groups[-1]
            groups[-1] = (ga, b, gv)
    return [replace(m, start=m.start + a, end=m.start + b, text=m.text[a:b], value=value) for a, b, value in groups]
