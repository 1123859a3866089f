"""Diagnosis and procedure statements against ICD titles, through the tools' item rows.

The billed-code check of a statement has two questions, both answered with the
terminology matcher of :mod:`.terminology` over item rows the tools return (``table``,
``key``, ``label``): *which of the patient's billed codes does the statement name?*
(rows of ``Analyze_Category_Trend`` over ``diagnoses_icd`` / ``procedures_icd``, patient
only) and, when none, *is the statement a codable diagnosis at all?* (rows of
``Lexical_Search`` over the whole dictionary, queried with the statement in ICD wording).
A statement no ICD title matches is not judged; one that matches titles but none of the
admission's billed codes is inconsistent.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ehrlib.pipeline.offline.terminology import Terminology, Title, search_forms

__all__ = ["matching_rows", "search_queries", "ICD_TABLES"]

ICD_TABLES = ("diagnoses_icd", "procedures_icd")


def matching_rows(phrase: str, rows: Iterable[Mapping[str, Any]], tables: Sequence[str] = ICD_TABLES,
                  threshold: float = 90.0) -> list[Mapping[str, Any]]:
    """The ``rows`` (item rows with ``table``/``key``/``label``) whose ICD title the
    statement ``phrase`` names, best match first; rows of other tables are ignored.
    """
    by_key: dict[str, Mapping[str, Any]] = {}
    titles = []
    for r in rows:
        if r.get("table") in tables and r.get("key") and r.get("label"):
            key = str(r["key"])
            by_key.setdefault(key, r)
            titles.append(Title(str(r["table"]), key, str(r["label"])))
    if not titles:
        return []
    found = Terminology(titles).match(phrase, tables=tables, threshold=threshold, limit=len(titles))
    return [by_key[m.code] for m in found]


def search_queries(phrase: str, limit: int = 2) -> list[str]:
    """Lexical queries for a statement: as written, then in ICD wording (synonyms and
    abbreviations rewritten), without duplicates.
    """
    out: list[str] = []
    for q in [phrase.strip(), *search_forms(phrase)]:
        q = q[:100]
        if q and q.lower() not in (x.lower() for x in out):
            out.append(q)
    return out[:limit]
