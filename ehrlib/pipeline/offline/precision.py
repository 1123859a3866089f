"""Which extracted mentions are statements at all (paper Appendix B.3, "Definition of Entity").

The annotation protocol labels statements that can be checked against the tables; it
does not label the words around them. Real notes are full of such words, and each one
the extractor keeps is a false positive however it is verified:

- a problem-list title ("# Anemia: no overt bleeding", "# Hypotension: likely sedation
  related") names the problem the following text discusses; the statements are in that
  text (a title mention that already carries the body's claim, "# AFib: currently in AF",
  stays); so is a problem named alone on its line ("# Hypotension", "Problem: Hyperkalemia",
  "Anemia.", the nursing care-plan title "Hypotension (not Shock)") outside the
  discharge-diagnosis list; adjectives alone ("Afebrile.") are states;
- a home medication ("holding home lisinopril") is not this stay's order; the problem a
  patient was admitted with ("admitted [**7-7**] with COPD flare and ARF") is history, told
  in the one-liner, not a finding of the stay; "sedated on propofol 30 mcg/kg/min" is the
  propofol statement;
- "code" as a time reference ("asystole during code", "post-code") is not a code status;
  a status word (full, DNR, DNI, CMO) or "code status" makes one, and "code called" is the
  arrest itself;
- an imaging study named as the head of its reading ("CXR: possible atelectasis", "CT
  showed ...") is an imaging interpretation, out of scope, and so is every finding in the
  reading ("EKG: sinus rhythm", "Echo at OSH showed a large effusion");
- a match inside a longer word ("bal" in "balance") is no mention at all;
- "pt" without a number is the patient, not the prothrombin time;
- a generic "transfused" / "transfusion" next to the product that was given ("transfused
  2 units of packed red cells") is the same statement as the product mention;
- the tail of a procedure name split at "with" / "and" ("Bronchoscopy with bronchoalveolar
  lavage") is part of one procedure, one entity;
- a urinary catheter merely present ("foley in place", "via foley") asserts nothing about the
  catheter; only an action (placed, removed, changed) or the urine it drains does;
- a line or tube named as the route or site of something else ("SBP 95-177 via aline",
  "flushes via OGT", "OGT in place") is not a statement about the device ("R IJ TLC
  intact" is: lines are charted with start and end);
- "ERCP consult" is a consult request; "intubated at OSH", "intubated in ED" happened before
  this stay's record (paper §4.3: the ED visit is out of scope);
- a drug class beside the member it means ("Abx changed to daptomycin", "max pressors: levo
  0.8") is the member's statement; a class or procedure used as a time reference ("once off
  pressors he was diuresed", "advance diet after ERCP") asserts nothing; a problem named as
  the indication of a treatment ("vitamin K for his coagulopathy") is not a finding;
- conditions of orders ("if hypotensive again, give IVF"), orders in the imperative
  ("replete lytes prn", "- start heparin") and consultants' opinions or hedged impressions
  ("renal feels AKI is prerenal", "likely pneumonia") are plans and opinions, not facts;
- an oxygen flow stated with its device ("2L NC", "10L face tent") is one statement, the
  device's (the flow mention's value already names it);
- one drug named twice in a row ("regular insulin SSI") and one procedure named twice
  ("intubation and mechanical ventilation") is one entity;
- the allergy list is not part of the hospitalization.

Each rule looks only at the mention and its own clause, so it carries over to unseen notes.
The rules are :class:`~.rule.Rule` records with stable ids (``nonstatement.*``, in
:mod:`.nonstatement_rules`); this module is the engine that applies them in order, first
match wins, and names the rule behind every dropped mention.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ehrlib.corpus.records import ItemRef
from ehrlib.criteria import load_criteria
from ehrlib.db import read_manifest
from ehrlib.pipeline.claims import InterpretationClaim, MedicationClaim
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.nonstatement_rules import ALLERGY_HEAD, NON_STATEMENT_RULES, MentionView, NonStatementRule
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["DroppedMention", "NON_STATEMENT_RULES", "TABLE_ABSENT", "absent_tables", "drop_non_statements",
           "is_allergy_paragraph", "is_drug_class", "non_statement_reason", "non_statement_rule",
           "split_non_statements", "uncheckable"]


@dataclass(frozen=True, slots=True)
class DroppedMention:
    """A candidate mention filtered out as a non-statement, with the rule that dropped it.

    Recorded in each extraction stage's output (``dropped`` in stages.jsonl), positions in
    note line and column; both extraction steps scan the same candidates, so both list the
    same drops.
    """

    line: int
    start: int
    end: int
    text: str
    kind: str
    concept: str
    rule_id: str


def non_statement_rule(m: Mention, text: str, others: Sequence[Mention] = ()) -> NonStatementRule | None:
    """The first rule that finds mention ``m`` (positions in ``text``) no statement, or None."""
    view = MentionView.of(m, text, others)
    for rule in NON_STATEMENT_RULES:
        if rule.applies_to(m.kind) and rule.apply(view):
            return rule
    return None


def non_statement_reason(m: Mention, text: str, others: Sequence[Mention] = ()) -> str | None:
    """The id of the rule that finds ``m`` no statement (``nonstatement.*``), or None when it may be one."""
    rule = non_statement_rule(m, text, others)
    return rule.rule_id if rule is not None else None


def is_allergy_paragraph(lines: Sequence[str], first_line: int) -> bool:
    """The paragraph is (or directly follows) an allergy header: drug names there are reactions."""
    if ALLERGY_HEAD.match(lines[first_line]):
        return True
    # only the line right above counts (a blank line in between ends the header's reach);
    # looking no further keeps a note of many blank lines linear
    j = first_line - 1
    return j >= 0 and bool(lines[j].strip()) and bool(re.match(r"^\s*allerg(?:y|ies)\s*:?\s*$", lines[j], re.I))


def is_drug_class(m: Mention) -> bool:
    """A class word ("abx", "pressors", "IVF"): an entity only when the patient has a member
    item to check it against (protocol: a class maps to a concrete item or is no entity).
    """
    return m.concept == "drug" and isinstance(m.claim, MedicationClaim) and len(m.claim.drugs) > 1


def split_non_statements(text: str, mentions: Sequence[Mention]) -> tuple[list[Mention], list[DroppedMention]]:
    """``mentions`` of one paragraph split into statements and dropped non-statements."""
    kept: list[Mention] = []
    dropped: list[DroppedMention] = []
    for m in mentions:
        rule = non_statement_rule(m, text, mentions)
        if rule is None:
            kept.append(m)
        else:
            dropped.append(DroppedMention(m.line, m.start, m.end, m.text, m.kind, m.concept, rule.rule_id))
    return kept, dropped


def drop_non_statements(text: str, mentions: Sequence[Mention]) -> list[Mention]:
    """``mentions`` of one paragraph without those that are not statements (see module doc)."""
    return split_non_statements(text, mentions)[0]


def absent_tables(con: object) -> frozenset[str]:
    """The tables the database's build manifest lists as missing (logical and physical
    names): a demo may ship without ``chartevents``. Empty without a manifest.
    """
    if con is None:
        return frozenset()
    try:
        tables = read_manifest(con)["tables"]
    except LookupError:
        return frozenset()
    return frozenset(str(n) for t in tables if t.get("status") == "missing"
                     for n in (t.get("logical_name"), t.get("table_name")) if n)


def _natural_tables(m: Mention, items: Sequence[ItemRef], lex: Lexicon) -> set[str]:
    """Where a statement is checked: its items' tables, else its concept's, else (a state)
    the tables its clinical criterion is judged on.
    """
    if items:
        return {it.table for it in items}
    concept = lex.concepts.get(m.concept)
    if concept is not None and concept.tables:
        return set(concept.tables)
    if isinstance(m.claim, InterpretationClaim):
        crit = load_criteria().get(m.claim.criterion)
        if crit is not None:
            return {t.table for t in crit.tests}
        extra = lex.extra_criteria.get(m.claim.criterion) or {}
        judged = lex.concepts.get(str(extra.get("concept", "")))
        return set(judged.tables) if judged is not None else set()
    return set()


def uncheckable(m: Mention, items: Sequence[ItemRef], absent: frozenset[str], lex: Lexicon) -> bool:
    """Whether every table the statement would be checked against is absent from the database."""
    if not absent or m.kind == "diagnosis":
        return False
    tables = _natural_tables(m, items, lex)
    return bool(tables) and tables <= absent


TABLE_ABSENT = Rule("extract.table_absent", "A statement whose natural table (its items', its concept's, or its "
                    "criterion's inputs) is absent from the database cannot be checked there, so it is not an "
                    "entity rather than a missing record.", uncheckable)
