"""Judge a finished run and write its metrics: ``runs/<run_id>/judgements.jsonl`` + tables.

A run directory (written by ``ehrlib.pipeline.runner``) holds ``manifest.json`` and
``predictions.jsonl``; the gold labels live in the corpus folder the run read
(``notes.jsonl`` + ``gold.jsonl``), found through the manifest unless given. Only the
notes the run attempted (its ``progress.jsonl`` ledger, crashed notes included) are
scored, so a ``--limit 3`` run is not punished for the notes it never saw, and a note
the method crashed on scores zero instead of vanishing.

Several judges can score one run: ``judgements.jsonl`` keeps every judge's verdicts and
re-judging replaces only that judge's rows; all tables are recomputed from the file.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from ehrlib.corpus.io import (
    GOLD_FILE,
    MANIFEST_FILE,
    NOTES_FILE,
    Corpus,
    load_corpus,
    read_notes,
    read_predictions,
    read_records,
    write_json,
    write_jsonl,
)
from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.corpus.splits import canonical_split, split_note_ids
from ehrlib.errors import ConfigError, DataError
from ehrlib.judge.llm_judge import judge_with_llm
from ehrlib.judge.matcher import JUDGE_NAME, MatcherConfig, judge_with_matcher
from ehrlib.judge.metrics import by_gold_group, by_note_type, judge_agreement, note_scores, summarize
from ehrlib.llm.factory import make_client
from ehrlib.llm.usage import UsageLedger, call_counts
from ehrlib.pipeline.attempts import current_lines
from ehrlib.pipeline.runid import check_run_id
from ehrlib.result_tables import write_markdown_sections, write_table

__all__ = [
    "RunData",
    "load_run",
    "judge_run",
    "metric_tables",
    "write_metric_tables",
    "read_judgements",
    "evaluate_run",
    "JUDGEMENTS_FILE",
]

log = logging.getLogger(__name__)
Mode = Literal["harsh", "lenient"]
JUDGEMENTS_FILE = "judgements.jsonl"
JUDGES_FILE = "judges.json"
_RUN_COLUMNS = ("run_id", "method", "backend", "model")


@dataclass(frozen=True, slots=True)
class RunData:
    """A run's predictions with the notes and gold labels of the notes it attempted."""

    run_dir: Path
    manifest: Mapping[str, Any]
    predictions: tuple[Prediction, ...]
    notes: tuple[Note, ...]
    gold: tuple[GoldEntity, ...]
    corpus_dir: Path
    run_info: Mapping[str, Any] = field(default_factory=dict)
    #: note id -> the run's segments as (start_line, end_line), from stages.jsonl
    segments: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    #: False for a corpus without gold.jsonl: nothing to judge, no metrics
    labelled: bool = True


def _corpus_dir(manifest: Mapping[str, Any], given: str | os.PathLike[str] | None) -> Path:
    if given is not None:
        return Path(given)
    # params keep the path as typed (maybe relative to where the run started); the
    # provenance records it resolved, so a report from another folder still finds it
    candidates = [Path(c) for c in ((manifest.get("params") or {}).get("corpus"),
                                    (manifest.get("data_source") or {}).get("corpus")) if c]
    dirs = [c.parent if c.suffix == ".jsonl" else c for c in candidates]
    for path in dirs:
        if path.exists():
            return path
    if dirs:
        return dirs[0]
    raise ConfigError("the run manifest names no corpus; pass --corpus DIR (a folder with notes.jsonl and gold.jsonl)")


def _finished_notes(run_dir: Path) -> set[str] | None:
    """Note ids the run attempted (its ledger), or None for a run without one (all notes count)."""
    path = run_dir / "progress.jsonl"
    if not path.exists():
        return None
    done: set[str] = set()
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            break  # a half-written last line: the runner's own recovery ignores it too
        # Every attempted note counts, crashed ones ("error") included: a note the method
        # could not process scores zero rather than vanishing from the mean.
        done.add(str(entry["note_id"]))
        if entry.get("status", "ok") not in ("ok", "failed"):
            log.warning("%s: note %s ended with status %r; scored with the predictions it has",
                        run_dir.name, entry["note_id"], entry.get("status"))
    return done


def _segments(run_dir: Path) -> dict[str, tuple[tuple[int, int], ...]]:
    """Segment line ranges per note from the note-level lines of stages.jsonl (if any)."""
    path = run_dir / "stages.jsonl"
    out: dict[str, tuple[tuple[int, int], ...]] = {}
    if not path.exists():
        return out
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            if '"stage": "note"' not in raw:  # cheap filter: most lines are per-stage records
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a torn last line of an interrupted run
            segs = ((rec.get("output") or {}).get("segments")) or []
            out[str(rec.get("note_id"))] = tuple((int(x["start_line"]), int(x["end_line"])) for x in segs
                                                 if "start_line" in x and "end_line" in x)
    return out


def _run_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest ({} when it has none); DataError for a folder that cannot be read
    (a name too long for the file system, say) or a manifest that is not a JSON object.
    """
    path = run_dir / MANIFEST_FILE
    try:
        if not (run_dir / "predictions.jsonl").exists():
            raise DataError(f"{run_dir}: no predictions.jsonl (is this a run directory?)")
        manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except OSError as exc:
        raise DataError(f"{run_dir}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    except ValueError as exc:   # not UTF-8, not JSON
        raise DataError(f"{path}: damaged manifest ({' '.join(str(exc).split())[:120]})") from None
    if not isinstance(manifest, dict):
        raise DataError(f"{path}: damaged manifest (a JSON {type(manifest).__name__}, not an object)")
    return manifest


def load_run(run_dir: str | os.PathLike[str], corpus_dir: str | os.PathLike[str] | None = None,
             split: str | None = None) -> RunData:
    """Load a run directory and the gold labels of the notes it attempted (with ``split``,
    only those the corpus assigns to that split).
    """
    run_dir = Path(run_dir)
    manifest = _run_manifest(run_dir)
    cdir = _corpus_dir(manifest, corpus_dir)
    if not (cdir / NOTES_FILE).exists():
        raise DataError(f"corpus {cdir}: no {NOTES_FILE}")
    # an unlabelled corpus (imported real notes) has no gold.jsonl: its runs have nothing
    # to judge, but load the same way for the viewer and the report
    corpus = load_corpus(cdir) if (cdir / GOLD_FILE).exists() else Corpus(tuple(read_notes(cdir / NOTES_FILE)), (), {})
    # a rerun note's earlier attempt stays in the file: only each note's last attempt counts
    current = current_lines(run_dir, "predictions.jsonl")
    predictions = tuple(p for p, keep in zip(read_predictions(run_dir / "predictions.jsonl"), current, strict=False)
                        if keep)
    finished = _finished_notes(run_dir)
    if finished is None:
        log.info("%s has no progress ledger; scoring every corpus note", run_dir)
        finished = {n.note_id for n in corpus.notes}
    if split is not None:
        finished &= split_note_ids(cdir, split)
        if not finished:
            raise DataError(f"{run_dir}: the run attempted no note of the {canonical_split(split)} split of {cdir}")
    notes = tuple(n for n in corpus.notes if n.note_id in finished)
    gold = tuple(g for g in corpus.gold if g.note_id in finished)
    unknown = {p.note_id for p in predictions} - {n.note_id for n in corpus.notes}
    if unknown:
        raise DataError(f"{run_dir}: predictions for notes not in corpus {cdir}: {sorted(unknown)[:5]}")
    if split is not None:
        predictions = tuple(p for p in predictions if p.note_id in finished)
    info = {k: manifest.get(k, (manifest.get("params") or {}).get(k)) for k in _RUN_COLUMNS}
    # the id names report figures and headings: a hand-edited manifest gets the same check as `ehrlib run`
    info["run_id"] = check_run_id(str(info["run_id"] or run_dir.name), where=str(run_dir / "manifest.json"))
    return RunData(run_dir, manifest, predictions, notes, gold, cdir, info, _segments(run_dir),
                   labelled=(cdir / GOLD_FILE).exists())


def judge_run(run: RunData, judge: str = JUDGE_NAME, modes: Sequence[Mode] = ("harsh", "lenient"), *,
              client: Any = None, llm: Mapping[str, Any] | None = None, matcher: MatcherConfig = MatcherConfig(),
              label: str | None = None, progress: bool = True) -> tuple[list[Judgement], dict[str, Any]]:
    """Judgements of one judge for a loaded run, plus a description of the judge.

    ``label`` names the judgements when it should differ from the model name, e.g. three
    passes of one model (``gemini-2.5-pro#2``, Appendix G) with ``llm={"cache_salt": "2"}``.
    """
    if judge == JUDGE_NAME:
        return (judge_with_matcher(run.gold, run.predictions, modes, matcher, run.segments),
                {"judge": judge, "kind": "matcher", "config": dataclasses.asdict(matcher)})
    if client is None:
        settings = dict(llm or {})
        backend = str(settings.pop("backend", "gemini"))
        settings.setdefault("model", judge)
        # Judge prompts carry note-derived text: the run's data provenance decides where it may go.
        source = (run.manifest.get("data_source") or {}).get("source_kind", "credentialed")
        settings.setdefault("source_kind", source)
        # A response cache in the run folder makes an interrupted judging pass resumable:
        # the rerun replays what was already answered and pays only for the rest.
        settings.setdefault("cache", str(run.run_dir / "llm_judge_cache.sqlite"))
        client = make_client(backend, **settings)
    judgements, prompt_ids = judge_with_llm(client, run.gold, run.predictions, run.notes, modes,
                                            judge_name=label or judge, progress=progress)
    usage = getattr(getattr(client, "ledger", None), "totals", None)
    return judgements, {"judge": label or judge, "model": judge, "kind": "llm",
                        "backend": getattr(client, "backend", None),
                        "prompt_ids": prompt_ids, "usage": usage() if callable(usage) else None,
                        "llm_calls": _call_counts(client)}


def read_judgements(run_dir: str | os.PathLike[str]) -> list[Judgement]:
    """The judgements stored in a run folder (empty before the run is judged)."""
    path = Path(run_dir) / JUDGEMENTS_FILE
    return read_records(Judgement, path, strip=("run_id",)) if path.exists() else []


def metric_tables(run: RunData, judgements: Sequence[Judgement]) -> dict[str, pd.DataFrame]:
    """All metric tables of a run: summary, per note, per note type, per gold group."""
    scores = note_scores(judgements, run.gold, run.predictions, run.notes)
    tables = {
        "metrics": summarize(scores),
        "note_scores": scores,
        "metrics_by_note_type": by_note_type(scores),
        "metrics_by_inconsistency": by_gold_group(judgements, run.gold, "inconsistency", run.notes),
        "metrics_by_reasoning": by_gold_group(judgements, run.gold, "reasoning", run.notes),
        "judge_agreement": judge_agreement(judgements),
    }
    for df in tables.values():
        for i, col in enumerate(_RUN_COLUMNS):
            df.insert(i, col, run.run_info.get(col))
    return tables


def write_metric_tables(tables: Mapping[str, pd.DataFrame], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Each table as CSV + Markdown; ``metrics.md`` also gathers the breakdowns."""
    out_dir = Path(out_dir)
    paths = [write_table(df, out_dir / f"{name}.csv") for name, df in tables.items()]
    drop = list(_RUN_COLUMNS)
    sections = {"Mean over notes (and micro totals)": tables["metrics"].drop(columns=drop),
                "By note type": tables["metrics_by_note_type"].drop(columns=drop),
                "By gold inconsistency type (recall)": tables["metrics_by_inconsistency"].drop(columns=drop),
                "By reasoning type (recall)": tables["metrics_by_reasoning"].drop(columns=drop)}
    if not tables["judge_agreement"].empty:
        sections["Judge agreement (vs the matcher; Cohen's kappa)"] = tables["judge_agreement"].drop(columns=drop)
    run_id = tables["metrics"]["run_id"].iloc[0] if not tables["metrics"].empty else out_dir.name
    paths.append(write_markdown_sections(sections, out_dir / "metrics.md", title=f"Metrics of run {run_id}"))
    return paths


def evaluate_run(run_dir: str | os.PathLike[str], corpus_dir: str | os.PathLike[str] | None = None,
                 judge: str = JUDGE_NAME, modes: Sequence[Mode] = ("harsh", "lenient"), *,
                 client: Any = None, llm: Mapping[str, Any] | None = None, label: str | None = None,
                 progress: bool = True, split: str | None = None) -> pd.DataFrame:
    """Judge a run, store judgements.jsonl and the metrics tables; returns this judge's summary.

    ``judge`` is ``"matcher"`` (offline, deterministic) or a model name for the LLM
    judges, called through ``client`` or a client built from ``llm`` settings
    (``{"backend": "gemini", ...}``, see ``ehrlib.llm.make_client``); ``label`` stores
    the judgements under another name (repeated passes of one model). ``split`` scores
    only the notes of that split (``test`` / ``valid``, as the corpus assigns them); the
    judge's verdicts on other notes are kept in judgements.jsonl, the tables cover the split.
    """
    run = load_run(run_dir, corpus_dir, split)
    if not run.labelled:
        log.info("%s: corpus %s has no %s; nothing to judge", run.run_dir.name, run.corpus_dir, GOLD_FILE)
        return pd.DataFrame()
    new, info = judge_run(run, judge, modes, client=client, llm=llm, label=label, progress=progress)
    judge = label or judge
    scored = {n.note_id for n in run.notes}
    kept = [j for j in read_judgements(run.run_dir)
            if not (j.judge == judge and j.mode in modes and (split is None or j.note_id in scored))]
    judgements = kept + new
    write_jsonl(judgements, run.run_dir / JUDGEMENTS_FILE, run_id=run.run_info["run_id"])
    judges_path = run.run_dir / JUDGES_FILE
    judges = json.loads(judges_path.read_text(encoding="utf-8")) if judges_path.exists() else {}
    judges[judge] = {**info, "modes": sorted({*judges.get(judge, {}).get("modes", ()), *modes}),
                     "corpus": str(run.corpus_dir), "split": canonical_split(split) if split else None}
    write_json(judges, judges_path)
    tables = metric_tables(run, [j for j in judgements if split is None or j.note_id in scored])
    write_metric_tables(tables, run.run_dir)
    summary = tables["metrics"]
    return summary[summary["judge"] == judge].reset_index(drop=True)


def _call_counts(client: Any) -> dict[str, Any] | None:
    """Calls, response-cache hits, failures and tokens of the judge's client (None without a ledger)."""
    ledger = getattr(client, "ledger", None)
    if not isinstance(ledger, UsageLedger):
        return None
    return call_counts(ledger, network_calls=getattr(client, "network_calls", None),
                       retries=getattr(client, "retries", None))
