"""Listed surface forms found in a line by one Aho-Corasick pass, not by a regex per position.

The lexicon's families (concept names, capitalised abbreviations, drug names, criterion
words) each used to be one alternation of hundreds of forms, scanned with ``finditer``:
the regex engine tries every branch at every character, about 4 us per character for the
concept family alone, and a line was scanned by several families, several times (each
extraction step, each scanner). Here every family's forms sit in one automaton (pyahocorasick)
keyed on the form *squeezed*: lower case, without white space, colons and hyphens, the
characters a form's word gap may be written with ("Skin: intact", "multi-lumen",
"multilumen"). One pass over the line, squeezed the same way, yields every place where
some form may start; only there is a form's own regex tried.

The result is the alternation's, match for match. A regex match of a form at ``p`` spells
the form's squeezed key at the squeezed position of ``p`` (the gap characters are exactly
those squeezed out, the rest matches letter for letter, ASCII case folded), so the
automaton's starts hold every real one. At a start, the forms found there are tried in the
alternation's own order (longest form first, then alphabetical), each with its own regex
(the alternation's branch with the same boundaries), and the first that matches wins,
which is what the alternation's branch order and backtracking give; ``finditer`` then
resumes at the match's end, as the regex engine does. A line with a non-ASCII character
(where re's Unicode case folds such as "K" for "k" reach beyond ``str.lower``) is scanned
by the alternation itself. ``tests/test_form_scan.py`` checks the equality on real notes.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import ahocorasick

__all__ = ["FormFamily", "FormScanner", "FamilyPattern", "form_regex", "alternation", "squeeze"]

#: what may stand for a space between a form's words: a header colon ("Skin: intact"), any
#: white space or none, or a hyphen ("multi-lumen", "chest-tube")
_GAP = r"(?:(?:\s*:)?\s*|-)"
_BEFORE = r"(?<![A-Za-z0-9])"
_AFTER = r"(?![A-Za-z0-9])"
#: the characters a key keeps: everything but white space, colons and hyphens
_KEPT = re.compile(r"[^\s:\-]+")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
#: distinct lines whose form starts are remembered (both extraction steps and every scanner
#: read the same line: one pass serves them all)
_LINE_MEMO = 2048


def _escaped(form: str) -> str:
    return re.escape(form).replace(r"\ ", _GAP)


def alternation(forms: Iterable[str]) -> str:
    """One regex for a family: its forms longest first, whole words, flexible word gaps;
    no forms: a regex that matches nothing.
    """
    ranked = _ranked(forms)
    if not ranked:
        return "(?!)"
    return _BEFORE + "(?:" + "|".join(_escaped(f) for f in ranked) + ")" + _AFTER


def form_regex(form: str) -> str:
    """The regex of one form: the alternation's branch with the alternation's boundaries."""
    return _BEFORE + "(?:" + _escaped(form) + ")" + _AFTER


def squeeze(text: str) -> str:
    """The automaton's key of a form (or a lower-cased line): gap characters removed."""
    return "".join(_KEPT.findall(text))


def _ranked(forms: Iterable[str]) -> list[str]:
    return sorted(set(forms), key=lambda f: (-len(f), f))


@dataclass(frozen=True, slots=True)
class FormFamily:
    """One family's forms and regex flags (``re.I`` or 0)."""

    name: str
    forms: tuple[str, ...]
    flags: int = 0


class FormScanner:
    """Every family's forms in one automaton; :meth:`family` gives a family's regex-like view."""

    def __init__(self, families: Sequence[FormFamily]) -> None:
        self._families = {f.name: f for f in families}
        self._sources = {f.name: alternation(f.forms) for f in families}
        # compiled when first asked for (a non-ASCII line, an anchored match): 0.09 s a process
        self._alternations: dict[str, re.Pattern[str]] = {}
        self._ranked = {f.name: _ranked(f.forms) for f in families}
        # a family the squeezed keys cannot stand for is scanned by its alternation alone
        self._direct = frozenset(f.name for f in families if not f.forms or any(
            not form.isascii() or not squeeze(form.lower()) or squeeze(form[:1]) != form[:1] for form in f.forms))
        auto = ahocorasick.Automaton()
        keys: dict[str, list[tuple[str, int, str]]] = {}
        for fam in families:
            if fam.name in self._direct:
                continue
            for rank, form in enumerate(self._ranked[fam.name]):
                keys.setdefault(squeeze(form.lower()), []).append((fam.name, rank, form))
        for key, entries in keys.items():
            auto.add_word(key, (len(key), tuple(entries)))
        self._auto = auto
        if keys:
            auto.make_automaton()
        self._regex: dict[tuple[str, str], re.Pattern[str]] = {}
        self.starts = functools.lru_cache(maxsize=_LINE_MEMO)(self._starts)

    def family(self, name: str) -> FamilyPattern:
        """The regex-like view of one family (``finditer``, ``search``, ``match``, ``fullmatch``)."""
        if name not in self._families:
            raise KeyError(name)
        return FamilyPattern(self, name)

    def source(self, name: str) -> str:
        """The family alternation's regex source."""
        return self._sources[name]

    def alternation(self, name: str) -> re.Pattern[str]:
        """The family alternation, compiled."""
        pattern = self._alternations.get(name)
        if pattern is None:
            pattern = self._alternations.setdefault(name, re.compile(self._sources[name], self._families[name].flags))
        return pattern

    def _starts(self, text: str) -> Mapping[str, Mapping[int, tuple[tuple[int, str], ...]]]:
        """Family -> start -> (rank, form) of each form whose key is spelt from there on."""
        chunks = list(_KEPT.finditer(text.lower()))
        squeezed = "".join(m.group(0) for m in chunks)
        offsets: list[int] = []  # squeezed position of each chunk
        at = 0
        for m in chunks:
            offsets.append(at)
            at += m.end() - m.start()
        found: dict[str, dict[int, list[tuple[int, str]]]] = {}
        if not squeezed or not len(self._auto):
            return {}
        for end, (size, entries) in self._auto.iter(squeezed):
            s = end - size + 1
            k = bisect.bisect_right(offsets, s) - 1
            p = chunks[k].start() + (s - offsets[k])
            if p and text[p - 1] in _ALNUM:
                continue  # the forms' left boundary fails: no form starts inside a word
            for fam, rank, form in entries:
                found.setdefault(fam, {}).setdefault(p, []).append((rank, form))
        return {fam: {p: tuple(sorted(c)) for p, c in by.items()} for fam, by in found.items()}

    def _form(self, family: str, form: str) -> re.Pattern[str]:
        pattern = self._regex.get((family, form))
        if pattern is None:  # compiled when first seen at a start, then kept for the process
            pattern = self._regex.setdefault((family, form), re.compile(form_regex(form),
                                                                        self._families[family].flags))
        return pattern

    def match(self, name: str, text: str, pos: int = 0) -> re.Match[str] | None:
        """The family alternation's ``match`` at ``pos``: the first form, in the alternation's
        order, of those the automaton starts there (no alternation compiled for an ASCII text).
        """
        if name in self._direct or not text.isascii():
            return self.alternation(name).match(text, pos)
        for _rank, form in self.starts(text).get(name, {}).get(pos, ()):
            m = self._form(name, form).match(text, pos)
            if m is not None:
                return m
        return None

    def finditer(self, name: str, text: str) -> Iterator[re.Match[str]]:
        """The family alternation's ``finditer`` over ``text``, match for match."""
        if name in self._direct or not text.isascii():
            yield from self.alternation(name).finditer(text)
            return
        by_start = self.starts(text).get(name)
        if not by_start:
            return
        last = 0
        for p in sorted(by_start):
            if p < last:
                continue
            for _rank, form in by_start[p]:
                m = self._form(name, form).match(text, p)
                if m is not None:
                    yield m
                    last = m.end()
                    break


@dataclass(frozen=True, slots=True)
class FamilyPattern:
    """A family's forms as a compiled regex would offer them; the scans go through the automaton."""

    scanner: FormScanner
    name: str

    @property
    def regex(self) -> re.Pattern[str]:
        """The family alternation itself."""
        return self.scanner.alternation(self.name)

    @property
    def pattern(self) -> str:
        """The family alternation's source (for anchored matches elsewhere)."""
        return self.scanner.source(self.name)

    @property
    def flags(self) -> int:
        """The family alternation's flags."""
        return self.regex.flags

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every non-overlapping match, left to right (the alternation's ``finditer``)."""
        return self.scanner.finditer(self.name, text)

    def search(self, text: str) -> re.Match[str] | None:
        """The leftmost match (the alternation's ``search``)."""
        return next(self.scanner.finditer(self.name, text), None)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """A match starting at ``pos`` (the alternation's ``match``)."""
        return self.scanner.match(self.name, text, pos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        """The whole of ``text`` as one form (the alternation's own ``fullmatch``)."""
        return self.regex.fullmatch(text)
