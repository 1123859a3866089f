"""The record every offline rule is: a stable id, the kinds it applies to, its principle.

Rule families (verification and non-statement filtering alike) export their rules as a
sequence of :class:`Rule`; a small engine applies them in order and records the id of the
rule behind every verdict and every dropped mention (``rule_id`` in the output records),
so a reader can go from any prediction to the one-line principle that produced it and to
that rule's known-answer tests.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Rule", "RuleBook"]

# covariant: a rule whose function is a specific ``(Claim) -> Verdict | None`` is a Rule[Check]
F = TypeVar("F", bound=Callable[..., object], covariant=True)


@dataclass(frozen=True, slots=True)
class Rule(Generic[F]):
    """One offline rule.

    ``rule_id`` is stable across releases (``<family>.<name>``, e.g.
    ``numbers.value_in_window``); ``kinds`` are the entity kinds it applies to (empty:
    any); ``principle`` is one sentence saying which general clinical or documentation
    principle it implements — never a corpus or a phrase; ``apply`` is the function the
    engine calls.
    """

    rule_id: str
    principle: str
    apply: F
    kinds: tuple[str, ...] = ()

    def applies_to(self, kind: str) -> bool:
        """Whether the rule applies to entities of ``kind``."""
        return not self.kinds or kind in self.kinds


class RuleBook(Generic[F]):
    """An ordered, id-unique collection of rules (first applicable rule wins when the engine asks for one answer)."""

    def __init__(self, rules: Iterable[Rule[F]]) -> None:
        self._rules = tuple(rules)
        seen: set[str] = set()
        for r in self._rules:
            if r.rule_id in seen:
                raise ValueError(f"duplicate rule id {r.rule_id!r}")
            seen.add(r.rule_id)

    def __iter__(self):
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def for_kind(self, kind: str) -> tuple[Rule[F], ...]:
        """The rules that apply to ``kind``, in order."""
        return tuple(r for r in self._rules if r.applies_to(kind))

    def get(self, rule_id: str) -> Rule[F]:
        """The rule with this id; KeyError otherwise."""
        for r in self._rules:
            if r.rule_id == rule_id:
                return r
        raise KeyError(rule_id)
