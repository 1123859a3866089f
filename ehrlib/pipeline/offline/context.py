"""Context cues in the style of medspaCy's ConText: declarative entries, one small engine.

Each cue set in ``offline_context.yaml`` names its ConText category (negated existence,
possible existence, historical, hypothetical, family), its direction (the cue stands
before or after the statement it modifies) and its scope (the clause-break set of
:mod:`.clauses` that bounds its reach), and lists its terms. The engine compiles a set to
one case-insensitive pattern, ``prefix (?:term|term|...) suffix``, terms in their listed
order; a set may name extra *frames* (another prefix/suffix around the same terms) when
two rules ask about the same words in different positions. Mentions, non-statement
filtering and scope all read their cues here, so a cue word is added in one place.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.clauses import clause_before, mask_parentheticals

__all__ = ["CueSet", "cue_set", "cue", "cue_in_clause_before", "negated_before"]


@dataclass(frozen=True, slots=True)
class CueSet:
    """One cue set of ``offline_context.yaml``, its default frame compiled."""

    name: str
    category: str
    direction: str
    scope: str
    terms: tuple[str, ...]
    pattern: re.Pattern[str]


def _entries() -> dict[str, dict]:
    return load_data("offline_context.yaml")["cues"]


def _compile(prefix: str, terms: tuple[str, ...], suffix: str) -> re.Pattern[str]:
    return re.compile(prefix + "(?:" + "|".join(terms) + ")" + suffix, re.I)


@functools.cache
def cue_set(name: str) -> CueSet:
    """The cue set ``name`` with its default frame compiled."""
    entries = _entries()
    if name not in entries:
        raise ConfigError(f"offline_context.yaml: no cue set {name!r}")
    e = entries[name]
    terms = tuple(str(t) for t in e["terms"])
    return CueSet(name, e["category"], e["direction"], e["scope"], terms,
                  _compile(e.get("prefix", ""), terms, e.get("suffix", "")))


@functools.cache
def cue(name: str, frame: str | None = None) -> re.Pattern[str]:
    """The compiled pattern of cue set ``name`` (``frame``: one of its named extra frames)."""
    cs = cue_set(name)
    if frame is None:
        return cs.pattern
    frames = _entries()[name].get("frames") or {}
    if frame not in frames:
        raise ConfigError(f"offline_context.yaml: cue set {name!r} has no frame {frame!r}")
    f = frames[frame]
    return _compile(f.get("prefix", ""), cs.terms, f.get("suffix", ""))


def cue_in_clause_before(name: str, text: str, pos: int) -> re.Match[str] | None:
    """The first cue of set ``name`` in the clause (the set's scope) that ends at ``pos``;
    a cue inside a closed parenthetical reaches no further than it.
    """
    cs = cue_set(name)
    return cs.pattern.search(mask_parentheticals(clause_before(text, pos, cs.scope)))


def negated_before(prefix: str, after: str = "") -> bool:
    """ConText negation: a negation trigger within the same clause, shortly before the term.

    A trigger separated from the term by a comma negates a list of bare items ("no fever,
    chills") but not an item with a predicate of its own after it (``after`` starting "given",
    "started": "No BM today, senna/colace given"), which opens a new, asserted clause.
    """
    cs = cue_set("negation_before")
    clause = mask_parentheticals(clause_before(prefix, len(prefix), cs.scope))
    m = cs.pattern.search(clause)
    if m is None:
        return False
    return not ("," in clause[m.start():] and after and cue("own_predicate_after").match(after))
