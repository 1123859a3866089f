"""Diagnosis rules: a billed ICD code of the admission whose title the statement names.

Note shorthand is rewritten into ICD title wording for the search (``diagnosis_wording.yaml``,
reusing ``abbreviations.yaml``); whether a candidate title is the one the statement names
is the terminology matcher's decision (token sets, synonyms, rapidfuzz; see
:mod:`ehrlib.pipeline.offline.terminology`); a code billed on another admission is not
this one's. Entries of the billing-summary sections are checked against their section's
tables only (``section_tables.yaml``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.concept_fit import names_a_condition, weak_concept
from ehrlib.pipeline.offline.icd_match import (
    ICD_TABLES,
    billed_in_parts,
    billed_titles,
    dictionary_for,
    matching_rows,
    resolve,
    search_queries,
)
from ehrlib.pipeline.offline.procedure_versions import other_version_namesakes
from ehrlib.pipeline.offline.procedures import listed_entries
from ehrlib.pipeline.offline.routing import tables_for_section
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Case, unverified, verdict
from ehrlib.pipeline.records import Entity, Verdict

__all__ = ["RULES", "BILLED_CODE", "SECTION_BILLED", "icd_rewrites", "icd_wording", "billed_match"]


@functools.lru_cache(maxsize=1)
def icd_rewrites() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The ordered shorthand -> ICD wording rewrites of ``diagnosis_wording.yaml``, an
    ``abbreviation`` entry taking its first expansion from ``abbreviations.yaml``.
    """
    abbreviations = load_data("abbreviations.yaml")["abbreviations"]
    folded = {str(k).lower(): v for k, v in reversed(list(abbreviations.items()))}
    out = []
    for entry in load_data("diagnosis_wording.yaml")["rewrites"]:
        if "abbreviation" in entry:
            key = str(entry["abbreviation"])
            expansions = abbreviations.get(key) or folded.get(key.lower())
            if not expansions:
                raise ConfigError(f"ehrlib/data/diagnosis_wording.yaml: {key!r} is not in abbreviations.yaml")
            term, icd = key.lower(), str(expansions[0])
        else:
            term, icd = str(entry["term"]), str(entry["icd"])
        out.append((re.compile(rf"\b{term}\b"), icd))
    return tuple(out)


def icd_wording(text: str) -> str:
    """A statement in ICD title wording ("CHF exacerbation" -> "congestive heart failure exacerbation")."""
    text = text.lower()
    for pattern, icd in icd_rewrites():
        text = pattern.sub(icd, text)
    return text


def _queries(text: str) -> list[str]:
    """Lexical queries for a statement: its ICD wording, then the terminology's forms."""
    out = [icd_wording(text)[:100]]
    for q in search_queries(text, limit=3):
        if q.lower() not in (x.lower() for x in out):
            out.append(q)
    return out[:3]


def stated_phrase(e: Entity) -> str:
    """The phrase a diagnosis claim resolves by: its value, when extraction read the concept
    out of a longer entry ("Atrial fibrillation" of "Atrial fibrillation with rapid
    ventricular response", .diagnosis_parts), else its text. A procedure's value is its
    action ("placed"), never its name.
    """
    return (e.value or e.text) if e.kind == "diagnosis" else e.text


def _lexical_match(c: Case, tables: Sequence[str]) -> Verdict:
    """The billed-code check without a database dictionary (a toolset with no catalogue):
    candidate titles from ``Lexical_Search``, named by the terminology matcher.
    """
    e, s = c.entity, c.session
    rows: list[Mapping[str, Any]] = []
    for q in _queries(stated_phrase(e)):
        res = s.call("Lexical_Search", query=q, k=25)
        rows += [r for r in (res.rows if res else ()) if r.get("table") in tables]
    named = matching_rows(stated_phrase(e), rows, tables)
    if not named:
        return verdict(c, True, "no ICD title matches this statement; not judged", ())
    # has_records is per patient; a code billed on another admission is not this one's
    for r in [r for r in named if r.get("has_records")][:5]:
        got = s.call("Get_Item_Status_History", item=str(r["key"]), time="")
        if got is not None and got.rows:
            return verdict(c, True, f"billed this admission: {got.rows[0].get('label')}", list(got.rows[:1]))
    return verdict(c, False, f"no billed code of this admission matches {e.text!r} (closest title: "
                   f"{named[0]['label']})", (), missing=True)


def billed_match(c: Case, tables: Sequence[str] = ICD_TABLES, phrase: str | None = None) -> Verdict:
    """The billed-code check of a statement (also used for procedures with no bedside record).

    The statement is resolved against the database's whole ICD dictionary and the
    patient's billed codes (:func:`ehrlib.pipeline.offline.icd_match.resolve`); each
    billed code it names, by title or by the ICD hierarchy, is then looked up for this
    admission (``Get_Item_Status_History``: a code billed on another admission is not
    this one's). A resolved concept nothing of this admission matches is missing.
    """
    e, s = c.entity, c.session
    dictionary = dictionary_for(s.tools)
    if dictionary is None:
        return _lexical_match(c, tables)
    res = resolve(phrase or stated_phrase(e), dictionary, billed_titles(s.tools, tables), tables)
    for t in res.candidates[:6]:
        got = s.call("Get_Item_Status_History", item=f"{t.table}:{t.code}", time="")
        if got is not None and got.rows:
            how = "" if t in res.named else f" (same ICD category as {res.concepts[0].title})"
            return verdict(c, True, f"billed this admission: {got.rows[0].get('label')}{how}", list(got.rows[:1]))
    if e.kind == "diagnosis":
        pair = billed_in_parts(phrase or stated_phrase(e), billed_titles(s.tools, tables), tables)
        rows = [got.rows[0] for t in pair
                if (got := s.call("Get_Item_Status_History", item=f"{t.table}:{t.code}", time="")) is not None
                and got.rows]
        if pair and len(rows) == len(pair):
            return verdict(c, True, "billed this admission in parts: " + "; ".join(str(r.get("label")) for r in rows),
                           rows)
    if not res.resolved:
        return verdict(c, True, "no ICD concept matches this statement; not judged", ())
    closest = res.concepts[0].title if res.concepts else res.named[0].title
    if not names_a_condition(res.concepts):
        # "left heel" of "Diabetic foot ulcer, left heel": where or how, its neighbour is the condition
        return verdict(c, True, f"{e.text!r} names a site or qualifier of a condition (as in {closest!r}), "
                       "not a condition of its own; not judged", ())
    for t in res.partial[:4]:
        # "C7 fracture with spinal cord injury" (ICD-9, one code) billed as ICD-10's C7 fracture code
        got = s.call("Get_Item_Status_History", item=f"{t.table}:{t.code}", time="")
        if got is not None and got.rows:
            return unverified(c, f"part of {closest!r} is billed this admission in the other ICD version "
                              f"({got.rows[0].get('label')}); the rest cannot be told apart", list(got.rows[:1]))
    billed = billed_titles(s.tools, tables)
    for t in other_version_namesakes(phrase or stated_phrase(e), res.concepts, billed)[:4]:
        # "IVC filter placement" (ICD-9 "Interruption of the vena cava") billed as ICD-10-PCS
        # "Insertion of Intraluminal Device into Inferior Vena Cava": no procedure crosswalk tells
        got = s.call("Get_Item_Status_History", item=f"{t.table}:{t.code}", time="")
        if got is not None and got.rows:
            return unverified(c, f"{closest!r} is worded in one ICD procedure version; this admission bills "
                              f"the other, whose {got.rows[0].get('label')!r} may be the same procedure",
                              list(got.rows[:1]))
    if weak_concept(res.concepts):
        return unverified(c, f"the closest ICD concept ({closest}) differs from {e.text!r} in words each "
                          "side lacks: what was billed for it cannot be told from the billing")
    return verdict(c, False, f"no billed code of this admission matches {e.text!r} (ICD concept: {closest})", (),
                   missing=True)


def _section_billed(c: Case) -> Verdict | None:
    """A billing-section entry: its section's billed codes first. A listed diagnosis is
    decided there; a listed procedure no billed code names goes on to its bedside rules.
    """
    tables = tables_for_section(c.entity.claim.section) or ICD_TABLES
    v = billed_match(c, tables)
    if v.label == "consistent" and v.evidence_row_ids:
        return v
    entry = listed_entry(c.line() or "", c.entity.span)
    if entry and entry.lower() != c.entity.text.lower() and c.entity.claim.concept != "diagnosis":
        # the name is part of its entry ("EGD with banding of varices"): the entry is billed whole
        # (a listed diagnosis is its entry, or one concept split from it on purpose: .diagnosis_parts)
        whole = billed_match(c, tables, entry)
        if whole.label == "consistent" and whole.evidence_row_ids:
            return whole
    return v if c.entity.kind == "diagnosis" else None


def listed_entry(line: str, span: tuple[int, int] | None) -> str | None:
    """The entry of a listed line holding ``span``: the text between the separators
    (commas, semicolons and sentence ends outside parentheses; a label or bullet dropped:
    :func:`ehrlib.pipeline.offline.procedures.listed_entries`).
    """
    if span is None or not line:
        return None
    for a, b in listed_entries(line):
        if a <= span[0] < b:
            text = re.sub(r"^\s*(?:[-*#•]|\d{1,2}[.)])?\s*", "", line[a:b].split(":", 1)[-1])
            return text.strip(" .") or None
    return None


BILLED_CODE = Rule("diagnoses.billed_code", "A diagnosis resolves to an ICD concept; a billed code naming it, under "
                   "its parent or header without the opposite, or two codes stating its parts confirm it; else it is "
                   "missing, unless it names a site or qualifier or a neighbour or other-version code may be it.",
                   billed_match, ("diagnosis",))
SECTION_BILLED = Rule("diagnoses.section_billed", "An entry of a section that restates the billing (procedures, "
                      "discharge diagnoses) is checked first against the billed codes of that section's tables only; "
                      "a listed procedure no billed code names may still be confirmed by its bedside record.",
                      _section_billed)
RULES = (BILLED_CODE, SECTION_BILLED)
