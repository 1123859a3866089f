"""Offline methods on the hand-written real-patient set: recall/precision/F1 and an error listing.

The set (``tests/fixtures/realnotes``, see its README) is 12 notes written by hand for real
MIMIC-III demo admissions, in phrasings independent of ``ehrlib.synth``; it is the
closest local stand-in for the hidden evaluation. This benchmark builds the demo
database in a temporary folder, runs each offline method through the project runner
(``ehrlib.pipeline.runner.run_experiment``), judges it with the deterministic matcher
(``ehrlib.judge.evaluate_run``) and writes

- ``figures/bench_realnotes.csv``: one row per method x mode x scope (``all`` and each
  note type), mean over notes as in the paper, plus micro totals and wall time;
- ``runs/realnotes/errors.csv`` (not committed): every gold entity the method got wrong
  and every prediction that matched no gold entity, with the note line, both labels,
  items and time windows, so failure patterns can be read off one table;
- ``runs/realnotes/<method>-offline/``: the runs themselves (predictions, tool calls).

It also scores the held-out set ``tests/fixtures/realnotes_holdout`` (9 notes for other
admissions, written and labelled without reading the method; see its README) into
``figures/bench_realnotes_holdout.csv`` (same columns) and ``runs/realnotes_holdout/``,
so tuning on the dev set can be checked against notes nobody tuned on (it has since been
scored many times and now counts as development data), and the MIMIC-IV development set
``tests/fixtures/realnotes_mimic4`` (6 notes on MIMIC-IV demo admissions) into
``figures/bench_realnotes_mimic4.csv`` over a MIMIC-IV demo database built the same way
(skipped when the MIMIC-IV demo CSVs are absent).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ehrlib.bench import BenchSkipped, repo_root, write_csv
from ehrlib.bench.build import demo4_folder, demo_folder
from ehrlib.corpus.io import load_corpus
from ehrlib.corpus.records import GoldEntity, ItemRef, Judgement, Prediction, TimeSpan
from ehrlib.db.build import build_db
from ehrlib.errors import ConfigError
from ehrlib.judge.evaluate import evaluate_run, load_run, metric_tables, read_judgements
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import run_experiment

__all__ = ["run", "fixture_dir", "error_rows", "HEADER", "ERROR_HEADER", "METHODS", "SETS"]

OUT_NAME = "bench_realnotes.csv"
#: evaluation set -> (fixture folder under tests/fixtures, summary CSV name); the run
#: and error folder of a set is runs/<fixture folder> (``dev`` keeps the original names)
SETS: dict[str, tuple[str, str]] = {"dev": ("realnotes", OUT_NAME),
                                    "holdout": ("realnotes_holdout", "bench_realnotes_holdout.csv"),
                                    "mimic4": ("realnotes_mimic4", "bench_realnotes_mimic4.csv")}
#: sets whose notes are on MIMIC-IV demo admissions (run against a built MIMIC-IV demo)
MIMIC4_SETS = frozenset({"mimic4"})
METHODS: tuple[str, ...] = ("inspector", "surface")
HEADER = ("method", "backend", "judge", "mode", "scope", "n_notes", "recall", "precision", "f1",
          "micro_recall", "micro_precision", "micro_f1", "n_gold", "n_pred", "n_correct", "seconds")
ERROR_HEADER = ("method", "mode", "note_id", "note_type", "error", "entity_id", "line", "line_text",
                "gold_entity", "gold_value", "gold_label", "gold_group", "gold_items", "gold_time",
                "pred_entity", "pred_value", "pred_label", "pred_items", "pred_window", "same_item",
                "pred_reason")


def fixture_dir(corpus_set: str = "dev") -> Path:
    """The committed corpus folder (notes.jsonl + gold.jsonl) of an evaluation set."""
    return repo_root() / "tests" / "fixtures" / SETS[corpus_set][0]


def _note_ids(corpus: Path) -> set[str]:
    return {n.note_id for n in load_corpus(corpus).notes}


def _items(items: Iterable[ItemRef]) -> str:
    return "; ".join(f"{i.table}:{i.itemid if i.itemid is not None else ''}:{i.label}" for i in items)


def _window(t: TimeSpan | None) -> str:
    return "" if t is None else f"{t.start or ''}..{t.end or ''}"


def _item_keys(items: Iterable[ItemRef]) -> set[tuple[str, str]]:
    return {(i.table, str(i.itemid if i.itemid is not None else i.label).lower()) for i in items}


def _gold_group(g: GoldEntity) -> str:
    if g.inconsistency is None:
        return g.label
    return "missing" if g.inconsistency.kind == "missing" else (g.inconsistency.type or "other")


def error_rows(method: str, notes: Sequence, gold: Sequence[GoldEntity], predictions: Sequence[Prediction],
               judgements: Sequence[Judgement], mode: str = "harsh") -> list[tuple]:
    """The wrong gold entities and the unmatched predictions of one judged run, as CSV rows.

    ``error`` is ``missed`` (no prediction matched the gold entity), ``false_alarm`` (matched,
    gold consistent, predicted inconsistent), ``missed_inconsistency`` (matched, gold
    inconsistent, predicted consistent) or ``spurious`` (a prediction no gold entity took:
    out of scope, duplicated, or a statement the annotator did not count).
    """
    by_note = {n.note_id: n for n in notes}
    gold_by_id = {g.entity_id: g for g in gold}
    used: set[int] = set()
    rows: list[tuple] = []
    for j in judgements:
        if j.mode != mode:
            continue
        if j.matched_prediction is not None:
            used.add(j.matched_prediction)
        if j.verdict == "correct":
            continue
        g = gold_by_id[j.entity_id]
        note = by_note[g.note_id]
        p = predictions[j.matched_prediction] if j.matched_prediction is not None else None
        if p is None:
            error = "missed"
        else:
            error = "false_alarm" if g.label == "consistent" else "missed_inconsistency"
        rows.append((method, mode, g.note_id, note.note_type, error, g.entity_id, g.line,
                     note.lines[g.line].strip(), g.entity, g.value or "", g.label, _gold_group(g),
                     _items(g.items), _window(g.time),
                     p.entity if p else "", (p.value or "") if p else "", p.label if p else "",
                     _items(p.items) if p else "", _window(p.time_window) if p else "",
                     "" if p is None else bool(_item_keys(g.items) & _item_keys(p.items)),
                     p.reason if p else ""))
    scored = {g.note_id for g in gold}
    for idx, p in enumerate(predictions):
        if idx in used or p.note_id not in scored:
            continue
        note = by_note[p.note_id]
        text = note.lines[p.line].strip() if 0 <= p.line < len(note.lines) else ""
        rows.append((method, mode, p.note_id, note.note_type, "spurious", "", p.line, text, "", "", "", "",
                     "", "", p.entity, p.value or "", p.label, _items(p.items), _window(p.time_window), "",
                     p.reason))
    return rows


def _summary_rows(method: str, tables: dict, seconds: float) -> list[tuple]:
    rows = []
    for scope_col, frame in (("all", tables["metrics"]), ("note_type", tables["metrics_by_note_type"])):
        for rec in frame.to_dict("records"):
            scope = "all" if scope_col == "all" else rec["note_type"]
            rows.append((method, rec.get("backend") or "offline", rec["judge"], rec["mode"], scope,
                         rec["n_notes"], f"{rec['recall']:.4f}", f"{rec['precision']:.4f}", f"{rec['f1']:.4f}",
                         f"{rec['micro_recall']:.4f}", f"{rec['micro_precision']:.4f}", f"{rec['micro_f1']:.4f}",
                         rec["n_gold"], rec["n_pred"], rec["n_correct"], f"{seconds:.2f}"))
    return rows


def run(out_dir: Path, methods: Sequence[str] = METHODS, runs_dir: Path | None = None,
        db: Path | None = None, note_ids: Sequence[str] = (), sets: Sequence[str] = tuple(SETS),
        db4: Path | None = None) -> Path:
    """Run, judge and list errors for each offline method on each set; returns the dev summary CSV.

    ``db`` / ``db4`` reuse already built MIMIC-III / MIMIC-IV demo databases instead of
    building them (the MIMIC-IV set is left out when neither ``db4`` nor the MIMIC-IV
    demo CSVs are there);
    ``note_ids`` restricts the run to some notes (tests): a set holding none of them is not
    run; the default is every note. ``runs_dir`` is the dev set's run folder; the held-out
    set's sits next to it with ``_holdout`` appended. Returns the first summary written
    (the dev set's unless it was not run).
    """
    src = demo_folder()
    if src is None and db is None and any(s not in MIMIC4_SETS for s in sets):
        raise BenchSkipped("MIMIC-III demo folder absent (set EHRLIB_MIMIC3_DEMO or run "
                           "`ehrlib download mimic-iii-demo DIR`)")
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise ConfigError(f"unknown evaluation set(s) {unknown}; choose from {sorted(SETS)}")
    corpora = {s: fixture_dir(s) for s in sets}
    if "dev" in corpora and not (corpora["dev"] / "gold.jsonl").exists():
        raise BenchSkipped(f"{corpora['dev']}: the realnotes fixture is missing")
    base = Path(runs_dir) if runs_dir is not None else repo_root() / "runs" / "realnotes"
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-realnotes-") as tmp:
        for name, corpus in corpora.items():
            if not (corpus / "gold.jsonl").exists() or (note_ids and not set(note_ids) & _note_ids(corpus)):
                continue
            if name in MIMIC4_SETS:
                src4 = demo4_folder()
                if db4 is None:
                    if src4 is None:
                        continue
                    db4 = build_db(src4, Path(tmp) / "mimic4_demo.duckdb", progress=False).path
                set_db = db4
            else:
                if db is None:
                    if src is None:  # (checked above: one of them is given)
                        raise BenchSkipped("MIMIC-III demo folder absent")
                    db = build_db(src, Path(tmp) / "mimic3_demo.duckdb", progress=False).path
                set_db = db
            set_runs = base if name == "dev" else base.with_name(f"{base.name}_{name}")
            written.append(_run_set(corpus, Path(out_dir) / SETS[name][1], set_runs, set_db, methods, note_ids))
    if not written:
        raise BenchSkipped(f"none of the sets {list(sets)} holds the requested notes")
    return written[0]


def _run_set(corpus: Path, out_csv: Path, runs_dir: Path, db: Path, methods: Sequence[str],
             note_ids: Sequence[str]) -> Path:
    """One evaluation set: run and judge each method, write its summary CSV and error listing."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    wanted = tuple(sorted(set(note_ids) & _note_ids(corpus))) if note_ids else ()
    summary: list[tuple] = []
    errors: list[tuple] = []
    for method in methods:
        run_id = f"{method}-offline"
        # the runner resumes a run dir it finds; a benchmark must measure the current code
        shutil.rmtree(runs_dir / run_id, ignore_errors=True)
        params = RunParams(corpus=str(corpus), db=str(db), method=method, backend="offline",
                           run_id=run_id, runs_dir=str(runs_dir), note_ids=wanted, progress=False)
        t0 = time.perf_counter()
        run_dir = run_experiment(params)
        seconds = time.perf_counter() - t0
        evaluate_run(run_dir, corpus, judge="matcher", progress=False)
        data = load_run(run_dir, corpus)
        judgements = [j for j in read_judgements(run_dir) if j.judge == "matcher"]
        summary += _summary_rows(method, metric_tables(data, judgements), seconds)
        for mode in ("harsh", "lenient"):
            errors += error_rows(method, data.notes, data.gold, data.predictions, judgements, mode)
    write_csv(runs_dir / "errors.csv", ERROR_HEADER, errors)
    return write_csv(out_csv, HEADER, summary)


if __name__ == "__main__":  # pragma: no cover - convenience: python -m ehrlib.bench.realnotes
    print(run(Path(os.environ.get("EHRLIB_BENCH_OUT", "figures"))))
