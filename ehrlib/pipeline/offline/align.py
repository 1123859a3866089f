r"""Aligning a mention to table items: the patient's own (L_P) or the catalogue's (L \ L_P).

A concept aligns by its label pattern and tables (``offline_lexicon.yaml``); a drug by its
generic name, brand or ward abbreviation inside the patient's order and infusion labels
("zosyn" -> "Piperacillin/Tazobactam (Zosyn)"); a culture by its specimen; a criterion
state names its items at verification. What the patient lacks is looked up with
``Lexical_Search`` over the whole catalogue, the tool the LLM backend uses.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.claims import InterpretationClaim, MedicationClaim, MicrobiologyClaim
from ehrlib.pipeline.offline.event_items import EVENT_ITEM, event_item_pairs
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.stages import NoteContext, StageEnv, item_key

__all__ = ["DRUG_TABLES", "align", "concept_items", "drug_items", "is_alarm_setting", "ontology_items", "patient_pairs"]

def patient_pairs(ctx: NoteContext) -> list[tuple[ItemRef, str]]:
    """The patient's items with their keys."""
    keys = ctx.patient_item_keys
    return [(it, keys[i] if i < len(keys) else item_key(it.table, it.itemid if it.itemid is not None else it.label))
            for i, it in enumerate(ctx.patient_items)]


#: an item that records a monitor's alarm limit ("Central Venous Pressure Alarm - High",
#: "FIO2 Alarm [Low]", "Disconnect Alarm"): a threshold the staff set, not the patient's value
_ALARM_SETTING = re.compile(r"\balarms?\b", re.I)


def is_alarm_setting(label: str) -> bool:
    """Whether an item label names an alarm limit or alarm setting rather than an observation.

    A monitor's alarm limits sit in the same table as the values they guard and share their
    name, but they are chosen by the staff: a statement about the patient's CVP or FiO2 is
    never met, or contradicted, by the limit set for it.
    """
    return bool(_ALARM_SETTING.search(label))


def concept_items(concept_tables: Sequence[str], pattern: re.Pattern[str] | None,
                  pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The patient's items of a concept: in its tables, label matching its pattern, alarm
    limits left out (:func:`is_alarm_setting`).
    """
    if pattern is None:
        return []
    return [(it, k) for it, k in pairs if it.table in concept_tables and pattern.search(it.label or "")
            and not is_alarm_setting(it.label or "")]


DRUG_TABLES = ("prescriptions", "inputevents_mv", "inputevents_cv", "emar")


#: a concentration written in a drug's name or an item's label ("dextrose 50%", "5% Dextrose", ".45% Normal Saline")
_STRENGTH = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?|\.\d+)\s*%")


def _strengths(text: str) -> set[float]:
    return {float(x) for x in _STRENGTH.findall(text)}


@functools.lru_cache(maxsize=4096)
def _name_pattern(name: str) -> Callable[[str], bool]:
    words = [w for w in re.findall(r"[a-z]+", name.lower()) if len(w) >= 3]
    if not words:
        exact = name.strip().lower()
        return lambda label: label.strip().lower() == exact  # "LR", "NS"
    # a two-letter word beside a longer one is part of the name ("PO Intake" is not "Pre-Admission Intake")
    words = [w for w in re.findall(r"[a-z]+", name.lower()) if len(w) >= 2]
    pats = [re.compile(r"(?<![a-z])" + re.escape(w[:12]), re.I) for w in words]
    # a concentration the name states is part of it: "dextrose 50%" (D50) is not a "5% Dextrose"
    # item; a label stating no concentration may still be the product
    strengths = _strengths(name)
    return lambda label: all(p.search(label) for p in pats) and (
        not strengths or not (other := _strengths(label)) or bool(strengths & other))


@functools.lru_cache(maxsize=1 << 16)
def _names(name: str, label: str) -> bool:
    """Whether an item label names the drug ``name`` (memoised: every drug mention of a note
    tests its names against the same order and infusion labels).
    """
    return _name_pattern(name)(label)


def strength_aliases(generic: str, aliases: Sequence[str]) -> list[str]:
    """A drug's names with its concentration: an alias that states none ("nacl", "normal saline" of
    "sodium chloride 0.9%") names the generic's product, not the same drug at another strength
    ("NaCl 0.45%"). A short ward abbreviation matched whole ("NS") stays as it is.
    """
    strength = _STRENGTH.search(generic)
    if strength is None:
        return list(aliases)
    return [a if _strengths(a) or not re.search(r"[a-z]{3}", a.lower()) else f"{a} {strength.group(0)}"
            for a in aliases]


def drug_items(names: Sequence[str], pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """Order/infusion items whose label names one of ``names`` (generic, brand or ward
    abbreviation: "Levophed-k" for norepinephrine); every word of a name must start a word.
    Items matched by a longer name come first (the verifier reads the first few).
    """
    tests = [(len(n), n) for n in names if n]
    scored = [(max((size for size, n in tests if _names(n, it.label or "")), default=0), i, (it, k))
              for i, (it, k) in enumerate(pairs) if it.table in DRUG_TABLES]
    # the most specific name first: "magnesium sulfate" ranks Magnesium Sulfate above Aluminum-Magnesium
    return [pair for size, _, pair in sorted(scored, key=lambda x: (-x[0], x[1])) if size]


def _micro_items(pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    return [(it, k) for it, k in pairs if it.table == "microbiologyevents" and ":spec:" in k]


_BLOOD_PRODUCTS = ((r"prbc|red|rbc|blood", r"packed red|prbc|rbc"), (r"ffp|plasma", r"ffp|fresh frozen|plasma"),
                   (r"plt|platelet", r"platelet"), (r"cryo", r"cryo"))


def align(m: Mention, lex: Lexicon, pairs: list[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The patient items a mention refers to, best first."""
    if m.concept == "drug" or m.kind in ("medication", "infusion"):
        names = list(m.claim.drugs) if isinstance(m.claim, MedicationClaim) else []
        concept = lex.concepts.get(m.concept)
        if concept is not None and concept.items is not None:  # blood products: the one named
            product = next((pat for word, pat in _BLOOD_PRODUCTS if re.search(word, m.text, re.I)), None)
            return concept_items(concept.tables, re.compile(product, re.I) if product else concept.items, pairs)
        return drug_items([a for n in names for a in strength_aliases(n, lex.drug_aliases.get(n, (n,)))], pairs)
    if m.kind == "microbiology":
        spec = re.compile(m.claim.specimen if isinstance(m.claim, MicrobiologyClaim) else "", re.I)
        return [(it, k) for it, k in _micro_items(pairs) if spec.search(it.label or k)]
    if m.kind == "interpretation":
        extra = lex.extra_criteria.get(m.claim.criterion) if isinstance(m.claim, InterpretationClaim) else None
        if extra is not None:  # a lexicon state: judged on its concept's items
            concept = lex.concepts[extra["concept"]]
            return concept_items(concept.tables, concept.items, pairs)
        return []  # the criterion names its items at verification (Get_Clinical_Criterion)
    if m.concept == EVENT_ITEM:  # named by the patient's own procedure items
        return event_item_pairs(m.text, pairs)
    concept = lex.concepts.get(m.concept)
    if concept is None:
        return []
    return concept_items(concept.tables, concept.items, pairs)


def ontology_items(env: StageEnv, m: Mention, lex: Lexicon) -> list[tuple[ItemRef, str]]:
    r"""Lexical_Search over the whole catalogue (L \ L_P) for a mention the patient lacks."""
    tools = env.toolset
    if tools is None or "Lexical_Search" not in getattr(tools, "names", ()):
        return []
    concept = lex.concepts.get(m.concept)
    if m.kind in ("medication", "infusion"):
        queries = list(m.claim.drugs)[:2] if isinstance(m.claim, MedicationClaim) else []
        tables: tuple[str, ...] = DRUG_TABLES
        pattern = None
    elif concept is not None:
        queries = list(concept.search[:1]) or [m.text]
        tables = concept.tables
        pattern = concept.items
    else:
        return []
    found: list[tuple[ItemRef, str]] = []
    for q in queries:
        res = tools.call("Lexical_Search", {"query": q, "k": 10})
        for row in res.rows:
            table, label, key = row.get("table"), row.get("label") or "", row.get("key")
            if table not in tables or not key:
                continue
            if (pattern is not None and not pattern.search(label)) or is_alarm_setting(label):
                continue
            if pattern is None and not re.search(r"(?<![a-z])" + re.escape(q.split()[0][:12]), label, re.I):
                continue
            found.append((ItemRef(table, label, key.split(":", 1)[1]), key))
        if found:
            break
    return found[:3]
