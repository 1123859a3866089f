"""Interpretation qualifiers attached to a stated value ("WBC 16.2 (WNL)", "K 5.9,
hyperkalemic", "Na 128 - hyponatremic", "Cr 2.1 (elevated)").

A qualifier set off right after a value interprets *that value*, not the day: "WBC 10.9
(leukocytosis)" is wrong even when the WBC rose to 12 later that day. Two rule families:

* **Reference words** (WNL, normal, nl, high/elevated, low/decreased) next to a value are
  judged against the adult reference interval of the value's concept
  (``ehrlib/data/offline_normal_ranges.yaml``).
* **Criterion states** (hyperkalemic, thrombocytopenic, hypotensive, febrile...) right
  after a value are judged on that value with the state's own thresholds (the
  Get_Clinical_Criterion tests, or the lexicon's extra states), when the value names an
  item the state is judged on.

Whether the value itself is recorded is the value entity's own check.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ehrlib.criteria import criterion_holds
from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.lexicon import Lexicon

__all__ = ["Qualifier", "reference_qualifier", "attached_value", "normal_range", "qualifier_holds", "state_holds_on"]

#: reference word -> normal | high | low (``verification_terms.yaml``)
_REF_WORDS: Mapping[str, str] = load_data("verification_terms.yaml")["reference_words"]
_REF_AFTER = re.compile(
    r"^\s*\*?\s*(?:[a-zA-Z/%μ]{1,8}\s*)?(?:\(\s*(?P<p>" + "|".join(sorted(_REF_WORDS, key=len, reverse=True))
    + r")\s*\)|[,\-–]\s*(?P<c>wnl|wnls|within normal limits|normal|elevated|high|low)\b"
    r"(?!\s*(?:dose|flow|normal|grade|(?:of\s+|at\s+|to\s+)?[~<>]?\d)))",
    re.I)
#: "<item> <number>" then an opening qualifier mark, ending right where the state word starts
_VALUE_BEFORE = re.compile(
    r"(?P<item>[A-Za-z][A-Za-z ]{0,24}?)\s*[:=]?\s*(?P<num>\d+(?:\.\d+)?)(?:/\d+)?\s*\*?\s*(?:[a-zA-Z/%]{1,6}\s*)?"
    r"(?:\(\s*|,\s*|\s[-–]\s*)$")


@dataclass(frozen=True, slots=True)
class Qualifier:
    """A reference word set off after a value: ``kind`` is normal | high | low."""

    kind: str
    text: str


def reference_qualifier(line: str, end: int) -> Qualifier | None:
    """The reference word right after a value ending at column ``end`` of ``line``."""
    m = _REF_AFTER.match(line[end:end + 40])
    if m is None:
        return None
    word = (m.group("p") or m.group("c")).lower()
    return Qualifier(_REF_WORDS[word], word)


@lru_cache(maxsize=1)
def _ranges() -> Mapping[str, tuple[float, float]]:
    try:
        data = load_data("offline_normal_ranges.yaml")
        return {str(k): (float(v[0]), float(v[1])) for k, v in data["ranges"].items()}
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"cannot read ehrlib/data/offline_normal_ranges.yaml: {exc}") from None


def normal_range(concept: str, value: float) -> tuple[float, float] | None:
    """The adult reference interval of a concept (temperature by the value's unit)."""
    if concept == "temperature":
        concept = "temperature_c" if value < 50 else "temperature_f"
    return _ranges().get(concept)


def qualifier_holds(q: Qualifier, concept: str, value: float) -> bool | None:
    """Whether the stated value meets its reference word; None when the concept has no range."""
    rng = normal_range(concept, value)
    if rng is None:
        return None
    lo, hi = rng
    return {"normal": lo <= value <= hi, "high": value > hi, "low": value < lo}[q.kind]


def attached_value(line: str, start: int, lex: Lexicon) -> tuple[str, float] | None:
    """(concept, value) of the "<item> <number>" a state word at column ``start`` qualifies
    ("K 5.9, hyperkalemic" -> ("potassium", 5.9)); None when the word stands alone.
    """
    m = _VALUE_BEFORE.search(line[max(0, start - 45):start])
    if m is None:
        return None
    words = m.group("item").strip().split()
    for i in range(len(words)):
        concept = lex.concept_for(" ".join(words[i:]))
        if concept is not None:
            return concept.cid, float(m.group("num"))
    return None


def state_holds_on(value: float, concept_items: re.Pattern[str] | None, tests: Sequence[Mapping[str, Any]]
                   ) -> bool | None:
    """Whether a criterion's tests hold on one value, using only the tests whose items are
    the value's concept (a hypotension test on SBP never judges a heart rate); None when
    no test is about that concept.
    """
    applicable = []
    for t in tests:
        labels = [str(i.get("label") or "") for i in (t.get("items") or [])]
        if concept_items is not None and any(concept_items.search(lb) for lb in labels):
            applicable.append(t)
    if not applicable:
        return None
    thr_ok = [t for t in applicable if 0.5 <= abs(float(t["threshold"])) / max(abs(value), 1e-9) <= 2]
    if not thr_ok:
        return None
    return any(criterion_holds(str(t["operator"]), value, float(t["threshold"])) for t in thr_ok)
