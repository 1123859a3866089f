"""What a notebook runs on: the database and corpus named in its parameters, or the
embedded synthetic hospital and its notes, built once under a work folder and reused.

Notebooks default to synthetic inputs so ``pytest --nbval-lax`` and papermill run them
offline in seconds; a params YAML points ``db``/``corpus`` at real data instead. A stamp
file records what was built (generator versions, seed, sizes, layout), so changing a
parameter or upgrading the generator rebuilds rather than silently reusing stale files.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import write_json
from ehrlib.errors import ConfigError

__all__ = ["project_path", "prepare_inputs", "layout_variants", "run_variants"]


def project_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as given when absolute, else relative to the project root.

    Jupyter starts kernels in ``notebooks/`` while papermill and pytest start where they
    are called; resolving against the folder holding ``pyproject.toml`` (searched upward
    from the working directory) puts ``runs/`` and ``figures/`` in the same place for all.
    """
    p = Path(path)
    if p.is_absolute():
        return p
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "ehrlib").is_dir():
            return folder / p
    return here / p


def _fresh(stamp_path: Path, stamp: dict, *targets: Path) -> bool:
    if not stamp_path.exists() or not all(t.exists() for t in targets):
        return False
    try:
        return json.loads(stamp_path.read_text(encoding="utf-8")) == stamp
    except json.JSONDecodeError:
        return False


def prepare_inputs(work_dir: str | os.PathLike[str], *, db: str | None = None, corpus: str | None = None,
                   layout: str = "mimic3", patients: int = 6, notes_per_type: int = 1, seed: int = 0,
                   with_corpus: bool = True, progress: bool = False) -> tuple[Path, Path | None]:
    """(database path, corpus folder) for a notebook.

    Given ``db`` and ``corpus`` are checked and returned as they are. Otherwise the
    synthetic hospital (``layout`` mimic3 | mimic4 | perturbed) and its corpus are built
    under ``work_dir`` (or reused when an identical build is there). A given ``db``
    without a ``corpus`` gets a synthetic-style corpus written from its rows. Relative
    paths are resolved with :func:`project_path`.
    """
    from ehrlib.synth import GENERATOR_VERSION, generate_hospital
    from ehrlib.synth.notes import GENERATOR_VERSION as NOTES_VERSION
    from ehrlib.synth.notes import write_corpus

    work = project_path(work_dir)
    db = str(project_path(db)) if db is not None else None
    corpus = str(project_path(corpus)) if corpus is not None else None
    if db is not None and not Path(db).is_file():
        raise ConfigError(f"db {db}: file not found")
    if corpus is not None and not (Path(corpus) / "notes.jsonl").is_file():
        raise ConfigError(f"corpus {corpus}: no notes.jsonl there")
    if db is None:
        db_path = work / f"synth-{layout}-p{patients}-s{seed}.duckdb"
        stamp = {"generator": GENERATOR_VERSION, "layout": layout, "patients": patients, "seed": seed}
        stamp_path = db_path.with_suffix(".json")
        if not _fresh(stamp_path, stamp, db_path):
            generate_hospital(db_path, patients=patients, seed=seed, layout=layout)
            write_json(stamp, stamp_path)
    else:
        db_path = Path(db)
    if corpus is not None or not with_corpus:
        return db_path, Path(corpus) if corpus is not None else None
    corpus_dir = work / f"corpus-{db_path.stem}-n{notes_per_type}-s{seed}"
    stamp = {"generator": NOTES_VERSION, "db": str(db_path.resolve()), "db_mtime": db_path.stat().st_mtime,
             "notes_per_type": notes_per_type, "seed": seed}
    stamp_path = corpus_dir.with_suffix(".json")
    if not _fresh(stamp_path, stamp, corpus_dir / "notes.jsonl", corpus_dir / "gold.jsonl"):
        write_corpus(db_path, corpus_dir, seed=seed, notes_per_type=notes_per_type, progress=progress)
        write_json(stamp, stamp_path)
    return db_path, corpus_dir


def layout_variants(work_dir: str | os.PathLike[str], layouts: Sequence[str], **kwargs: Any) -> dict[str, dict[str, str]]:
    """``{layout: {"db": ..., "corpus": ...}}``: the synthetic hospital in each physical
    layout (mimic3, mimic4, perturbed), as run variants (see run_variants).

    All layouts share ONE corpus, written from the first layout's database: as in the
    paper's Appendix M, the same notes and gold labels are verified against each schema,
    so a score difference can only come from the schema, not from different notes.
    """
    out = {}
    corpus = None
    for layout in layouts:
        db, written = prepare_inputs(work_dir, layout=layout, corpus=corpus, **kwargs)
        corpus = corpus or str(written)
        out[layout] = {"db": str(db), "corpus": corpus}
    return out


def run_variants(base: Mapping[str, Any], variants: Mapping[str, Mapping[str, Any]], *, judge: str = "matcher",
                 llm: Mapping[str, Any] | None = None, report: bool = True,
                 figures_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Run the pipeline once per variant (``base`` params updated with the variant's), judge
    each run and, with ``report``, write its tables and figures; returns ``{name: run_dir}``.
    An LLM ``judge`` runs next to the matcher, so ``judge_agreement.csv`` compares the two.

    Run ids are ``<base run_id or a fresh timestamped id>-<variant name>``, so a rerun with
    the same base id resumes each variant instead of starting over.
    """
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.pipeline.params import params_from_mapping
    from ehrlib.pipeline.runner import new_run_id, run_experiment
    from ehrlib.report.build import build_report

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
