"""Human review of a judge (paper Appendix F.1, F.2, F.4): sample, review sheet, agreement.

The paper trusted its LLM judges only after people checked samples of their verdicts
(300 harsh verdicts by the authors: 99.46% agreement; 200 lenient verdicts by four
clinicians: 95.35%). This module does the same for any judge here: draw a seeded sample
of judgements, write a review sheet with the fields of Appendix F.4.2 (GOLD, PREDICT,
RESULT = the judge's verdict and reason, EVAL = left empty for the reviewer), and, once
it is filled in, compute the judge's agreement with the reviewer.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ehrlib.corpus.io import write_text
from ehrlib.errors import ConfigError
from ehrlib.judge.evaluate import RunData, load_run, read_judgements
from ehrlib.judge.llm_judge import render_gold, render_prediction
from ehrlib.result_tables import csv_text

__all__ = ["review_sample", "write_review_sheet", "review_agreement"]

_EVAL = {"correct": "correct", "c": "correct", "incorrect": "incorrect", "i": "incorrect"}


def review_sample(run: RunData, judge: str = "matcher", mode: str = "lenient", n: int = 200, *,
                  seed: int = 0, stratify: bool = True) -> pd.DataFrame:
    """A seeded sample of ``n`` judgements with GOLD / PREDICT / RESULT / EVAL columns.

    With ``stratify`` the sample keeps the judge's share of correct and incorrect verdicts
    (at least one of each when both exist), so rare verdicts are reviewed too.
    """
    chosen = [j for j in read_judgements(run.run_dir) if j.judge == judge and j.mode == mode
              and j.verdict != "unparsed"]
    if not chosen:
        raise ConfigError(f"run {run.run_dir.name} has no readable {mode} judgements by {judge!r}")
    rng = np.random.default_rng(seed)
    if stratify:
        groups = {v: [j for j in chosen if j.verdict == v] for v in ("correct", "incorrect")}
        picked = []
        for items in groups.values():
            if not items:
                continue
            k = min(len(items), max(1, round(n * len(items) / len(chosen))))
            picked += [items[i] for i in sorted(rng.choice(len(items), size=k, replace=False))]
    else:
        picked = [chosen[i] for i in sorted(rng.choice(len(chosen), size=min(n, len(chosen)), replace=False))]
    gold = {(g.note_id, g.entity_id): g for g in run.gold}
    rows = []
    for j in picked:
        pred = run.predictions[j.matched_prediction] if j.matched_prediction is not None else None
        rows.append({"note_id": j.note_id, "entity_id": j.entity_id, "judge": j.judge, "mode": j.mode,
                     "GOLD": render_gold(gold[(j.note_id, j.entity_id)]),
                     "PREDICT": render_prediction(pred) if pred is not None else "(no matching prediction)",
                     "RESULT": f"{j.verdict}: {j.reason}", "EVAL": ""})
    return pd.DataFrame(rows)


def write_review_sheet(run_dir: str | os.PathLike[str], judge: str = "matcher", mode: str = "lenient",
                       n: int = 200, *, seed: int = 0, path: str | os.PathLike[str] | None = None) -> Path:
    """Write a review sheet (CSV) into the run folder; reviewers fill EVAL with Correct/Incorrect."""
    sheet = review_sample(load_run(run_dir), judge, mode, n, seed=seed)
    target = Path(path) if path is not None else Path(run_dir) / f"review_{judge}_{mode}.csv".replace("/", "_")
    return write_text(csv_text(sheet), target)


def review_agreement(sheet: pd.DataFrame | str | os.PathLike[str]) -> dict[str, float]:
    """Agreement (and Cohen's kappa) between the judge's verdicts and the reviewers' EVAL.

    Rows whose EVAL is empty are not reviewed yet and are left out; any other value
    than Correct/Incorrect (or C/I) is an error, so a typo cannot pass as a verdict.
    """
    # deferred: scikit-learn is heavy and only agreement statistics need it
    from sklearn.metrics import cohen_kappa_score

    df = pd.read_csv(sheet, keep_default_na=False) if not isinstance(sheet, pd.DataFrame) else sheet
    reviewed = df[df["EVAL"].astype(str).str.strip() != ""]
    human = [_EVAL.get(str(v).strip().lower()) for v in reviewed["EVAL"]]
    bad = [v for v, h in zip(reviewed["EVAL"], human, strict=False) if h is None]
    if bad:
        raise ConfigError(f"EVAL must be Correct or Incorrect, got {sorted(set(map(str, bad)))[:5]}")
    judge = [str(r).split(":", 1)[0].strip().lower() for r in reviewed["RESULT"]]
    if not human:
        return {"n_reviewed": 0, "agreement": float("nan"), "kappa": float("nan")}
    agree = float(np.mean([a == b for a, b in zip(judge, human, strict=False)]))
    kappa = float(cohen_kappa_score(judge, human)) if len(set(judge) | set(human)) > 1 else float("nan")
    return {"n_reviewed": len(human), "agreement": agree, "kappa": kappa}
