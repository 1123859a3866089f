"""Quality benchmark of the offline methods: offline inspector vs the surface baseline.

On the synthetic test split (the embedded hospital and its note corpus, as ``ehrlib demo``
builds them) each method runs through the project runner, is judged with the
deterministic matcher (:mod:`ehrlib.judge.matcher`, harsh and lenient), and
``figures/bench_quality.csv`` gets one row per method x mode x scope:

- ``scope``: ``all``, ``note_type=<type>`` and ``inconsistency=<type>`` (recall over the
  gold entities of that inconsistency type; precision and F1 are only defined for
  ``all`` and note types, where predictions can be attributed);
- ``recall``, ``precision``, ``f1``: the paper's per-note means; ``micro_*`` totals;
- ``median_s_per_note``: median wall seconds of the runner's per-note work.

Targets from issue 7: inspector lenient F1 >= 0.80, >= 15 points above surface,
<= 2 s per note (median). The benchmark reports; it does not assert.
"""
from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ehrlib.bench import repo_root, write_csv
from ehrlib.bench.build import demo_folder
from ehrlib.corpus.io import load_corpus
from ehrlib.db.build import build_db
from ehrlib.judge.evaluate import evaluate_run, load_run, read_judgements
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import run_experiment
from ehrlib.synth import generate_hospital
from ehrlib.synth.notes import write_corpus

__all__ = ["run", "HEADER", "METHODS", "score_rows"]

OUT_NAME = "bench_quality.csv"
METHODS: tuple[str, ...] = ("inspector", "surface")
HEADER = ("corpus", "method", "backend", "judge", "mode", "scope", "n_notes", "n_gold", "n_pred", "recall",
          "precision", "f1", "micro_recall", "micro_precision", "micro_f1", "median_s_per_note")


def _median_seconds(run_dir: Path) -> float | None:
    walls = []
    with open(run_dir / "progress.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("wall_s") is not None:
                walls.append(float(rec["wall_s"]))
    return round(statistics.median(walls), 3) if walls else None


def _f1(r: float, p: float) -> float:
    return 2 * r * p / (r + p) if r + p else 0.0


def score_rows(gold: Sequence[Any], preds: Sequence[Any], judgements: Iterable[Any], note_types: Mapping[str, str],
               corpus: str, method: str, mode: str, seconds: float | None) -> list[dict[str, Any]]:
    """Rows of the CSV for one judged run and mode (pure: records in, dicts out)."""
    verdict = {(j.note_id, j.entity_id): j for j in judgements if j.mode == mode}
    rows: list[dict[str, Any]] = []

    def block(scope: str, g_sel: list[Any], p_sel: list[Any], with_precision: bool) -> None:
        notes = sorted({g.note_id for g in g_sel} | ({p.note_id for p in p_sel} if with_precision else set()))
        rec, prec, f1s = [], [], []
        n_correct = 0
        for nid in notes:
            ng = [g for g in g_sel if g.note_id == nid]
            npred = [p for p in p_sel if p.note_id == nid]
            c = sum(1 for g in ng if verdict.get((nid, g.entity_id)) is not None
                    and verdict[(nid, g.entity_id)].verdict == "correct")
            n_correct += c
            r = c / len(ng) if ng else 0.0
            p = c / len(npred) if npred else 0.0
            rec.append(r)
            prec.append(p)
            f1s.append(_f1(r, p))
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
            "median_s_per_note": seconds if scope == "all" else "",
        })

    block("all", list(gold), list(preds), True)
    for nt in sorted(set(note_types.values())):
        block(f"note_type={nt}", [g for g in gold if note_types.get(g.note_id) == nt],
              [p for p in preds if note_types.get(p.note_id) == nt], True)
    kinds = sorted({(g.inconsistency.type or g.inconsistency.kind) for g in gold if g.inconsistency is not None})
    for kind in kinds:
        sel = [g for g in gold if g.inconsistency is not None and (g.inconsistency.type or g.inconsistency.kind) == kind]
        block(f"inconsistency={kind}", sel, [], False)
    block("consistent_only", [g for g in gold if g.label == "consistent"], [], False)
    return rows


def _run_method(method: str, corpus_dir: Path, db: Path, runs_dir: Path, note_ids: Sequence[str], tag: str) -> Path:
    params = RunParams(corpus=str(corpus_dir), db=str(db), method=method, backend="offline",
                       run_id=f"quality-{tag}-{method}", runs_dir=str(runs_dir), note_ids=tuple(note_ids),
                       progress=True)
    return run_experiment(params)


def _evaluate(tag: str, corpus_dir: Path, db: Path, runs_dir: Path, note_ids: Sequence[str] | None
              ) -> list[dict[str, Any]]:
    corpus = load_corpus(corpus_dir)
    ids = list(note_ids) if note_ids is not None else [n.note_id for n in corpus.notes]
    types = {n.note_id: n.note_type for n in corpus.notes if n.note_id in set(ids)}
    out: list[dict[str, Any]] = []
    for method in METHODS:
        run_dir = _run_method(method, corpus_dir, db, runs_dir, ids, tag)
        evaluate_run(run_dir, corpus_dir)
        data = load_run(run_dir, corpus_dir)
        judgements = read_judgements(run_dir)
        gold = [g for g in data.gold if g.note_id in types]
        preds = [p for p in data.predictions if p.note_id in types]
        seconds = _median_seconds(run_dir)
        for mode in ("harsh", "lenient"):
            out += score_rows(gold, preds, [j for j in judgements if j.judge == "matcher"], types, tag, method,
                              mode, seconds)
    return out


def run(out_dir: Path, *, patients: int = 40, seed: int = 0, notes_per_type: int = 10,
        work_dir: Path | None = None, extra_corpora: Mapping[str, tuple[Path, Path]] | None = None) -> Path:
    """Build the hospital and corpus (in ``work_dir`` or a temporary folder), run and judge
    both methods on the test split (plus ``extra_corpora``: name -> (corpus dir, db)),
    and write ``out_dir/bench_quality.csv``."""
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
        rows = _evaluate("synthetic_test", corpus_dir, db, work / "runs", test_ids)
        extra = dict(extra_corpora) if extra_corpora is not None else _real_patient_sets(work)
        for name, (cdir, cdb) in extra.items():
            rows += _evaluate(name, Path(cdir), Path(cdb), work / "runs", None)
    return write_csv(Path(out_dir) / OUT_NAME, HEADER, [[r[h] for h in HEADER] for r in rows])


def _real_patient_sets(work: Path) -> dict[str, tuple[Path, Path]]:
    """The hand-written real-patient sets on the MIMIC-III demo, when its CSVs are present:
    ``tests/fixtures/handwritten`` (dev), ``handwritten_holdout`` (written blind), the
    independently written ``realnotes`` and its never-tuned-on ``realnotes_holdout``
    (scored only: its errors are not read)."""
    src = demo_folder()
    if src is None:
        return {}
    db = work / "mimic3demo.duckdb"
    if not db.exists():
        build_db(src, db)
    fixtures = repo_root() / "tests" / "fixtures"
    return {name: (fixtures / name, db) for name in ("handwritten", "handwritten_holdout", "realnotes",
                                                     "realnotes_holdout")
            if (fixtures / name / "gold.jsonl").exists()}
