"""A scripted toolset for known-answer tests of the offline verification rules.

Each test states the table rows a patient has (per item key, microbiology timeline,
clinical criteria, lexical matches) and one statement; the rule engine then runs through
these fake tools exactly as through the real ones, and the test checks which rule decided
and with which label.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ehrlib.corpus.records import ItemRef, Note, TimeSpan, ToolCallRecord
from ehrlib.pipeline.claims import claim_for
from ehrlib.pipeline.offline.verification import verify_entity, verify_surface
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv
from ehrlib.tools.result import ToolResult

DAY = "2199-02-03"
#: a progress note's default window: its date ±1 day (core day 02-03)
WINDOW = TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59")
KEY = "chartevents:1"

_ids = iter(range(1, 10**9))


def row(time: str, valuenum: float | None = None, value: Any = None, key: str = KEY, table: str = "chartevents",
        **fields: Any) -> dict[str, Any]:
    """One tool row (``time`` may be a date or a full timestamp)."""
    t = time if len(time) > 10 else f"{time} 08:00:00"
    r = {"table": table, "row_id": next(_ids), "key": key, "time": t, "valuenum": valuenum,
         "value": value if value is not None else (None if valuenum is None else str(valuenum))}
    r.update(fields)
    return r


@dataclass
class Tracer:
    """The calls the fake tools record, read as :class:`ehrlib.tools.tracing.Tracer`'s are."""

    records: list[ToolCallRecord] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.records)

    def since(self, start: int) -> tuple[ToolCallRecord, ...]:
        return tuple(self.records[start:])


@dataclass
class FakeTools:
    """Rows by item key; ``criteria`` state -> (summary, tests); ``micro`` timeline rows;
    ``lexical`` Lexical_Search rows. Tools return every row they hold for an item and let
    the rules keep the window's, as they do with the real tools' widened date ranges."""

    items: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    criteria: Mapping[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]] = field(default_factory=dict)
    micro: Sequence[Mapping[str, Any]] = ()
    lexical: Sequence[Mapping[str, Any]] = ()
    #: rows a whole-stay timeline counts per table; a table left out is one the database lacks
    #: (the call fails). None: timelines carry no counts, as before
    table_rows: Mapping[str, int] | None = None
    tracer: Tracer = field(default_factory=Tracer)
    names: tuple[str, ...] = ("Get_Item_Status_History", "Analyze_Value_Trend", "Get_Clinical_Criterion",
                              "View_General_Timeline", "Lexical_Search")

    def call(self, name: str, args: Mapping[str, Any]) -> ToolResult:
        if name in ("Get_Item_Status_History", "Analyze_Value_Trend"):
            rows = tuple(self.items.get(str(args["item"]), ()))
            summary: Mapping[str, Any] = {}
        elif name == "Get_Clinical_Criterion":
            summary, tests = self.criteria.get(str(args["state"]), ({}, ()))
            rows = tuple(tests)
        elif name == "View_General_Timeline":
            rows, summary = tuple(self.micro), {}
            table = str(args.get("table") or "all")
            if self.table_rows is not None and table not in self.table_rows:
                self.tracer.records.append(ToolCallRecord(name, dict(args), 0))
                return ToolResult(name, dict(args), "", error=f"unknown table {table}")
            if self.table_rows is not None:
                summary = {"counts": {t: n for t, n in self.table_rows.items() if n and table in ("all", t)}}
        else:
            rows, summary = tuple(self.lexical), {}
        self.tracer.records.append(ToolCallRecord(name, dict(args), len(rows)))
        return ToolResult(name, dict(args), "", rows, len(rows), summary)


def entity(text: str, kind: str, *, keys: Sequence[str] = (KEY,), window: TimeSpan | None = WINDOW,
           shown: str | None = None, time_text: str | None = None, span: tuple[int, int] | None = None,
           **attributes: Any) -> Entity:
    """A statement; ``shown`` is its ``Entity.value`` text, ``attributes`` its parsed claim in
    the flat form (``value=20.0``, ``drugs=["heparin"]``: see ``claim_for``)."""
    return Entity(entity_id="e1", line=0, text=text, kind=kind, value=shown, claim=claim_for(kind, **attributes),
                  item_keys=tuple(keys), time_text=time_text, window=window, span=span)


def verify(e: Entity, tools: FakeTools, *, line: str | None = None, note_type: str = "physician",
           surface: bool = False, cache: Sequence[CacheEntry] = (),
           patient_items: Sequence[tuple[ItemRef, str]] = (), charttime: str | None = None) -> Verdict:
    """The verdict of the inspector (or the surface baseline) on one statement of a
    one-line note (``line``, default the entity's text) dated :data:`DAY` (written at
    ``charttime`` when given); ``patient_items`` are the admission's (item, key) pairs."""
    note = Note("n1", 1, 1, note_type, DAY, line if line is not None else e.text, charttime)
    ctx = NoteContext(note, 1, 1, admittime="2199-01-30 10:00:00", dischtime="2199-02-12 10:00:00", chartdate=DAY,
                      patient_items=tuple(it for it, _ in patient_items),
                      patient_item_keys=tuple(k for _, k in patient_items))
    env = StageEnv(toolset=tools)
    return (verify_surface if surface else verify_entity)(ctx, env, e, tuple(cache))


def spanned(line: str, text: str) -> tuple[int, int]:
    """The span of ``text`` in ``line``."""
    i = line.index(text)
    return i, i + len(text)


def assert_decided(v: Verdict, rule_id: str, label: str, kind: str | None = None) -> None:
    assert v.rule_id == rule_id, f"decided by {v.rule_id}, expected {rule_id}: {v.reason}"
    assert v.label == label, f"{rule_id}: {v.label} ({v.reason}), expected {label}"
    if kind is not None:
        assert v.inconsistency_type == kind, f"{rule_id}: {v.inconsistency_type}, expected {kind}"


def assert_outcome(v: Verdict, rule_id: str, label: str, why: str) -> None:
    """``label`` by ``rule_id``; an ``unverified`` outcome names no rule, so its reason must say ``why``."""
    if label == "unverified":
        assert v.label == "unverified" and why in v.reason, f"{v.label} ({v.reason}), expected unverified: {why}"
    else:
        assert_decided(v, rule_id, label)
