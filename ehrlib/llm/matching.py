"""Names a model wrote, matched to the valid ones it was offered.

Models reproduce identifiers imperfectly: `chartevent:220045` for `chartevents:220045`,
the bare item id, the item's label, a group name with other spacing or case. Dropping
those silently loses entities; accepting anything invents them. The rule here: an exact
name, else a case/space-insensitive one, else a unique alias (item id, label), else the
nearest valid name by rapidfuzz's normalised similarity when it is at least `cutoff`
(0-100) and no other name ties with it; anything else is dropped. Callers count both.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from rapidfuzz import fuzz, process, utils

__all__ = ["NameMatcher"]


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


class NameMatcher:
    """Match written names to `names`; `aliases` maps other spellings (ids, labels) to a name."""

    def __init__(self, names: Iterable[str], aliases: Mapping[str, str] | None = None, *, cutoff: float = 90.0,
                 fuzzy_pool: Mapping[str, str] | None = None) -> None:
        self.names = list(dict.fromkeys(names))
        # what fuzzy matching compares against (text -> name): the names themselves unless
        # told otherwise (item keys fuzzy-match through their labels: ids must match exactly)
        self._pool = dict(fuzzy_pool) if fuzzy_pool is not None else {n: n for n in self.names}
        self._exact = set(self.names)
        self._folded: dict[str, str | None] = {}
        for name in self.names:
            key = _norm(name)
            self._folded[key] = None if key in self._folded and self._folded[key] != name else name
        for alias, name in (aliases or {}).items():
            key = _norm(alias)
            if key not in self._folded:
                self._folded[key] = name
            elif self._folded[key] != name:
                self._folded[key] = None  # ambiguous alias: never guessed
        self.cutoff = cutoff

    def match(self, written: object) -> tuple[str | None, str]:
        """(valid name or None, how: "exact" | "folded" | "fuzzy" | "none")."""
        text = str(written).strip()
        if text in self._exact:
            return text, "exact"
        folded = self._folded.get(_norm(text))
        if folded is not None:
            return folded, "folded"
        if ":" in text:  # "<table>:<id>" with a misspelt table: the id alone, when unique
            by_id = self._folded.get(_norm(text.rsplit(":", 1)[1]))
            if by_id is not None:
                return by_id, "folded"
        if not text or not self._pool:
            return None, "none"
        texts = list(self._pool)
        best = process.extract(text, texts, scorer=fuzz.ratio, processor=utils.default_process, limit=2)
        if best and best[0][1] >= self.cutoff and (len(best) < 2 or best[1][1] < best[0][1]
                                                   or self._pool[best[1][0]] == self._pool[best[0][0]]):
            return self._pool[best[0][0]], "fuzzy"
        return None, "none"
