"""Which aligned event statements the database can check at all.

A "no record" verdict is evidence only when the record could have been there. Three
cases where it could not, each a :class:`~.rule.Rule` with a stable ``checkable.*`` id
applied after alignment (extraction stages 3-4, recorded with the dropped mentions):

- the phrase resolved to no item, neither the patient's nor the catalogue's: an
  unresolved phrase ("A&Ox3", "AF") says nothing about the tables;
- every item it resolved to lives in a table this admission has no rows in at all: the
  database does not record that kind of event for this admission's source system
  (procedure events exist only for MetaVision stays; a build may lack a table, as the
  MIMIC-IV demo lacks chartevents);
- the event is an order or a request ("CXR ordered", "TTE requested"), not a done event;
- a procedure noun is named as a time ("post-intubation ABG", "prior to extubation");
- a finding only the catalogue names (the patient has no item of it): an observation
  nobody charted is no evidence of absence;
- a negated procedure followed by a result noun ("no ECG changes"): the result is
  denied, not the procedure.

Only the event kinds (procedures, findings, outputs, generic events) are filtered by the
first rules: a lab or a culture has tables every admission records, so its absence is
evidence. A drug is too when one of its items is an order (prescriptions) or lives in a table the
admission records; a drug known only as the other source system's input item ("free
water" as a CareVue item in a stay charted in MetaVision) is as uncheckable as such an
event.
A discharge summary's procedures are the billed ones, which every admission records, so
the last two rules leave them to the billed-code check.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.rule import Rule, RuleBook

__all__ = ["CheckView", "CHECKABLE_RULES", "EVENT_KINDS", "not_checkable"]

#: kinds whose absence the events chain would report: only these are filtered here
EVENT_KINDS = ("procedure", "finding", "event", "output")


@dataclass(frozen=True, slots=True)
class CheckView:
    """What the checkability rules see: the mention, its aligned items, the tables the
    admission has rows in, and the text after the mention up to its clause end.
    """

    mention: Mention
    items: tuple[ItemRef, ...]
    recorded_tables: frozenset[str]
    after: str
    step: str
    #: the statement may be judged on the billed procedure codes (a discharge summary's procedure)
    billed: bool = False
    #: the text before the mention, from its clause start
    before: str = ""


def _order_words() -> re.Pattern[str]:
    words = load_data("verification_terms.yaml")["event_orders"]
    return re.compile(r"^[\s,:`]*(?:(?:was|were|is|has\s+been|been)\s+)?(?:" + "|".join(words) + r")\b", re.I)


_ORDER = _order_words()
_TIME_REFERENCE = re.compile(r"(?:^|\b)(?:" + "|".join(load_data("verification_terms.yaml")["event_time_references"])
                             + r")\s*$", re.I)


def _unresolved(v: CheckView) -> bool:
    return v.step == "ontology" and not v.items and not v.billed


def _table_not_recorded(v: CheckView) -> bool:
    return bool(v.items) and not v.billed and not any(it.table in v.recorded_tables for it in v.items)


def _other_system_only(v: CheckView) -> bool:
    """Every item lives in a table this admission has no rows in, while it has rows in that
    table's sibling of the other source system (``inputevents_cv`` for ``inputevents_mv``):
    the admission charts such events, only not in the system the items belong to.
    """
    def sibling(table: str) -> bool:
        head = table.rsplit("_", 1)[0]
        return "_" in table and any(t != table and t.rsplit("_", 1)[0] == head for t in v.recorded_tables)
    return _table_not_recorded(v) and all(sibling(it.table) for it in v.items)


def _finding_not_charted(v: CheckView) -> bool:
    """A finding only the catalogue names: the patient has no item of it at all."""
    return v.mention.kind == "finding" and v.step == "ontology" and bool(v.items) and not v.billed


_RESULT = re.compile(r"^\s*(?:" + "|".join(load_data("verification_terms.yaml")["event_result_nouns"]) + r")\b", re.I)


def _negated_result(v: CheckView) -> bool:
    """"no ECG changes": the negation is of the procedure's result, not of the procedure."""
    return bool(getattr(v.mention.claim, "negated", False)) and bool(_RESULT.match(v.after))


def _ordered(v: CheckView) -> bool:
    return v.mention.kind in ("procedure", "event") and bool(_ORDER.match(v.after))


def _time_reference(v: CheckView) -> bool:
    """A procedure noun after a temporal preposition; a verb form ("was intubated") is a claim."""
    return not re.search(r"ed$", v.mention.text.strip(), re.I) and bool(_TIME_REFERENCE.search(v.before))


CHECKABLE_RULES: RuleBook[Callable[[CheckView], bool]] = RuleBook([
    Rule("checkable.ordered_not_done", "An event stated as ordered or requested is a plan, not a done event, so no "
         "record of it is expected yet.", _ordered, EVENT_KINDS),
    Rule("checkable.time_reference", "A procedure named as the time of something else (post-intubation, prior to "
         "extubation) is a time reference and claims nothing of its own.", _time_reference, ("procedure",)),
    Rule("checkable.unresolved_phrase", "A phrase that resolves to no item of the patient or of the catalogue is "
         "not checkable; an unresolved phrase is no evidence of absence.", _unresolved, EVENT_KINDS),
    Rule("checkable.drug_table_not_recorded", "A drug whose items all live in tables the admission has no rows "
         "in while it charts their other source system's table is not checkable: no record of it is no evidence.",
         _other_system_only, ("medication", "infusion")),
    Rule("checkable.table_not_recorded", "An event whose items all live in a table the admission has no rows in "
         "(another source system's table, or one the build lacks) is not checkable.", _table_not_recorded,
         EVENT_KINDS),
    Rule("checkable.finding_not_charted", "A finding with no item in the patient's own dictionaries (only the "
         "catalogue names it) is not checkable: an observation nobody charted is no evidence of absence.",
         _finding_not_charted, ("finding",)),
    Rule("checkable.negated_result", "A negated procedure followed by a result noun (no ECG changes, no CT evidence "
         "of bleed) denies a result of the procedure, not the procedure; the tables hold no such result.",
         _negated_result, ("procedure", "event")),
])


def not_checkable(m: Mention, items: Iterable[ItemRef], recorded_tables: frozenset[str], after: str,
                  step: str, note_type: str = "", before: str = "") -> str | None:
    """The id of the first rule finding the aligned mention uncheckable, or None."""
    billed = m.kind == "procedure" and note_type == "discharge_summary"
    view = CheckView(m, tuple(items), recorded_tables, after[:40], step, billed, before[-30:])
    for rule in CHECKABLE_RULES:
        if rule.applies_to(m.kind) and rule.apply(view):
            return rule.rule_id
    return None
