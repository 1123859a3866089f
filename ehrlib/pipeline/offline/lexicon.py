"""The offline extractor's vocabulary: concepts, drug names, microbiology words, criteria terms.

Data lives in ``ehrlib/data/offline_lexicon.yaml`` (concepts, drugs, drug classes,
microbiology, ward words for the criteria) and ``ehrlib/data/clinical_criteria.yaml`` (interpretation terms: the same
file the Get_Clinical_Criterion tool reads, so extraction and verification agree on what
"febrile" means). Compiled once per process.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.form_scan import FamilyPattern, FormFamily, FormScanner

__all__ = ["Concept", "Lexicon", "load_lexicon", "InterpretationTerm"]

#: the families of a lexicon built without forms
_EMPTY = FormScanner(tuple(FormFamily(name, ()) for name in ("concept", "cased", "drug", "term")))

@dataclass(frozen=True, slots=True)
class Concept:
    """One clinical concept: its kind, surface forms and the tables that hold it."""
    cid: str
    kind: str
    forms: tuple[str, ...]
    cased: tuple[str, ...] = ()
    items: re.Pattern[str] | None = None
    tables: tuple[str, ...] = ()
    search: tuple[str, ...] = ()
    unit: str | None = None
    tol: float = 0.0
    lo: float | None = None
    hi: float | None = None
    lower_is_worse: bool | None = None


@dataclass(frozen=True, slots=True)
class InterpretationTerm:
    """A word that asserts (or negates) a clinical criterion, e.g. "febrile"."""
    criterion: str
    text: str
    negated: bool


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Concepts, drugs and interpretation terms with the regexes that find them."""
    concepts: Mapping[str, Concept]
    drugs: Mapping[str, str]
    drug_classes: Mapping[str, tuple[str, ...]]
    specimens: tuple[tuple[re.Pattern[str], str], ...]
    organisms: tuple[tuple[re.Pattern[str], str], ...]
    micro_negative: re.Pattern[str]
    terms: tuple[InterpretationTerm, ...]
    #: one view per family, for scanning a line: its forms longest first, as one alternation
    #: would find them, found through one shared automaton pass (.form_scan)
    concept_re: FamilyPattern = field(default_factory=lambda: _EMPTY.family("concept"))
    cased_re: FamilyPattern = field(default_factory=lambda: _EMPTY.family("cased"))
    drug_re: FamilyPattern = field(default_factory=lambda: _EMPTY.family("drug"))
    term_re: FamilyPattern = field(default_factory=lambda: _EMPTY.family("term"))
    form_to_concept: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: generic name -> every name notes use for it (brands, abbreviations), for matching
    #: order labels such as "Levophed-k" or "Piperacillin/Tazobactam (Zosyn)"
    drug_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: states outside clinical_criteria.yaml (hypokalemia, thrombocytopenia...): id ->
    #: {concept, operator, threshold, source}, judged on the concept's items
    extra_criteria: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    term_index: Mapping[str, InterpretationTerm] = field(default_factory=dict)
    criteria: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def concepts_for(self, form: str) -> tuple[Concept, ...]:
        """Every concept a surface form may name ("BS": glucose with a value, else bowel sounds)."""
        key = re.sub(r"\s*:\s*(?=\S)|\s+", " ", form.strip())
        spaced = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", " ", key)  # "multi-lumen" is the form "multi lumen"
        cids = (self.form_to_concept.get(key) or self.form_to_concept.get(key.lower())
                or self.form_to_concept.get(spaced.lower()) or ())
        return tuple(self.concepts[c] for c in cids if c in self.concepts)

    def concept_for(self, form: str) -> Concept | None:
        """The first concept with this surface form, or None."""
        found = self.concepts_for(form)
        return found[0] if found else None


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    """Compile the lexicon and the criteria terms (cached)."""
    data = load_data("offline_lexicon.yaml")
    crit = load_data("clinical_criteria.yaml")
    concepts: dict[str, Concept] = {}
    form_to: dict[str, list[str]] = {}
    cased_forms: list[str] = []
    plain_forms: list[str] = []
    try:
        for cid, c in data["concepts"].items():
            concept = Concept(
                cid, c["kind"], tuple(str(f).lower() for f in c.get("forms", ())),
                tuple(str(f) for f in c.get("cased", ())),
                re.compile(c["items"], re.I) if c.get("items") else None,
                tuple(c.get("tables", ())), tuple(c.get("search", ())), c.get("unit"),
                float(c.get("tol", 0.0)), c.get("lo"), c.get("hi"), c.get("lower_is_worse"))
            concepts[cid] = concept
            for f in concept.forms:
                form_to.setdefault(re.sub(r"\s+", " ", f), []).append(cid)
                plain_forms.append(f)
            for f in concept.cased:
                form_to.setdefault(f, []).append(cid)
                cased_forms.append(f)
        drugs = {str(k).lower(): str(v).lower() for k, v in data["drugs"].items()}
        classes = {str(k).lower(): tuple(str(x).lower() for x in v) for k, v in data["drug_classes"].items()}
        specimens = tuple((re.compile(k, re.I), v) for k, v in data["micro"]["specimens"].items())
        organisms = tuple((re.compile(k, re.I), v) for k, v in data["micro"]["organisms"].items())
        negative = re.compile(data["micro"]["negative"], re.I)
        terms: list[InterpretationTerm] = []
        criteria = {c["id"]: c for c in crit["criteria"]}
        ward = data.get("criteria_terms") or {}
        for c in crit["criteria"]:
            extra_words = ward.get(c["id"]) or {}
            for n in list(c.get("names", ())) + list(extra_words.get("names", ())):
                terms.append(InterpretationTerm(c["id"], str(n).lower(), False))
            for n in list(c.get("negations", ())) + list(extra_words.get("negations", ())):
                terms.append(InterpretationTerm(c["id"], str(n).lower(), True))
        extra: dict[str, Mapping[str, Any]] = {}
        for cid, c in (data.get("interpretations") or {}).items():
            if cid in criteria:
                continue  # the shared criteria file wins
            if c["concept"] not in concepts or c["operator"] not in ("<", "<=", ">", ">="):
                raise ConfigError(f"offline interpretation {cid}: unknown concept or operator")
            extra[cid] = {"concept": c["concept"], "operator": c["operator"], "threshold": float(c["threshold"]),
                          "source": str(c.get("source", ""))}
            for n in c.get("names", ()):
                terms.append(InterpretationTerm(cid, str(n).lower(), False))
            for n in c.get("negations", ()):
                terms.append(InterpretationTerm(cid, str(n).lower(), True))
    except (KeyError, TypeError, AttributeError, re.error) as exc:
        raise ConfigError(f"offline lexicon is malformed: {exc}") from None
    term_index: dict[str, InterpretationTerm] = {}
    for t in terms:
        term_index.setdefault(re.sub(r"\s+", " ", t.text), t)
    aliases: dict[str, list[str]] = {}
    for name, generic in drugs.items():
        aliases.setdefault(generic, [generic])
        if (len(name) >= 4 or name in ("ns", "lr")) and name not in aliases[generic]:
            aliases[generic].append(name)
    # the brand names of the drug-name table (the one the search tools use) name a drug's items too:
    # a CareVue label may be the brand ("Natrecor" for nesiritide)
    for name, generic in load_data("drug_synonyms.yaml")["drug_synonyms"].items():
        name, generic = str(name).lower(), str(generic).lower()
        whole = all(len(w) >= 3 for w in re.findall(r"[a-z]+", name))  # "k-dur" would match any "Dur..." label
        if len(name) >= 4 and whole and name != generic and name not in aliases.setdefault(generic, [generic]):
            aliases[generic].append(name)
    scanner = FormScanner((FormFamily("concept", tuple(plain_forms), re.I), FormFamily("cased", tuple(cased_forms)),
                           FormFamily("drug", (*drugs, *classes), re.I),
                           FormFamily("term", tuple(t.text for t in terms), re.I)))
    return Lexicon(
        concepts, drugs, classes, specimens, organisms, negative, tuple(terms),
        scanner.family("concept"), scanner.family("cased"), scanner.family("drug"), scanner.family("term"),
        form_to_concept={k: tuple(v) for k, v in form_to.items()}, term_index=term_index, criteria=criteria,
        drug_aliases={k: tuple(v) for k, v in aliases.items()}, extra_criteria=extra)
