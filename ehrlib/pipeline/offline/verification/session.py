"""The working state of one statement under verification, and how rules are applied to it.

A :class:`Case` holds the entity, its note and its tool session (every table read goes
through the patient's toolset, so a verdict carries a tool trace comparable with an
LLM's). Rules are :class:`~ehrlib.pipeline.offline.rule.Rule` records whose ``apply``
takes a claim and returns a verdict, or None to pass: :func:`decide` tries a chain of them
in order and stamps the first verdict with the id of the rule that produced it. A rule may
hand the claim to another chain (a trend statement with a value asks the number rules);
the verdict then keeps the id of the rule that actually decided.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ehrlib.corpus.records import RowRef, TimeSpan, ToolCallRecord
from ehrlib.pipeline.claims import Claim as ClaimRecord
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.deciding import default_deciding
from ehrlib.pipeline.offline.verification.windows import at_discharge, in_window, last_draw, tool_spec
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext

__all__ = ["Session", "Case", "Check", "VerificationRule", "decide", "verdict", "unverified", "evidence",
           "MAX_EVIDENCE"]

MAX_EVIDENCE = 8

Rows = list[Mapping[str, Any]]
C = TypeVar("C", bound=ClaimRecord)


@dataclass
class Session:
    """The tool calls of one entity: results of failed calls read as None."""

    tools: Any
    start: int = 0

    def __post_init__(self) -> None:
        self.start = self.tools.tracer.count if self.tools is not None else 0

    def call(self, name: str, **args: Any) -> Any:
        """Call a tool by name; None when the toolset lacks it."""
        if self.tools is None or name not in self.tools.names:
            return None
        res = self.tools.call(name, args)
        return None if res.error else res

    def rows(self, key: str, window: TimeSpan | None) -> tuple[Rows, Rows]:
        """(rows in the window, rows of the admission) of one item key.

        The admission's rows are fetched only when the window has none (to tell a time
        error from a missing record); otherwise the second list is the first.
        """
        spec = tool_spec(window)
        res = self.call("Get_Item_Status_History", item=key, time=spec)
        got = list(res.rows) if res is not None else []
        inside = [r for r in got if in_window(r, window)]
        if inside or not spec:
            return inside, got if not spec else inside
        res = self.call("Get_Item_Status_History", item=key, time="")
        return inside, list(res.rows) if res is not None else []

    def records(self) -> tuple[ToolCallRecord, ...]:
        """The tool calls made in this session."""
        if self.tools is None:
            return ()
        return self.tools.tracer.since(self.start)


@dataclass
class Case:
    """One entity under verification with its note context and tool session.

    Mutable working state, one per entity: the item rows are fetched once and shared by
    the chain's rules, and a rule may narrow the rows the rules after it look at.
    """

    entity: Entity
    ctx: NoteContext
    session: Session
    #: the validation cache the entity may be answered from (the inspector's m entries)
    cache: Sequence[CacheEntry] = ()
    #: rows the earlier rules of a chain kept as matching what they checked (a medication's
    #: window rows narrowed to those that started in it, then to those at the stated dose)
    narrowed: Rows | None = None
    _item_rows: tuple[Rows, Rows] | None = field(default=None, repr=False)

    def claim_as(self, cls: type[C]) -> C:
        """The entity's parsed claim as ``cls``; when the entity states another shape, an
        empty ``cls()``, whose every field reads "not stated".
        """
        parsed = self.entity.claim
        return parsed if isinstance(parsed, cls) else cls()

    def keys(self) -> list[str]:
        """The entity's aligned item keys."""
        return [k for k in self.entity.item_keys if k]

    def item_rows(self) -> tuple[Rows, Rows]:
        """(rows in the window, rows of the admission) of the entity's first six items,
        fetched once per claim (several rules of a chain read them).
        """
        if self._item_rows is None:
            inside: Rows = []
            every: Rows = []
            for k in self.keys()[:6]:
                a, b = self.session.rows(k, self.entity.window)
                if not a and self.entity.kind == "measurement" and at_discharge(self.entity.time_text):
                    a = last_draw(b, self.entity.window)
                inside += a
                every += b
            self._item_rows = (inside, every)
        return self._item_rows

    def line(self) -> str | None:
        """The note line of the statement (None without a span)."""
        e = self.entity
        lines = getattr(self.ctx, "lines", None) or ()
        return lines[e.line] if e.span is not None and 0 <= e.line < len(lines) else None


Check = Callable[[Case], Verdict | None]
VerificationRule = Rule[Check]


def evidence(rows: Iterable[Mapping[str, Any]], deciding: Iterable[Mapping[str, Any]] = ()) -> tuple[RowRef, ...]:
    """The distinct (table, row id) of the deciding rows, then of the other rows, at most
    :data:`MAX_EVIDENCE` (never fewer than the deciding rows: the cap cuts context only).
    """
    out: list[RowRef] = []
    seen: set[tuple[str, Any]] = set()
    first = _refs(deciding)
    cap = max(MAX_EVIDENCE, len(first))
    for ref in (*first, *_refs(rows)):
        if (ref.table, ref.row_id) in seen:
            continue
        seen.add((ref.table, ref.row_id))
        out.append(ref)
        if len(out) >= cap:
            break
    return tuple(out)


def _refs(rows: Iterable[Mapping[str, Any]]) -> list[RowRef]:
    return [RowRef(str(r.get("table")), r["row_id"]) for r in rows if r.get("row_id") is not None]


def verdict(c: Case, ok: bool | None, reason: str, rows: Iterable[Mapping[str, Any]] = (),
            missing: bool = False, deciding: Iterable[Mapping[str, Any]] | None = None) -> Verdict:
    """A verdict on the claim with the session's tool calls so far; an inconsistency is a
    contradiction unless ``missing``.

    ``deciding`` are the rows that decided it (listed first in the evidence); None lets
    :func:`.deciding.default_deciding` choose among ``rows``. A missing record has none.
    """
    e, s = c.entity, c.session
    cited = list(rows)
    chosen = [] if missing and not ok else list(deciding) if deciding is not None else default_deciding(e, cited)
    ids = tuple(dict.fromkeys(_refs(chosen)))
    ev = evidence(cited, chosen)
    if ok:
        return Verdict(e.entity_id, "consistent", None, reason, ev, s.records(), deciding_row_ids=ids)
    return Verdict(e.entity_id, "inconsistent", "missing" if missing else "contradiction", reason,
                   ev, s.records(), deciding_row_ids=ids)


def unverified(c: Case, reason: str, rows: Iterable[Mapping[str, Any]] = ()) -> Verdict:
    """No verdict: the records cannot support one either way, and ``reason`` says why.

    A rule returns this rather than an alarm when the only way to call the statement wrong
    rests on something the record cannot show (a baseline before the stay, items the
    patient was never charted on): an alarm a reviewer cannot check costs their trust in
    the others, while an unverified line only asks them to look.
    """
    cited = list(rows)
    return Verdict(c.entity.entity_id, "unverified", None, reason, evidence(cited), c.session.records())


def decide(c: Case, chain: Sequence[VerificationRule]) -> Verdict | None:
    """The first verdict of the chain's rules that apply to the entity's kind, stamped with
    the deciding rule's id (a verdict handed over from another chain keeps its own).
    """
    for rule in chain:
        if not rule.applies_to(c.entity.kind):
            continue
        v = rule.apply(c)
        if v is not None:
            return v if v.rule_id else dataclasses.replace(v, rule_id=rule.rule_id)
    return None
