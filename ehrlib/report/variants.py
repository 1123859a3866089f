"""A notebook's experiment in one call: run the pipeline once per parameter variant,
judge each run and write its tables and figures."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ehrlib.inputs import project_path
from ehrlib.judge.evaluate import evaluate_run
from ehrlib.pipeline.params import params_from_mapping
from ehrlib.pipeline.rundir import new_run_id
from ehrlib.pipeline.runner import run_experiment
from ehrlib.report.build import build_report

__all__ = ["run_variants"]


def run_variants(base: Mapping[str, Any], variants: Mapping[str, Mapping[str, Any]], *, judge: str = "matcher",
                 llm: Mapping[str, Any] | None = None, report: bool = True,
                 figures_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Run the pipeline once per variant (``base`` params updated with the variant's), judge
    each run and, with ``report``, write its tables and figures; returns ``{name: run_dir}``.
    An LLM ``judge`` runs next to the matcher, so ``judge_agreement.csv`` compares the two.

    Run ids are ``<base run_id or a fresh timestamped id>-<variant name>``, so a rerun with
    the same base id resumes each variant instead of starting over.
    """
    out: dict[str, Path] = {}
    base = dict(base)
    base["runs_dir"] = str(project_path(base.get("runs_dir") or "runs"))
    for name, changes in variants.items():
        params = params_from_mapping({**base, **dict(changes), "run_id": None})
        prefix = base.get("run_id") or new_run_id(params)
        params = params.replace(run_id=f"{prefix}-{name}")
        run_dir = run_experiment(params)
        if judge != "matcher":  # the offline matcher is free: keep it as the agreement reference
            evaluate_run(run_dir, judge="matcher", progress=False)
        evaluate_run(run_dir, judge=judge, llm=llm, progress=bool(params.progress))
        if report:
            build_report(run_dir, judge=judge, progress=False, formats=("png",),
                         figures_dir=project_path(figures_dir) if figures_dir is not None else None)
        out[name] = run_dir
    return out
