"""How well the NER tagger extracts, alone and end to end, beside the framework's extraction.

Leave-one-set-out over the real-patient development sets: for each set a tagger is
trained on the synthetic validation split and every *other* set, so the set it extracts
is one it never saw; then the inspector runs on that set twice, once with its own
extraction and once with ``extraction="ner"``, both judged by the matcher. Reported per
set and extraction: the tagger's own span recall/precision (overlap with a gold span on
the same line), the extraction-level recall/precision of the run (gold statements the
judge paired with any prediction, predictions paired with any gold statement) and the
lenient end-to-end recall/precision/F1 (per-note means, as the paper's tables).
"""
from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ehrlib.corpus.io import Corpus, load_corpus
from ehrlib.errors import ConfigError
from ehrlib.ner.bio import locate_spans, tags_to_spans, tokenize
from ehrlib.ner.tagger import MODEL_FILE, Tagger
from ehrlib.ner.training import dev_set_folders, synthetic_dev_corpus, train_on

__all__ = ["span_scores", "loso_rows", "extraction_table", "run_extraction_scores", "EXTRACTIONS"]

#: row labels of the comparison, in the paper's order (the framework first)
EXTRACTIONS = {"inspector": "EHR-Inspector extraction", "inspector+ner": "Trained NER (token tagger)"}


def span_scores(tagger: Tagger, corpus: Corpus) -> dict[str, float | int]:
    """Tagger spans against gold spans of ``corpus``: a gold span is found when a tagged
    span on its line overlaps it; a tagged span is right when it overlaps a gold span.
    """
    gold_by_line: dict[tuple[str, int], list[str]] = defaultdict(list)
    for g in corpus.gold:
        gold_by_line[(g.note_id, g.line)].append(g.entity)
    n_gold = n_found = n_pred = n_right = 0
    for note in corpus.notes:
        for i, line in enumerate(note.lines):
            tokens = tokenize(line)
            gold, lost = locate_spans(i, line, gold_by_line.get((note.note_id, i), ()))
            n_gold += len(gold) + len(lost)   # a gold text not in its line counts as missed
            if not tokens:
                continue
            pred = tags_to_spans(i, line, tokens, tagger.tag(line, tokens))
            n_pred += len(pred)
            n_found += sum(1 for g in gold if any(p.start < g.end and g.start < p.end for p in pred))
            n_right += sum(1 for p in pred if any(p.start < g.end and g.start < p.end for g in gold))
    return {"n_gold": n_gold, "n_tagged": n_pred, "span_recall": round(n_found / n_gold, 4) if n_gold else 0.0,
            "span_precision": round(n_right / n_pred, 4) if n_pred else 0.0}


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / MODEL_FILE).read_bytes()).hexdigest()[:10]


def loso_rows(work_dir: str | os.PathLike[str], *, sets: Sequence[str] | None = None, synthetic: bool = True,
              patients: int = 40, notes_per_type: int = 10) -> list[dict[str, Any]]:
    """Leave-one-set-out rows (one per held-out set and extraction), built in ``work_dir``.

    ``sets`` limits the held-out sets (default: every development set whose demo
    database is present); training always uses all other present sets.
    """
    # deferred: the benchmark runs notes through the pipeline; only the evaluation needs it
    from ehrlib.bench.quality import evaluate_set, real_patient_sets

    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    folders = dev_set_folders()
    corpora = {n: load_corpus(f) for n, f in folders.items()}
    runnable = real_patient_sets(work)
    held = list(sets) if sets is not None else [n for n in folders if n in runnable]
    if not held:
        raise ConfigError("no real-patient development set can be run: the MIMIC demo databases were not found "
                          "(set EHRLIB_MIMIC3_DEMO / EHRLIB_MIMIC4_DEMO to the demo CSV folders)")
    missing = [n for n in held if n not in runnable]
    if missing:
        raise ConfigError(f"cannot hold out {', '.join(missing)}: no such development set with its demo database "
                          f"(have {', '.join(sorted(runnable)) or 'none'})")
    extra: dict[str, Corpus] = {}
    if synthetic:
        extra["synthetic_validation"] = synthetic_dev_corpus(work / "synthetic", patients=patients,
                                                             notes_per_type=notes_per_type)[1]
    out: list[dict[str, Any]] = []
    for name in held:
        tagger, manifest = train_on({**extra, **{n: c for n, c in corpora.items() if n != name}})
        model = tagger.save(work / "models" / name, {**manifest, "held_out": name})
        spans = span_scores(tagger, corpora[name])
        cdir, parts = runnable[name]
        rows = evaluate_set(f"loso-{name}", cdir, parts, work / "runs", {"inspector": {}})
        rows += evaluate_set(f"loso-{name}-{_digest(model)}", cdir, parts, work / "runs",
                             {"inspector+ner": {"extraction": "ner", "ner_model": str(model)}})
        for r in rows:
            if r["scope"] != "all" or r["mode"] != "lenient":
                continue
            ner = r["method"] == "inspector+ner"
            out.append({"set": name, "extraction": EXTRACTIONS[r["method"]], "n_notes": r["n_notes"],
                        "n_gold": r["n_gold"], "n_pred": r["n_pred"],
                        "span_recall": spans["span_recall"] if ner else None,
                        "span_precision": spans["span_precision"] if ner else None,
                        "extraction_recall": r["paired_recall"],
                        "extraction_precision": round(1 - float(r["unmatched_share"]), 4)
                        if r["unmatched_share"] != "" else None,
                        "recall": r["recall"], "precision": r["precision"], "f1": r["f1"]})
    return out


def extraction_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The comparison in the paper's layout: one row per extraction, metrics in percent,
    each the unweighted mean over the held-out sets (every set counts once).
    """
    df = pd.DataFrame(list(rows))
    if df.empty:
        return pd.DataFrame(columns=["extraction"])
    metrics = ["span_recall", "span_precision", "extraction_recall", "extraction_precision", "recall", "precision",
               "f1"]
    table = df.groupby("extraction", sort=False)[metrics].agg(lambda s: pd.to_numeric(s).mean())
    table = (100 * table.astype(float)).round(2)
    table.insert(0, "n_sets", df.groupby("extraction", sort=False)["set"].nunique())
    table = table.rename(columns={"recall": "lenient_recall", "precision": "lenient_precision", "f1": "lenient_f1"})
    return table.reset_index()


def run_extraction_scores(run_dirs: Mapping[str, str | os.PathLike[str]], *, mode: str = "lenient") -> pd.DataFrame:
    """Judged runs side by side (one row per label): extraction recall/precision (the
    judge's pairing of predictions with gold statements) and end-to-end recall, precision
    and F1 (per-note means), in percent.
    """
    # deferred: see above: the benchmark loads the pipeline
    from ehrlib.bench.quality import score_rows
    from ehrlib.judge.evaluate import load_run, read_judgements

    rows = []
    for label, run_dir in run_dirs.items():
        data = load_run(run_dir)
        judged = [j for j in read_judgements(run_dir) if j.judge == "matcher"]
        types = {n.note_id: n.note_type for n in data.notes}
        r = next(x for x in score_rows(data.gold, data.predictions, judged, types, "", "", mode, None)
                 if x["scope"] == "all")
        pct = {k: round(100 * float(r[k]), 2) if r[k] != "" else None
               for k in ("paired_recall", "recall", "precision", "f1")}
        rows.append({"extraction": label, "n_notes": r["n_notes"], "n_gold": r["n_gold"], "n_pred": r["n_pred"],
                     "extraction_recall": pct["paired_recall"],
                     "extraction_precision": round(100 * (1 - float(r["unmatched_share"])), 2)
                     if r["unmatched_share"] != "" else None,
                     f"{mode}_recall": pct["recall"], f"{mode}_precision": pct["precision"], f"{mode}_f1": pct["f1"]})
    return pd.DataFrame(rows)
