"""Diagnosis and procedure statements resolved against the whole ICD dictionary, then the billing.

A statement is first resolved as a *concept*: the titles of the database's whole ICD
dictionary (``d_icd_diagnoses`` / ``d_icd_procedures``, ICD-9 and ICD-10 alike) it names,
through the terminology matcher of :mod:`.terminology` (normaliser, shipped synonyms,
qualifiers that decide between close titles). Then the admission's billing decides:

- a billed code whose title the statement names, or a billed code in the same place of
  the ICD hierarchy as the resolved concept (:func:`icd_parent`: the code one level up,
  "584.9" and "584.5" are both "584 Acute kidney failure") whose title does not state the
  opposite of the statement, is the statement's code, and so is a billed diagnosis code
  that is the concept's code in the other ICD version (:mod:`.icd_versions`, the GEMs);
- a concept the dictionary names but nothing billed matches is a missing code;
- a phrase no dictionary title names is no diagnosis statement at all (no prediction).

The dictionary index is built once per database from the tools' item catalogue.
"""
from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.disk_cache import cached_value, code_digest, long_lived, source_files
from ehrlib.pipeline.offline import terminology
from ehrlib.pipeline.offline.icd_versions import counterparts, partial_counterparts
from ehrlib.pipeline.offline.terminology import (
    Terminology,
    TermMatch,
    Title,
    TitleTokens,
    contradicts,
    normalise,
    phrase_forms,
    qualifier_words,
    search_forms,
    tokenise_titles,
)
from ehrlib.tools.lexical import builder_digest

__all__ = ["matching_rows", "search_queries", "ICD_TABLES", "icd_parent", "Resolution", "resolve",
           "dictionary_for", "billed_titles", "names_icd_concept", "names_icd_concept_strictly", "NO_CONCEPT_RULE",
           "one_title_states", "parenthesised_aliases", "billed_in_parts", "names_icd_concept_closely"]

ICD_TABLES = ("diagnoses_icd", "procedures_icd")
#: the terminology score a billed title needs (the whole dictionary keeps the matcher's 90)
BILLED_THRESHOLD = 80.0


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


def icd_parent(table: str, code: str) -> str:
    """The code one level up the ICD hierarchy: a diagnosis code without its last
    character, never shorter than its three-character category ("5849" -> "584",
    "K7200" -> "K720", "486" -> "486"); an ICD-9 procedure's three-digit subcategory
    ("3961" -> "396"); an ICD-10-PCS code's section, body system and root operation
    ("02100Z9" -> "021", bypass in the heart and great vessels).
    """
    code = code.replace(".", "").strip().upper()
    if table == "procedures_icd":
        return code[:3]
    return code[:max(3, len(code) - 1)]


@dataclass(frozen=True, slots=True)
class Resolution:
    """A statement resolved: the dictionary concepts it names (best first), and the
    patient's billed codes that are its code, by title (``named``) or by hierarchy.
    """

    concepts: tuple[TermMatch, ...]
    named: tuple[Title, ...]
    related: tuple[Title, ...]
    #: billed codes of the other ICD version stating one part of the concept (a combination)
    partial: tuple[Title, ...] = ()

    @property
    def candidates(self) -> tuple[Title, ...]:
        """Billed codes to confirm for the admission, title matches first."""
        seen = {t.code for t in self.named}
        return self.named + tuple(t for t in self.related if t.code not in seen)

    @property
    def resolved(self) -> bool:
        """Whether the statement names any ICD concept at all."""
        return bool(self.concepts or self.named)


_ALIAS = re.compile(r"\(([^()]*[A-Za-z]{3}[^()]*)\)")


def parenthesised_aliases(phrase: str) -> tuple[str, ...]:
    """The parenthesised asides of a name that may be its alias ("Acute liver injury (shock
    liver)", "Hemodialysis (CRRT)"): each a synonym of the head term, resolved alongside it.
    """
    return tuple(m.group(1).strip() for m in _ALIAS.finditer(phrase))


@functools.lru_cache(maxsize=256)
def _billed_index(billed: tuple[Title, ...]) -> Terminology:
    # a patient's billed codes are indexed once, not once per phrase resolved against them
    # (a Terminology's own memos only ever hold what it would compute again)
    return Terminology(billed)


def resolve(phrase: str, dictionary: Terminology | None, billed: Sequence[Title],
            tables: Sequence[str] = ICD_TABLES, limit: int = 8) -> Resolution:
    """Resolve ``phrase`` against the dictionary and the patient's ``billed`` codes.

    The concepts that decide the hierarchy are those as well covered as the best one
    (a tie of "Esophageal varices with bleeding" across ICD-9 and ICD-10 keeps both).
    """
    billed = [t for t in billed if t.table in tables]
    named: tuple[Title, ...] = ()
    aliases = parenthesised_aliases(phrase)
    if billed:
        by_code = {t.code: t for t in billed}
        index = _billed_index(tuple(billed))
        # the few codes billed for the patient tolerate a looser wording than the whole dictionary;
        # a parenthesised alias names the same condition ("Acute liver injury (shock liver)")
        codes = dict.fromkeys(m.code for p in (phrase, *aliases)
                              for m in index.match(p, tables=tables, threshold=BILLED_THRESHOLD, limit=len(billed)))
        named = tuple(by_code[c] for c in codes)
    concepts: tuple[TermMatch, ...] = ()
    if dictionary is not None:
        concepts = tuple(dictionary.match(phrase, tables=tables, limit=limit))
        for alias in aliases:
            if concepts:
                break
            concepts = tuple(dictionary.match(alias, tables=tables, limit=limit))
    related: list[Title] = []
    if concepts and billed:
        top = [m for m in concepts if (m.stated, m.coverage) >= (concepts[0].stated, concepts[0].coverage)]
        parents = {(m.table, icd_parent(m.table, m.code)) for m in top}
        headers = {(m.table, _bare(m.code)) for m in top}
        forms = phrase_forms(normalise(phrase))
        words = {w for m in top for w in normalise(m.title)} - qualifier_words()
        # a sibling under the same parent is the same condition told in more detail only when it
        # shares the concept's words ("584.5 Acute kidney failure with tubular necrosis" for AKI;
        # "572.3 Portal hypertension" is not "572.2 Hepatic encephalopathy") and states no opposite;
        # so is a code under the concept when the concept is a category header ("I26 Pulmonary
        # embolism" billed as "I26.02 Saddle embolus of pulmonary artery ...")
        related = [t for t in billed if ((t.table, icd_parent(t.table, t.code)) in parents
                                         or _under(t, headers))
                   and words & set(normalise(t.title)) and not contradicts(forms, t.title)]
        # the concept's code in the other ICD version (GEMs): the same condition in other words
        # ("Crohn's disease, unspecified" billed as "Regional enteritis of unspecified site")
        bridged = {c for m in top if m.table == "diagnoses_icd" for c in counterparts(m.code)}
        related += [t for t in billed if t.table == "diagnoses_icd" and t.code.replace(".", "").upper() in bridged
                    and t not in related and not contradicts(forms, t.title)]
        parts = {c for m in top if m.table == "diagnoses_icd" for c in partial_counterparts(m.code)}
        partial = tuple(t for t in billed if t.table == "diagnoses_icd" and _bare(t.code) in parts
                        and t not in related and not contradicts(forms, t.title))
        return Resolution(concepts, named, tuple(related), partial)
    return Resolution(concepts, named, tuple(related))


def _bare(code: str) -> str:
    return code.replace(".", "").strip().upper()


def _under(t: Title, headers: set[tuple[str, str]]) -> bool:
    """Whether a diagnosis code sits below one of the ``headers`` (table, code) in the ICD
    hierarchy: the header's code is a proper prefix of its code.
    """
    code = _bare(t.code)
    return t.table == "diagnoses_icd" and any(
        table == t.table and len(h) >= 3 and code != h and code.startswith(h) for table, h in headers)


_DICTIONARIES: dict[Any, Terminology] = {}
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _digest() -> str:
    """The dictionary cache's builder: this module, the tokeniser and its vocabulary, the catalog's builder."""
    return builder_digest() + code_digest(*source_files(
        sys.modules[__name__], terminology, data=("terminology_synonyms.yaml", "diagnosis_wording.yaml",
                                                  "abbreviations.yaml")))


def _title_tokens(value: Any) -> list[TitleTokens]:
    if not isinstance(value, list) or not all(isinstance(r, tuple) and len(r) == 5 for r in value[:1]):
        raise TypeError("not a tokenised dictionary")
    return value


def dictionary_for(tools: Any) -> Terminology | None:
    """The ICD dictionary of the toolset's database (every diagnosis and procedure title
    of its catalogue), built once per database; None without a database behind the tools.
    """
    env = getattr(tools, "env", None)
    if env is None or getattr(env, "con", None) is None:
        return None
    identity = getattr(env, "identity", None)
    flavor = getattr(getattr(env, "schema", None), "flavor", None)
    key = (identity, flavor)
    with _LOCK:
        term = _DICTIONARIES.get(key)
        if term is None:
            catalog = env.catalog
            # tokenising ~20,000 titles (MIMIC-III; 195,000 in MIMIC-IV) costs more than reading
            # them back, so the tokens are kept in the database's disk cache
            rows = cached_value(env.con, identity[0] if identity else "", f"icd-dictionary-{flavor}", _digest(),
                                lambda: tokenise_titles(Title(i.table, str(i.value), i.label) for i in catalog.items
                                                        if i.table in ICD_TABLES and i.label),
                                list, _title_tokens)
            with long_lived():           # its index: ~20,000 titles' token sets, kept for the process
                term = Terminology.from_tokens(rows)
            if len(_DICTIONARIES) > 8:
                _DICTIONARIES.clear()
            _DICTIONARIES[key] = term
        return term


def billed_titles(tools: Any, tables: Sequence[str] = ICD_TABLES) -> list[Title]:
    """The ICD codes billed for the toolset's patient (any admission), with their titles."""
    env = getattr(tools, "env", None)
    if env is None:
        return []
    catalog = env.catalog
    out = []
    for key in sorted(env.patient_keys):
        table = key.partition(":")[0]
        if table in tables and (item := catalog.get(key)) is not None and item.label:
            out.append(Title(table, str(item.value), item.label))
    return out


#: the id recorded for a diagnosis mention dropped because it names no ICD concept
NO_CONCEPT_RULE = "diagnoses.no_icd_concept"


def names_icd_concept(tools: Any, phrase: str, tables: Sequence[str] = ICD_TABLES) -> bool:
    """Whether a listed diagnosis or procedure names any ICD concept of the database's
    dictionary (or a billed title of the patient, or two billed titles stating its two
    parts: :func:`billed_in_parts`). One that names none ("Laboratory data",
    a stray fragment) is no diagnosis statement and gets no prediction; without a
    dictionary (no database behind the tools) every phrase is kept.
    """
    dictionary = dictionary_for(tools)
    if dictionary is None:
        return True
    billed = billed_titles(tools, tables)
    return resolve(phrase, dictionary, billed, tables).resolved or bool(billed_in_parts(phrase, billed, tables))


def names_icd_concept_strictly(tools: Any, phrase: str, tables: Sequence[str] = ("diagnoses_icd",)) -> bool:
    """Whether a phrase of free prose names an ICD concept confidently: a billed title of
    the patient, or a dictionary title covering at least three in four of its words. Prose
    holds many words that loosely resemble a title; a listed entry needs less.
    """
    dictionary = dictionary_for(tools)
    if dictionary is None:
        return False
    res = resolve(phrase, dictionary, billed_titles(tools, tables), tables)
    return bool(res.named) or bool(res.concepts and res.concepts[0].coverage >= 0.75)


def names_icd_concept_closely(tools: Any, phrase: str, tables: Sequence[str] = ("diagnoses_icd",),
                              billed_only: bool = False) -> bool:
    """Whether a part of a shorthand list ("liver lac", "ATN", "R hemicolectomy") names an ICD
    concept closely: a title (billed or of the dictionary) states every word of the phrase
    (or of one of its synonym forms) and the phrase states at least half of the title's
    content words. A list part is two or three words cut from their sentence; a loose
    match ("liver" for "Injury to liver", "resolved") names nothing. ``billed_only``: a
    billed title of the patient only.
    """
    dictionary = dictionary_for(tools)
    if dictionary is None:
        return False
    billed = [t for t in billed_titles(tools, tables) if t.table in tables]
    found = [] if billed_only else dictionary.match(phrase, tables=tables, limit=3)
    if billed:
        found += Terminology(billed).match(phrase, tables=tables, threshold=BILLED_THRESHOLD, limit=3)
    forms = [set(f) - qualifier_words() for f in phrase_forms(normalise(phrase))]
    for m in found:
        if m.coverage < 1.0:
            continue
        title = set(normalise(m.title)) - qualifier_words()
        # one word names a title only whole ("shock"; not "liver" for "Disorders of liver")
        if any(f and (title <= f if len(f) == 1 else 2 * len(title & f) >= len(title)) for f in forms):
            return True
    return False


#: the connectives of a compound entry, which no ICD title's wording needs to match it whole
_JOINS = re.compile(r"\b(?:due\s+to|secondary\s+to|caused\s+by|from|with|w/|and)\b|/", re.I)


def one_title_states(tools: Any, phrase: str, tables: Sequence[str] = ("diagnoses_icd",), share: float = 1.0) -> bool:
    """Whether one ICD title states every word of a compound entry (``share`` of them): a
    billed title of the patient, or a billable (leaf) title of the dictionary. "Esophageal
    varices with bleeding" is one title; "Hematemesis from esophagitis" is two concepts, and
    so is "atrial fibrillation/flutter", whose only whole title is a category header
    ("Atrial fibrillation and flutter") grouping two billable codes. Without a dictionary
    every entry is one (nothing to split it by).
    """
    dictionary = dictionary_for(tools)
    if dictionary is None:
        return True
    bare = _JOINS.sub(" ", phrase)
    billed = [t for t in billed_titles(tools, tables)]
    if billed and any(m.stated >= share for m in Terminology(billed).match(bare, tables=tables, limit=3)):
        return True
    return any(m.stated >= share and dictionary.is_leaf(m.table, m.code)
               for m in dictionary.match(bare, tables=tables, limit=8))


def billed_in_parts(phrase: str, billed: Sequence[Title], tables: Sequence[str] = ICD_TABLES) -> tuple[Title, ...]:
    """Two billed codes that together state a name no single billed title states: its words
    cut in two, each part stating a billed title (at least half of its words) ("E. coli cholangitis":
    "Septicemia due to E. coli" and "Cholangitis"). ICD-9 codes an infection's organism
    apart from its site, so the name is billed as the pair; () when no cut gives two.
    """
    billed = [t for t in billed if t.table in tables]
    words = phrase.split()
    if len(billed) < 2 or not 2 <= len(words) <= 6:
        return ()
    index = Terminology(billed)
    qualifiers = qualifier_words()
    for k in range(1, len(words)):
        parts = (" ".join(words[:k]), " ".join(words[k:]))
        if any(not set(normalise(p)) - qualifiers for p in parts):
            continue
        # each part states its title's concept, not one word of a longer one ("failure" is no heart failure)
        found = [next((m for m in index.match(p, tables=tables, limit=3) if m.stated >= 1.0
                       and 2 * len(set(normalise(p)) & set(title := normalise(m.title))) >= len(set(title))), None)
                 for p in parts]
        if found[0] is not None and found[1] is not None and found[0].code != found[1].code:
            by_code = {t.code: t for t in billed}
            return (by_code[found[0].code], by_code[found[1].code])
    return ()
