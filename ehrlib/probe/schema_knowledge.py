"""How much of the MIMIC schema an LLM backbone knows without tools (paper Appendix L).

The paper asked Gemini to describe MIMIC from memory, to ask whether a verifier's success
comes from a schema it already knows. This makes the question measurable: the model names,
for each clinical entity, the table and the column(s) where MIMIC records it, with no tool
and no schema in the prompt, and the answers are scored against the project's schema
(:mod:`ehrlib.schema`) and the entity's gold items.

Scores per entity:

- ``table_correct``: the named table (logical name, or a MIMIC-III/-IV physical name, with
  or without its schema) is one of the tables the gold items of the entity live in;
- ``column_valid``: the share of named columns that exist in the named table;
- ``column_correct``: the table is correct, every named column exists in it, and at least
  one of them identifies the entity or holds its value (its item, value, dose, amount,
  rate, organism ... column in :data:`ehrlib.schema.LOGICAL`).

Only entity names leave the machine. Names drawn from a corpus carry that corpus's
provenance into the client's PHI guard (a corpus that declares none counts as
credentialed); the built-in list is written by the project and is open data.
"""
from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from ehrlib.corpus.import_target import corpus_source_kind
from ehrlib.corpus.io import GOLD_FILE, MANIFEST_FILE, read_gold, write_json
from ehrlib.errors import ConfigError, DataError
from ehrlib.llm.cache import ResponseCache
from ehrlib.llm.client import run_sync
from ehrlib.llm.factory import make_client
from ehrlib.llm.phi import UNDECLARED_CORPUS, effective_source_kind, manifest_source_kinds
from ehrlib.llm.records import user
from ehrlib.llm.replies import generate_json
from ehrlib.prompting import get_prompt
from ehrlib.result_tables import write_table
from ehrlib.schema import EVENT_TABLES, FLAVORS, LOGICAL
from ehrlib.yamlfiles import read_yaml

__all__ = ["ProbeEntity", "ProbeAnswer", "BUILTIN_ENTITIES", "REPLY_SCHEMA", "corpus_entities",
           "corpus_provenance", "score_answer", "probe_prompt", "run_probe", "probe_summary",
           "answers_frame", "accuracy_by_table", "write_probe",
           "probe_settings", "probe_schema"]

PROMPT = "schema_probe"
#: entity names longer than this are note text, not names: they are never sent
MAX_NAME_CHARS = 80
#: column roles that identify an entity or hold its recorded value
ENTITY_ROLES = frozenset({"item", "value", "valuenum", "label", "dose", "amount", "rate", "organism",
                          "antibiotic", "interpretation", "specimen", "location"})

REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["answers"],
    "properties": {"answers": {"type": "array", "items": {
        "type": "object", "required": ["id", "table", "columns"],
        "properties": {"id": {"type": "integer"}, "table": {"type": "string"},
                       "columns": {"type": "array", "items": {"type": "string"}}}}}},
}


@dataclass(frozen=True)
class ProbeEntity:
    """An entity name and the logical event tables its gold items live in."""

    name: str
    tables: tuple[str, ...]


@dataclass(frozen=True)
class ProbeAnswer:
    """One entity's answer and its scores (``problem`` says why there is none)."""

    entity: str
    gold_tables: tuple[str, ...]
    table: str
    columns: tuple[str, ...]
    table_correct: bool
    column_valid: float
    column_correct: bool
    problem: str = ""


_DRUG = ("prescriptions", "inputevents_mv", "inputevents_cv", "emar")
#: a small list written for the probe: vitals, labs, drugs, outputs, cultures, procedures, codes
BUILTIN_ENTITIES: tuple[ProbeEntity, ...] = tuple(ProbeEntity(n, t) for n, t in (
    ("heart rate", ("chartevents",)), ("blood pressure", ("chartevents",)),
    ("respiratory rate", ("chartevents",)), ("oxygen saturation", ("chartevents",)),
    ("body temperature", ("chartevents",)), ("Glasgow coma scale", ("chartevents",)),
    ("serum potassium", ("labevents",)), ("creatinine", ("labevents",)), ("hemoglobin", ("labevents",)),
    ("white blood cell count", ("labevents",)), ("lactate", ("labevents",)),
    ("furosemide", _DRUG), ("vancomycin", _DRUG), ("norepinephrine infusion", _DRUG),
    ("urine output", ("outputevents",)), ("blood culture", ("microbiologyevents",)),
    ("central venous catheter", ("procedureevents_mv",)), ("pneumonia diagnosis", ("diagnoses_icd",)),
))


def _names() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Table names (logical and MIMIC-III/-IV physical, lower case) -> logical table, and per
    logical table its column names -> logical column.
    """
    tables: dict[str, str] = {t: t for t in LOGICAL}
    columns: dict[str, dict[str, str]] = {t: {c: c for c in LOGICAL[t].columns} for t in LOGICAL}
    for flavor in ("mimic3", "mimic4"):
        for logical, phys in FLAVORS[flavor].tables.items():
            tables.setdefault(phys.name.lower(), logical)
            columns[logical].update({p.lower(): c for c, p in phys.columns.items() if p})
    return tables, columns


_TABLES, _COLUMNS = _names()
_ENTITY_COLUMNS = MappingProxyType({t: frozenset(c for r, c in LOGICAL[t].roles.items() if r in ENTITY_ROLES)
                                    for t in LOGICAL})
_QUOTES = re.compile(r"[`\"'\[\]]")


def _ident(text: str) -> str:
    """A named table or column reduced to its last dotted part, unquoted, lower case."""
    return _QUOTES.sub("", str(text)).strip().lower().rsplit(".", 1)[-1]


def score_answer(entity: ProbeEntity, table: str, columns: Sequence[str], problem: str = "") -> ProbeAnswer:
    """Score one answer against the schema and the entity's gold tables (module docs)."""
    logical = _TABLES.get(_ident(table)) if table else None
    known = _COLUMNS.get(logical or "", {})
    named = [known.get(_ident(c)) for c in columns if str(c).strip()]
    valid = sum(c is not None for c in named) / len(named) if named else 0.0
    table_ok = logical is not None and logical in entity.tables
    column_ok = (table_ok and bool(named) and valid == 1.0
                 and any(c in _ENTITY_COLUMNS[logical or ""] for c in named))
    return ProbeAnswer(entity.name, entity.tables, table, tuple(columns), table_ok, valid, column_ok, problem)


def corpus_provenance(corpus_dir: str | os.PathLike[str]) -> str:
    """The source kind a corpus's entity names carry: what its manifest.json and import.json
    declare, credentialed when either says so or neither says anything (fail closed).
    """
    folder = Path(corpus_dir)
    kinds: list[str] = []
    manifest = folder / MANIFEST_FILE
    if manifest.is_file():
        try:
            kinds += manifest_source_kinds(json.loads(manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            kinds.append("credentialed")
    imported = corpus_source_kind(folder)
    kinds += [imported] if imported else []
    return effective_source_kind(*(kinds or [UNDECLARED_CORPUS]))


def _key(name: str) -> str:
    return " ".join(name.casefold().split())


def corpus_entities(corpus_dir: str | os.PathLike[str], *, limit: int = 50, seed: int = 0) -> list[ProbeEntity]:
    """Distinct entity names of a corpus's gold labels aligned to event tables, each with every
    event table its items name, at most ``limit`` of them (a seeded draw).
    """
    path = Path(corpus_dir) / GOLD_FILE
    if not path.is_file():
        raise DataError(f"corpus {corpus_dir}: no {GOLD_FILE} to draw probe entities from")
    found: dict[str, tuple[str, set[str]]] = {}
    for g in read_gold(path):
        tables = {it.table for it in g.items if it.table in EVENT_TABLES}
        name = " ".join(g.entity.split())
        if tables and 0 < len(name) <= MAX_NAME_CHARS:
            found.setdefault(_key(name), (name, set()))[1].update(tables)
    if not found:
        raise DataError(f"corpus {corpus_dir}: no gold entity is aligned to an event table")
    keys = sorted(found)
    if len(keys) > limit:
        keys = sorted(random.Random(seed).sample(keys, limit))
    return [ProbeEntity(found[k][0], tuple(sorted(found[k][1]))) for k in keys]


def probe_prompt(entities: Sequence[ProbeEntity]) -> str:
    """The probe prompt for one batch: entity names only, numbered from 1."""
    listing = "\n".join(f"{i}: {e.name}" for i, e in enumerate(entities, 1))
    return get_prompt(PROMPT).render(entities=listing)


def _batches(items: Sequence[ProbeEntity], size: int) -> Iterable[Sequence[ProbeEntity]]:
    return (items[i:i + size] for i in range(0, len(items), size))


async def _ask(client: Any, batch: Sequence[ProbeEntity]) -> list[ProbeAnswer]:
    result = await generate_json(client, [user(probe_prompt(batch))], schema=REPLY_SCHEMA, stage="schema_probe")
    if not result.ok:
        return [score_answer(e, "", (), f"no usable reply: {result.error}") for e in batch]
    by_id: dict[int, dict[str, Any]] = {}
    for a in result.value["answers"]:
        by_id.setdefault(int(a["id"]), a)
    out = []
    for i, e in enumerate(batch, 1):
        a = by_id.get(i)
        out.append(score_answer(e, str(a["table"]), tuple(str(c) for c in a["columns"]))
                   if a is not None else score_answer(e, "", (), "no answer for this entity"))
    return out


def run_probe(client: Any, entities: Sequence[ProbeEntity], *, batch: int = 20) -> list[ProbeAnswer]:
    """Ask ``client`` about ``entities`` in batches (one call each, in order) and score the answers."""
    if batch < 1:
        raise ConfigError("the probe batch size must be at least 1")

    async def ask_all() -> list[ProbeAnswer]:
        answers: list[ProbeAnswer] = []
        for part in _batches(entities, batch):
            answers += await _ask(client, part)
        return answers

    return run_sync(ask_all())


def probe_summary(answers: Sequence[ProbeAnswer]) -> dict[str, float]:
    """Entities asked, unanswered, table accuracy, column accuracy and column validity."""
    n = len(answers)
    share = (lambda xs: sum(xs) / n if n else float("nan"))  # noqa: E731 (one-line helper)
    return {"n_entities": n, "n_unanswered": sum(bool(a.problem) for a in answers),
            "table_accuracy": share(a.table_correct for a in answers),
            "column_accuracy": share(a.column_correct for a in answers),
            "column_validity": share(a.column_valid for a in answers)}


def answers_frame(answers: Sequence[ProbeAnswer]) -> pd.DataFrame:
    """One row per entity: gold tables, the answer, its scores and any problem."""
    return pd.DataFrame([{"entity": a.entity, "gold_tables": ", ".join(a.gold_tables), "table": a.table,
                          "columns": ", ".join(a.columns), "table_correct": a.table_correct,
                          "column_valid": a.column_valid, "column_correct": a.column_correct,
                          "problem": a.problem} for a in answers],
                        columns=["entity", "gold_tables", "table", "columns", "table_correct", "column_valid",
                                 "column_correct", "problem"])


def accuracy_by_table(answers: Sequence[ProbeAnswer]) -> pd.DataFrame:
    """Table and column accuracy per gold table (an entity counts under each of its tables)."""
    frame = answers_frame(answers).assign(gold_table=lambda d: d["gold_tables"].str.split(", ")).explode("gold_table")
    if frame.empty:
        return pd.DataFrame(columns=["gold_table", "n", "table_accuracy", "column_accuracy"])
    return (frame.groupby("gold_table", sort=True)
            .agg(n=("entity", "size"), table_accuracy=("table_correct", "mean"),
                 column_accuracy=("column_correct", "mean")).reset_index())


def write_probe(out_dir: str | os.PathLike[str], answers: Sequence[ProbeAnswer], *, backend: str, model: str,
                source_kind: str, entity_source: str) -> dict[str, Any]:
    """Write ``answers.csv``, ``summary.csv/.md``, ``by_table.csv/.md`` and ``probe.json``; return the summary."""
    out = Path(out_dir)
    summary: dict[str, Any] = {"model": model, "backend": backend, **probe_summary(answers)}
    write_table(answers_frame(answers), out / "answers.csv")
    write_table(pd.DataFrame([summary]), out / "summary.csv")
    write_table(accuracy_by_table(answers), out / "by_table.csv")
    write_json({**summary, "prompt_id": get_prompt(PROMPT).prompt_id, "entities": entity_source,
                "source_kind": source_kind}, out / "probe.json")
    return summary


def probe_settings(params: str | os.PathLike[str] | None = None, **overrides: Any) -> tuple[str, dict[str, Any]]:
    """The backend and client settings: a params file's ``llm:`` block, then ``overrides``
    (backend, model, base_url, max_tokens ...; None leaves a setting as the file has it).
    """
    llm: dict[str, Any] = {}
    if params:
        data = read_yaml(params, what="params file").data or {}
        if not isinstance(data, dict) or not isinstance(data.get("llm"), dict):
            raise ConfigError(f"{params}: expected an `llm:` block")
        llm = dict(data["llm"])
    llm.update({k: v for k, v in overrides.items() if v is not None})
    backend = llm.pop("backend", None)
    if not backend or not llm.get("model"):
        raise ConfigError("the schema probe needs a backend and a model: a params file with an `llm:` block "
                          "naming both, or --backend B --model M")
    return str(backend), llm


def probe_schema(backend: str, settings: dict[str, Any], *, corpus: str | os.PathLike[str] | None = None,
                 limit: int = 50, seed: int = 0, batch: int = 20,
                 out_dir: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], Path]:
    """Run the probe end to end: entities (built-in, or ``corpus``'s gold entities under its
    provenance), the model's answers (cached in the output folder), scores and tables.
    Returns the summary and the output folder (default ``runs/schema_probe/<model>``).
    """
    if limit < 1:
        raise ConfigError("the probe's entity limit must be at least 1")
    if corpus is not None:
        entities, source = corpus_entities(corpus, limit=limit, seed=seed), corpus_provenance(corpus)
    else:
        entities, source = list(BUILTIN_ENTITIES), "synthetic"
    settings = dict(settings)
    model = str(settings["model"])
    out = Path(out_dir) if out_dir is not None else Path("runs") / "schema_probe" / model.replace("/", "_")
    cache = settings.pop("cache", None) or out / "llm_cache.sqlite"
    # the PHI guard runs as the client is made, before the cache file exists: a refused
    # endpoint leaves nothing behind
    client = make_client(backend, source_kind=source, **settings)
    client.cache = ResponseCache(cache)
    answers = run_probe(client, entities, batch=batch)
    summary = write_probe(out, answers, backend=backend, model=model, source_kind=source,
                          entity_source=str(corpus or "built-in"))
    return summary, out
