"""Quality benchmark of the offline methods: offline inspector vs the surface baseline.

On the synthetic test split (the embedded hospital and its note corpus, as ``ehrlib demo``
builds them) each method runs through the project runner, is judged with the
deterministic matcher (:mod:`ehrlib.judge.matcher`, harsh and lenient), and
``figures/bench_quality.csv`` gets one row per method x mode x scope:

- ``scope``: ``all``, ``note_type=<type>`` and ``inconsistency=<type>`` (recall over the
  gold entities of that inconsistency type; precision and F1 are only defined for
  ``all`` and note types, where predictions can be attributed);
- ``recall``, ``precision``, ``f1``: the paper's per-note means; ``micro_*`` totals;
- ``median_s_per_note``: median wall seconds of the runner's per-note work;
- ``alarm_precision``: the share of ``inconsistent`` predictions the judge credits (alarms
  withheld for low confidence are ``unverified`` and not alarms); ``inconsistent_recall``:
  the share of gold inconsistent statements credited;
- ``ceiling_f1``: the per-note mean F1 the run would score if every prediction the judge
  paired with a gold entity carried the right label — the best any verifier can do on
  this extraction. Both methods share the extractor, so the gap between the baseline's
  ``f1`` and the inspector's ``ceiling_f1`` bounds what verification can add.
- ``paired_recall``: the share of gold statements the judge paired with any prediction,
  right or wrong: the extraction's recall (``1 - unmatched_share`` is its precision).

The real-patient sets (hand-written notes on MIMIC-III and MIMIC-IV demo admissions,
:data:`DEV_SETS`) are scored as well when the demo CSVs are present. The sealed estimate
set ``tests/fixtures/estimate_blind`` is scored only on request —
``ehrlib bench --only quality --with-estimate`` or ``EHRLIB_BENCH_ESTIMATE=1`` — once,
for the final number; development runs never include it.

Targets from issue 7: inspector lenient F1 >= 0.80, >= 15 points above surface,
<= 2 s per note (median). The benchmark reports; it does not assert.
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ehrlib.bench import repo_root, write_csv
from ehrlib.bench.build import demo4_folder, demo_folder
from ehrlib.corpus.io import load_corpus
from ehrlib.db.build import build_db
from ehrlib.errors import DataError
from ehrlib.judge.evaluate import evaluate_run, load_run, read_judgements
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import run_experiment
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.synth import generate_hospital
from ehrlib.synth.notes import write_corpus
from ehrlib.viz import plot_method_scores, savefig

__all__ = ["run", "evaluate_set", "save_figure", "HEADER", "METHODS", "score_rows", "real_patient_sets", "DEV_SETS",
           "ESTIMATE_SET", "ESTIMATE_ENV"]

OUT_NAME = "bench_quality.csv"
METHODS: tuple[str, ...] = ("inspector", "surface")
HEADER = ("corpus", "method", "backend", "judge", "mode", "scope", "n_notes", "n_gold", "n_pred", "recall",
          "precision", "f1", "micro_recall", "micro_precision", "micro_f1", "unmatched_share", "median_s_per_note",
          "ceiling_f1", "alarm_precision", "inconsistent_recall", "paired_recall")


def _wall_seconds(run_dir: Path) -> list[float]:
    walls = []
    with open(run_dir / "progress.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("wall_s") is not None:
                walls.append(float(rec["wall_s"]))
    return walls


def _f1(r: float, p: float) -> float:
    return 2 * r * p / (r + p) if r + p else 0.0


def score_rows(gold: Sequence[Any], preds: Sequence[Any], judgements: Iterable[Any], note_types: Mapping[str, str],
               corpus: str, method: str, mode: str, seconds: float | None) -> list[dict[str, Any]]:
    """Rows of the CSV for one judged run and mode (pure: records in, dicts out).

    A judgement's ``matched_prediction`` indexes ``preds``; ``unmatched_share`` is the
    share of predictions the judge paired with no gold entity (statements the annotators
    did not label, or spans too far from any label).
    """
    verdict = {(j.note_id, j.entity_id): j for j in judgements if j.mode == mode}
    matched = {id(preds[j.matched_prediction]) for j in verdict.values()
               if j.matched_prediction is not None and 0 <= j.matched_prediction < len(preds)}
    credited = {id(preds[j.matched_prediction]) for j in verdict.values() if j.verdict == "correct"
                and j.matched_prediction is not None and 0 <= j.matched_prediction < len(preds)}
    rows: list[dict[str, Any]] = []

    def block(scope: str, g_sel: list[Any], p_sel: list[Any], with_precision: bool) -> None:
        notes = sorted({g.note_id for g in g_sel} | ({p.note_id for p in p_sel} if with_precision else set()))
        rec, prec, f1s, ceiling = [], [], [], []
        n_correct = n_paired = 0
        for nid in notes:
            ng = [g for g in g_sel if g.note_id == nid]
            npred = [p for p in p_sel if p.note_id == nid]
            c = sum(1 for g in ng if verdict.get((nid, g.entity_id)) is not None
                    and verdict[(nid, g.entity_id)].verdict == "correct")
            paired = sum(1 for g in ng if verdict.get((nid, g.entity_id)) is not None
                         and verdict[(nid, g.entity_id)].matched_prediction is not None)
            n_correct += c
            n_paired += paired
            ceiling.append(_f1(paired / len(ng) if ng else 0.0, paired / len(npred) if npred else 0.0))
            r = c / len(ng) if ng else 0.0
            p = c / len(npred) if npred else 0.0
            rec.append(r)
            prec.append(p)
            f1s.append(_f1(r, p))
        alarms = [p for p in p_sel if p.label == "inconsistent"]
        bad = [g for g in g_sel if g.label == "inconsistent"]
        mr = n_correct / len(g_sel) if g_sel else 0.0
        mp = n_correct / len(p_sel) if p_sel and with_precision else None
        rows.append({
            "corpus": corpus, "method": method, "backend": "offline", "judge": "matcher", "mode": mode,
            "scope": scope, "n_notes": len(notes), "n_gold": len(g_sel), "n_pred": len(p_sel) if with_precision else "",
            "recall": round(sum(rec) / len(rec), 4) if rec else "",
            "precision": round(sum(prec) / len(prec), 4) if with_precision and prec else "",
            "f1": round(sum(f1s) / len(f1s), 4) if with_precision and f1s else "",
            "micro_recall": round(mr, 4),
            "micro_precision": round(mp, 4) if mp is not None else "",
            "micro_f1": round(_f1(mr, mp), 4) if mp is not None else "",
            "unmatched_share": (round(sum(1 for p in p_sel if id(p) not in matched) / len(p_sel), 4)
                                if with_precision and p_sel else ""),
            "median_s_per_note": seconds if scope == "all" else "",
            # extraction alone: the share of gold statements the judge paired with any prediction
            "paired_recall": round(n_paired / len(g_sel), 4) if g_sel else "",
            "ceiling_f1": round(sum(ceiling) / len(ceiling), 4) if with_precision and ceiling else "",
            "alarm_precision": (round(sum(1 for p in alarms if id(p) in credited) / len(alarms), 4)
                                if with_precision and alarms else ""),
            "inconsistent_recall": (round(sum(1 for g in bad if verdict.get((g.note_id, g.entity_id)) is not None
                                              and verdict[(g.note_id, g.entity_id)].verdict == "correct") / len(bad), 4)
                                    if bad else ""),
        })

    block("all", list(gold), list(preds), True)
    for nt in sorted(set(note_types.values())):
        block(f"note_type={nt}", [g for g in gold if note_types.get(g.note_id) == nt],
              [p for p in preds if note_types.get(p.note_id) == nt], True)
    kinds = sorted({(g.inconsistency.type or g.inconsistency.kind) for g in gold if g.inconsistency is not None})
    for kind in kinds:
        sel = [g for g in gold if g.inconsistency is not None and (g.inconsistency.type
                                                                   or g.inconsistency.kind) == kind]
        block(f"inconsistency={kind}", sel, [], False)
    block("consistent_only", [g for g in gold if g.label == "consistent"], [], False)
    return rows


def _run_method(method: str, corpus_dir: Path, db: Path, runs_dir: Path, note_ids: Sequence[str], tag: str,
                overrides: Mapping[str, Any] | None = None) -> Path:
    name = method.split("+")[0]   # "inspector+ner": the inspector with run-parameter overrides
    params = RunParams(corpus=str(corpus_dir), db=str(db), method=name, backend="offline",
                       run_id=f"quality-{tag}-{method.replace('+', '-')}", runs_dir=str(runs_dir),
                       note_ids=tuple(note_ids), progress=True, **dict(overrides or {}))
    return run_experiment(params)


def evaluate_set(tag: str, corpus_dir: Path, parts: Sequence[tuple[Path, Sequence[str] | None]], runs_dir: Path,
                 methods: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Run and judge each method on one corpus, scored as one set.

    ``parts`` are (database, note ids or ``None`` for all notes) pairs: a corpus whose
    notes sit on two databases (MIMIC-III and MIMIC-IV admissions) runs once per database
    and its gold, predictions and judgements are pooled before scoring. ``methods`` maps
    a method label (``inspector``, ``surface``, or ``inspector+<variant>``) to run
    parameters that differ from the defaults; by default both offline methods as they are.
    """
    corpus = load_corpus(corpus_dir)
    out: list[dict[str, Any]] = []
    for method, overrides in (methods if methods is not None else {m: {} for m in METHODS}).items():
        gold: list[Any] = []
        preds: list[Any] = []
        judgements: list[Any] = []
        walls: list[float] = []
        types: dict[str, str] = {}
        for k, (db, note_ids) in enumerate(parts):
            ids = list(note_ids) if note_ids is not None else [n.note_id for n in corpus.notes]
            part_types = {n.note_id: n.note_type for n in corpus.notes if n.note_id in set(ids)}
            types.update(part_types)
            run_dir = _run_method(method, corpus_dir, db, runs_dir, ids, tag if len(parts) == 1 else f"{tag}-{k}",
                                  overrides)
            evaluate_run(run_dir, corpus_dir)
            data = load_run(run_dir, corpus_dir)
            gold += [g for g in data.gold if g.note_id in part_types]
            pooled = {i: len(preds) + k for k, i in enumerate(
                i for i, p in enumerate(data.predictions) if p.note_id in part_types)}
            preds += [data.predictions[i] for i in pooled]
            judgements += [dataclasses.replace(j, matched_prediction=pooled.get(j.matched_prediction))
                           if j.matched_prediction is not None else j
                           for j in read_judgements(run_dir) if j.judge == "matcher" and j.note_id in part_types]
            walls += _wall_seconds(run_dir)
        seconds = round(statistics.median(walls), 3) if walls else None
        for mode in ("harsh", "lenient"):
            out += score_rows(gold, preds, judgements, types, tag, method, mode, seconds)
    return out


#: hand-written real-patient sets scored on every run: (fixture folder, databases its notes sit on)
DEV_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("handwritten", ("mimic3",)), ("handwritten_holdout", ("mimic3",)), ("realnotes", ("mimic3",)),
    ("realnotes_holdout", ("mimic3",)), ("precision_dev", ("mimic3",)), ("realnotes_mimic4", ("mimic4",)),
    ("realnotes_mixed", ("mimic3", "mimic4")), ("realnotes_blind", ("mimic3", "mimic4")),
    ("realnotes_blind2", ("mimic3", "mimic4")), ("realnotes_blind3", ("mimic3", "mimic4")),
    ("realnotes_blind4", ("mimic3", "mimic4")), ("realnotes_blind5", ("mimic3", "mimic4")),
    ("realnotes_blind6", ("mimic3", "mimic4")), ("realnotes_blind7", ("mimic3", "mimic4")),
    ("realnotes_blind8", ("mimic3", "mimic4")), ("realnotes_blind9", ("mimic3", "mimic4")),
    ("realnotes_blind10", ("mimic3", "mimic4")), ("realnotes_blind11", ("mimic3", "mimic4")))
#: the sealed estimate set: scored only on request (``with_estimate``), once, at the end
ESTIMATE_SET: tuple[str, tuple[str, ...]] = ("estimate_blind", ("mimic3", "mimic4"))
#: environment switch equivalent to ``ehrlib bench --only quality --with-estimate``
ESTIMATE_ENV = "EHRLIB_BENCH_ESTIMATE"


def run(out_dir: Path, *, patients: int = 40, seed: int = 0, notes_per_type: int = 10,
        work_dir: Path | None = None, extra_corpora: Mapping[str, tuple[Path, Path]] | None = None,
        with_estimate: bool | None = None) -> Path:
    """Build the hospital and corpus (in ``work_dir`` or a temporary folder), run and judge
    both methods on the test split (plus ``extra_corpora``: name -> (corpus dir, db); by
    default the real-patient sets of :data:`DEV_SETS` whose demo databases are present),
    and write ``out_dir/bench_quality.csv``.

    ``with_estimate`` (default: the ``EHRLIB_BENCH_ESTIMATE`` environment variable set
    to ``1``) adds the sealed estimate set; never pass it while developing.
    """
    if with_estimate is None:
        with_estimate = os.environ.get(ESTIMATE_ENV, "") == "1"
    with tempfile.TemporaryDirectory(prefix="ehrlib-quality-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / "hospital.duckdb"
        corpus_dir = work / "corpus"
        if not db.exists():
            generate_hospital(db, patients=patients, seed=seed)
        if not (corpus_dir / "gold.jsonl").exists():
            write_corpus(db, corpus_dir, seed=seed, notes_per_type=notes_per_type, progress=False)
        test_ids = [n.note_id for n in load_corpus(corpus_dir, split="test").notes]
        rows = evaluate_set("synthetic_test", corpus_dir, [(db, test_ids)], work / "runs")
        if extra_corpora is not None:
            for name, (cdir, cdb) in extra_corpora.items():
                rows += evaluate_set(name, Path(cdir), [(Path(cdb), None)], work / "runs")
        else:
            for name, (cdir, parts) in real_patient_sets(work, with_estimate=with_estimate).items():
                rows += evaluate_set(name, cdir, parts, work / "runs")
    path = write_csv(Path(out_dir) / OUT_NAME, HEADER, [[r[h] for h in HEADER] for r in rows])
    save_figure(rows, Path(out_dir))
    return path


def save_figure(rows: Sequence[Mapping[str, Any]], out_dir: Path) -> Path:
    """``out_dir/bench_quality.png``: lenient F1 of both methods on every corpus scored,
    the sealed estimate set starred (it is only there when this run scored it).
    """
    table = pd.DataFrame([r for r in rows if r["scope"] == "all" and r["mode"] == "lenient"])
    # the ceiling is drawn on the inspector's bar only: the baseline shares its extraction
    if "ceiling_f1" in table.columns:
        table["ceiling"] = table["ceiling_f1"].where(table["method"] == "inspector", "")
    fig = plot_method_scores(table, label="corpus", hue="method", marked=(ESTIMATE_SET[0],),
                             mark_note="sealed set, scored once", ceiling="ceiling",
                             ceiling_note="every extracted statement labelled right",
                             title="Offline inspector vs surface baseline (lenient matcher, per-note mean)")
    return savefig(fig, OUT_NAME.removesuffix(".csv"), out_dir=out_dir, formats=("png",))[0]


def _demo_db(work: Path, flavor: str) -> Path | None:
    src = demo_folder() if flavor == "mimic3" else demo4_folder()
    if src is None:
        return None
    db = work / f"{flavor}demo.duckdb"
    if not db.exists():
        build_db(src, db, progress=False)
    return db


def _admissions(db: Path) -> set[int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        schema = schema_map(detect_flavor(con))
        pt = schema.table("admissions")
        return {int(r[0]) for r in con.execute(f"SELECT DISTINCT {pt.col('hadm_id')} FROM {pt.ref}").fetchall()}  # noqa: S608
    finally:
        con.close()


def real_patient_sets(work: Path, *, with_estimate: bool = False
                      ) -> dict[str, tuple[Path, list[tuple[Path, list[str] | None]]]]:
    """The hand-written real-patient sets whose demo databases are present: name ->
    (corpus folder, [(database, note ids)]).

    ``tests/fixtures/handwritten`` (dev), ``handwritten_holdout`` (written blind),
    ``realnotes`` and ``realnotes_holdout`` (scored many times: development data now),
    ``precision_dev`` (non-statement prose) on the MIMIC-III demo; ``realnotes_mimic4``
    on the MIMIC-IV demo; ``realnotes_mixed`` and ``realnotes_blind`` to ``realnotes_blind11``
    (earlier estimate sets, each scored once and development data since) on both. With
    ``with_estimate``, the sealed ``estimate_blind`` set too (an error when there is none),
    each note run against the demo database that holds its admission. A set whose
    database is absent is left out (the CSV simply lacks its rows).
    """
    fixtures = repo_root() / "tests" / "fixtures"
    found = {flavor: _demo_db(work, flavor) for flavor in ("mimic3", "mimic4")}
    dbs = {flavor: db for flavor, db in found.items() if db is not None}
    if with_estimate and not (fixtures / ESTIMATE_SET[0] / "gold.jsonl").exists():
        raise DataError(f"no sealed estimate set: {fixtures / ESTIMATE_SET[0]} has no gold.jsonl (the last one "
                        "was scored and is development data now; write a new one blind before asking for it)")
    wanted = list(DEV_SETS) + ([ESTIMATE_SET] if with_estimate else [])
    out: dict[str, tuple[Path, list[tuple[Path, list[str] | None]]]] = {}
    for name, flavors in wanted:
        cdir = fixtures / name
        if not (cdir / "gold.jsonl").exists() or any(f not in dbs for f in flavors):
            continue
        if len(flavors) == 1:
            out[name] = (cdir, [(dbs[flavors[0]], None)])
            continue
        notes = load_corpus(cdir).notes
        parts: list[tuple[Path, list[str] | None]] = []
        for f in flavors:
            held = _admissions(dbs[f])
            ids = [n.note_id for n in notes if n.hadm_id is not None and int(n.hadm_id) in held]
            if ids:
                parts.append((dbs[f], ids))
        out[name] = (cdir, parts)
    return out
