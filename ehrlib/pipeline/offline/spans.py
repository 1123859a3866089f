"""One span arbitration over every vocabulary at once: longest match, no overlaps.

A note names things with overlapping words: "calcium carbonate 500 mg" holds the lab name
"calcium", "potassium chloride 20 mEq" holds "potassium", "magnesium oxide" holds
"magnesium". Matching each vocabulary on its own and letting the first family that fires
win reads the dose as a serum level. Here all vocabularies (labs, drugs, procedures,
findings...) are matched together on word tokens and the matches are arbitrated once:
the longest span wins, ties go to the vocabulary the caller ranks first and then to the
earlier start, and no two kept spans overlap. This is the EntityRuler/longest-match
policy of spaCy and medspaCy's TargetMatcher, without the spaCy dependency.

Short abbreviations with a capital (``K``, ``Mg``, ``BE``) match as written or in
capitals, so ``k`` in prose, the unit ``mg`` or the word ``be`` are not analytes; every
other term matches case-insensitively.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Span", "arbitrate", "VocabularyMatcher"]

_TOKEN = re.compile(r"[A-Za-z0-9]+\+*|[^\sA-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class Span:
    """A vocabulary match: ``key`` is the vocabulary's concept id, ``term`` the listed
    surface form that matched, ``text`` the note's own characters.
    """

    start: int
    end: int
    vocabulary: str
    key: str
    term: str
    text: str


def arbitrate(spans: Iterable[Span], rank: Sequence[str] = ()) -> list[Span]:
    """Keep the longest non-overlapping spans, in text order.

    Longer spans win; equal lengths go to the vocabulary earlier in ``rank`` (unranked
    vocabularies after ranked ones), then to the earlier start. Greedy selection in that
    order is the standard longest-match policy: a span is dropped only when a longer (or
    preferred) span already covers part of it.
    """
    order = {v: i for i, v in enumerate(rank)}
    chosen: list[Span] = []  # non-overlapping, so ordered by start and by end at once
    starts: list[int] = []
    for s in sorted(spans, key=lambda s: (-(s.end - s.start), order.get(s.vocabulary, len(order)), s.start)):
        i = bisect.bisect_right(starts, s.start)
        if (i == 0 or chosen[i - 1].end <= s.start) and (i == len(chosen) or s.end <= chosen[i].start):
            chosen.insert(i, s)
            starts.insert(i, s.start)
    return chosen


def _norm(token: str) -> str:
    """Token key: lower case, an ion's charge dropped ("K+" and "Mg++" match "K", "Mg")."""
    return token.lower().rstrip("+") or token


def _case_sensitive(term: str) -> bool:
    letters = re.sub(r"[^A-Za-z]", "", term)
    return 0 < len(letters) <= 3 and not letters.islower()


def _same_case(surface: str, term: str) -> bool:
    s, t = re.sub(r"[\s+]+", "", surface), re.sub(r"[\s+]+", "", term)
    return s == t or s == t.upper()


class VocabularyMatcher:
    """All terms of several vocabularies in one token trie.

    ``vocabularies`` maps a vocabulary name to ``{key: [terms...]}``. :meth:`candidates`
    returns every match (overlapping); :meth:`find` the arbitrated ones.
    """

    def __init__(self, vocabularies: Mapping[str, Mapping[str, Iterable[str]]], rank: Sequence[str] = ()) -> None:
        self._rank = tuple(rank) or tuple(vocabularies)
        self._trie: dict = {}
        for vocab, entries in vocabularies.items():
            for key, terms in entries.items():
                for term in terms:
                    toks = [_norm(t) for t in _TOKEN.findall(term)]
                    if not toks:
                        continue
                    node = self._trie
                    for t in toks:
                        node = node.setdefault(t, {})
                    node.setdefault(None, []).append((vocab, key, term, _case_sensitive(term)))

    def candidates(self, text: str) -> list[Span]:
        """Every vocabulary span found in ``text``, overlapping ones included."""
        toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        out: list[Span] = []
        for i in range(len(toks)):
            node = self._trie
            for j in range(i, len(toks)):
                nxt = node.get(_norm(toks[j][0]))
                if nxt is None:
                    break
                node = nxt
                for vocab, key, term, cased in node.get(None, ()):
                    start, end = toks[i][1], toks[j][2]
                    surface = text[start:end]
                    if cased and not _same_case(surface, term):
                        continue
                    out.append(Span(start, end, vocab, key, term, surface))
        return out

    def find(self, text: str) -> list[Span]:
        """The spans left after arbitration (longest match, no overlaps)."""
        return arbitrate(self.candidates(text), self._rank)
