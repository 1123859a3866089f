"""Benchmark of the LLM path's *orchestration* (no network): calls per note, cache, concurrency.

The paper needed hours per note, mostly waiting on the model. Here an **orchestration
oracle** backend (``backend: oracle``) answers every stage from the synthetic gold after
an injected latency per model call, making as many calls as the LLM backend would
(one segmentation call, a global anchor call and one per segment, one patient-extraction
call per segment, 1-3 ontology calls per segment, one scope call per segment, and per
entity one call per tool turn of its gold check path plus the final answer — or a single
call when the validation cache holds a related entry). It measures our runner, not a
model: **its answers are the gold, so it never produces a reported accuracy** (the
runner refuses nothing, but every record says ``model = orchestration-oracle``).

``run(out_dir)`` writes ``bench_pipeline.csv``: per concurrency (1, 8, 32) the wall time
per note, calls per note by stage, cache hits, and the per-note wall time projected to a
Gemini-like 1.5 s per call; and on notes of grouped findings ("Skin Condition: clammy,
dry") the calls per note with and without the validation cache. The default latency is
short (``EHRLIB_BENCH_LATENCY``, 0.05 s) so ``make bench`` stays quick; the projection
scales the measured wall time by 1.5 s / latency.
"""
from __future__ import annotations

import collections
import datetime as dt
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import duckdb

from ehrlib import schema
from ehrlib.bench import write_csv
from ehrlib.corpus.io import read_gold, read_notes, write_jsonl
from ehrlib.corpus.records import GoldEntity, ItemRef, Note, Usage
from ehrlib.errors import ConfigError
from ehrlib.pipeline.claims import OracleClaim
from ehrlib.pipeline.params import load_params
from ehrlib.pipeline.records import Anchor, CacheEntry, Entity, ScopeDecision, Segment, Verdict
from ehrlib.pipeline.rundir import read_ledger
from ehrlib.pipeline.runner import run_experiment
from ehrlib.pipeline.stages import NoteContext, StageEnv, StageOutput, Stages, Timeline, register_backend
from ehrlib.synth import generate_hospital
from ehrlib.synth.notes import write_corpus

__all__ = ["ORACLE_MODEL", "oracle_stages", "run", "grouped_findings_corpus"]

ORACLE_MODEL = "orchestration-oracle"
DEFAULT_LATENCY_S = 0.05
GEMINI_LIKE_LATENCY_S = 1.5
CONCURRENCY = (1, 8, 32)


def _sleep_calls(latency: float, n: int) -> Usage:
    for _ in range(n):
        time.sleep(latency)
    return Usage(calls=n)


def _key(item: ItemRef) -> str:
    return f"{item.table}:{item.itemid}"


class _Oracle:
    """Stage callables answering from gold with the LLM backend's call structure."""

    def __init__(self, gold: Mapping[str, Sequence[GoldEntity]], latency: float) -> None:
        self.gold = gold
        self.latency = latency

    def segment(self, ctx: NoteContext, env: StageEnv) -> StageOutput[tuple[Segment, ...]]:
        usage = _sleep_calls(self.latency, 1)
        lines, starts = ctx.lines, [0]
        for n in range(1, len(lines)):
            if lines[n].rstrip().endswith(":") or (not lines[n - 1].strip() and lines[n].strip()):
                starts.append(n)
        ends = [s - 1 for s in starts[1:]] + [len(lines) - 1]
        return StageOutput(tuple(Segment(i, s, e, lines[s][:40]) for i, (s, e) in enumerate(zip(starts, ends))), usage)

    def anchors(self, ctx: NoteContext, env: StageEnv, segments: tuple[Segment, ...]) -> StageOutput[Timeline]:
        usage = _sleep_calls(self.latency, 1 + len(segments))
        anchors = tuple(Anchor(n, t, None, "table") for n, t in (("admission", ctx.admittime),
                                                                  ("discharge", ctx.dischtime)) if t)
        return StageOutput(Timeline(anchors), usage)

    def _entities(self, ctx: NoteContext, segment: Segment, in_lp: bool) -> tuple[Entity, ...]:
        lp = set(ctx.patient_item_keys)
        out = []
        for g in self.gold.get(ctx.note_id, ()):
            if not segment.start_line <= g.line <= segment.end_line or not g.items:
                continue
            if (_key(g.items[0]) in lp) != in_lp:
                continue
            out.append(Entity(g.entity_id, g.line, g.entity, "finding", segment.index, g.value,
                              OracleClaim(gold_label=g.label, gold_kind=g.inconsistency.kind if g.inconsistency else None,
                                          turns=len(g.check_path)),
                              g.items, tuple(_key(i) for i in g.items), window=g.time,
                              source="patient" if in_lp else "ontology",
                              group=f"L{g.line}:{_key(g.items[0])}"))
        return tuple(out)

    def patient(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        return StageOutput(self._entities(ctx, segment, True), _sleep_calls(self.latency, 1))

    def ontology(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        found = self._entities(ctx, segment, False)
        return StageOutput(found, _sleep_calls(self.latency, 3 if found else 1))  # groups, subgroups, items

    def scope(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
              entities: tuple[Entity, ...]) -> StageOutput[tuple[ScopeDecision, ...]]:
        usage = _sleep_calls(self.latency, 1)
        return StageOutput(tuple(ScopeDecision(e.entity_id, "active", "gold") for e in entities), usage)

    @staticmethod
    def _gold_verdict(entity: Entity, **kw: Any) -> Verdict:
        claim = entity.claim
        assert isinstance(claim, OracleClaim), "the oracle verifies only its own entities"
        label = claim.gold_label
        kind = None
        if label == "inconsistent":
            kind = "missing" if claim.gold_kind == "missing" else "contradiction"
        return Verdict(entity.entity_id, label, kind, "orchestration oracle (gold)", **kw)

    def verify(self, ctx: NoteContext, env: StageEnv, entity: Entity, cache: tuple[CacheEntry, ...],
               group: tuple[Entity, ...] = ()) -> Verdict:
        hit = next((c for c in reversed(cache) if c.entity.group == entity.group), None)
        calls = 1 if hit is not None else (entity.claim.turns if isinstance(entity.claim, OracleClaim) else 2) + 1
        usage = _sleep_calls(self.latency, calls)
        siblings = tuple(self._gold_verdict(g, from_cache=True) for g in group)
        return self._gold_verdict(entity, from_cache=hit is not None, usage=usage, siblings=siblings)

    #: like the LLM verifier, siblings of one observation are answered in the same call
    verify.accepts_group = True  # type: ignore[attr-defined]


def oracle_stages(method: str, params: Any) -> Stages:
    """The oracle bundle: gold from ``<corpus>/gold.jsonl``, latency from backend_options."""
    if method != "inspector":
        raise ConfigError("the orchestration oracle only imitates the inspector method")
    gold: dict[str, list[GoldEntity]] = collections.defaultdict(list)
    for g in read_gold(Path(params.corpus) / "gold.jsonl"):
        gold[g.note_id].append(g)
    o = _Oracle(gold, float(params.backend_options.get("latency_s", DEFAULT_LATENCY_S)))
    return Stages(method, "oracle", o.anchors, o.verify, o.segment, o.patient, o.ontology, o.scope,
                  concurrency=32, model=ORACLE_MODEL)


register_backend("oracle", oracle_stages)


def grouped_findings_corpus(db: Path, out_dir: Path, *, n_notes: int = 4) -> Path:
    """Nursing-style exam notes whose lines each hold several findings of one item, read
    from the charted categorical values of one day ("Skin Condition: Clammy, Dry"), with
    their gold (all consistent; bench-only, to measure the validation cache)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        smap = schema.schema_map(schema.detect_flavor(con))
        ce, di = smap.table("chartevents"), smap.table("d_items")
        rows = con.execute(
            f"SELECT c.{ce.col('subject_id')}, c.{ce.col('hadm_id')}, CAST(c.{ce.col('charttime')} AS DATE) AS d, "  # noqa: S608
            f"c.{ce.col('itemid')}, d.{di.col('label')}, list(DISTINCT c.{ce.col('value')} ORDER BY "
            f"c.{ce.col('value')}) AS vals FROM {ce.ref} c JOIN {di.ref} d ON d.{di.col('itemid')} = c.{ce.col('itemid')} "
            f"WHERE c.{ce.col('valuenum')} IS NULL AND c.{ce.col('value')} IS NOT NULL GROUP BY ALL "
            f"HAVING count(DISTINCT c.{ce.col('value')}) >= 2 ORDER BY 2, 3, 4").fetchall()
    finally:
        con.close()
    by_day: dict[tuple[int, int, dt.date], list[tuple]] = collections.defaultdict(list)
    for s, h, d, item, label, vals in rows:
        by_day[(s, h, d)].append((item, label, vals))
    notes, gold = [], []
    for (s, h, d), items in sorted(by_day.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:n_notes]:
        note_id = f"grouped-{h}-{d}"
        lines = ["Exam:"]
        for item, label, vals in items:
            line = len(lines)
            lines.append(f"{label}: {', '.join(v.lower() for v in vals)}")
            for v in vals:
                gold.append(GoldEntity(note_id, f"{note_id}-e{len(gold)}", line, v.lower(), "consistent",
                                       (ItemRef("chartevents", label, item),), value=v,
                                       check_path=("Lexical_Search", "Get_Item_Status_History")))
        notes.append(Note(note_id, s, h, "nursing", d.isoformat(), "\n".join(lines)))
    write_jsonl(notes, out_dir / "notes.jsonl")
    write_jsonl(gold, out_dir / "gold.jsonl")
    return out_dir


def _measure(corpus: Path, db: Path, runs: Path, run_id: str, concurrency: int, latency: float,
             cache: int = 5) -> dict[str, Any]:
    params = load_params(None, corpus=str(corpus), db=str(db), backend="oracle", run_id=run_id, runs_dir=str(runs),
                         concurrency=concurrency, validation_cache=cache, progress=False,
                         backend_options={"latency_s": latency})
    t0 = time.perf_counter()
    run_dir = run_experiment(params)
    wall = time.perf_counter() - t0
    ledger = read_ledger(run_dir)
    n = max(len(ledger), 1)
    calls = collections.Counter()
    for e in ledger:
        for stage, s in (e.get("stages") or {}).items():
            calls[stage] += s["llm_calls"]
    return {"n_notes": len(ledger), "wall_per_note_s": wall / n, "calls_per_note": sum(calls.values()) / n,
            "cache_hits": sum(e.get("cache_hits", 0) for e in ledger),
            **{f"calls_{k}": v / n for k, v in sorted(calls.items())}}


def run(out_dir: Path, *, latency: float | None = None, n_notes: int = 6) -> Path:
    latency = float(os.environ.get("EHRLIB_BENCH_LATENCY", DEFAULT_LATENCY_S)) if latency is None else latency
    rows = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-pipeline-") as tmp:
        tmp_path = Path(tmp)
        db = generate_hospital(tmp_path / "hospital.duckdb")
        corpus = write_corpus(db, tmp_path / "corpus", notes_per_type=max(1, n_notes // 3), progress=False)
        notes = read_notes(corpus / "notes.jsonl")[:n_notes]
        write_jsonl(notes, corpus / "notes.jsonl")
        grouped = grouped_findings_corpus(db, tmp_path / "grouped")
        base = None
        for c in CONCURRENCY:
            m = _measure(corpus, db, tmp_path / "runs", f"c{c}", c, latency)
            base = base or m["wall_per_note_s"]
            rows.append({"notes": "synthetic corpus", "concurrency": c, "validation_cache": 5, **m,
                         "speedup_vs_c1": base / m["wall_per_note_s"]})
        for cache in (5, 0):
            m = _measure(grouped, db, tmp_path / "runs", f"grouped-m{cache}", 8, latency, cache)
            rows.append({"notes": "grouped findings", "concurrency": 8, "validation_cache": cache, **m,
                         "speedup_vs_c1": None})
    with_cache = next(r for r in rows if r["notes"] == "grouped findings" and r["validation_cache"] == 5)
    without = next(r for r in rows if r["notes"] == "grouped findings" and r["validation_cache"] == 0)
    ratio = with_cache["calls_per_note"] / without["calls_per_note"]
    columns = sorted({k for r in rows for k in r if k.startswith("calls_") and k != "calls_per_note"})
    header = ["notes", "concurrency", "validation_cache", "n_notes", "latency_s", "wall_per_note_s",
              "projected_wall_per_note_s_at_1.5s", "speedup_vs_c1", "calls_per_note", *columns, "cache_hits",
              "cache_call_ratio"]
    out = []
    for r in rows:
        out.append([r["notes"], r["concurrency"], r["validation_cache"], r["n_notes"], latency,
                    round(r["wall_per_note_s"], 4), round(r["wall_per_note_s"] * GEMINI_LIKE_LATENCY_S / latency, 1),
                    None if r["speedup_vs_c1"] is None else round(r["speedup_vs_c1"], 2),
                    round(r["calls_per_note"], 2), *(round(r.get(c, 0.0), 2) for c in columns), r["cache_hits"],
                    round(ratio, 3) if r["notes"] == "grouped findings" else ""])
    return write_csv(Path(out_dir) / "bench_pipeline.csv", header, out)
