"""What a run or a notebook works on: the database and corpus named in its parameters, or
the embedded synthetic hospital and its notes, built once under a work folder and reused.

Notebooks default to synthetic inputs so ``pytest --nbval-lax`` and papermill run them
offline in seconds; a params YAML points ``db``/``corpus`` at real data instead. A stamp
file records what was built (generator versions, seed, sizes, layout), so changing a
parameter or upgrading the generator rebuilds rather than silently reusing stale files.

The runner uses this for its embedded default and the notebooks through
:mod:`ehrlib.report`; it depends on the generator only, never on the pipeline.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import write_json
from ehrlib.errors import ConfigError

__all__ = ["project_path", "prepare_inputs", "layout_variants"]


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
    work = project_path(work_dir)
    db = str(project_path(db)) if db is not None else None
    corpus = str(project_path(corpus)) if corpus is not None else None
    if db is not None and not Path(db).is_file():
        raise ConfigError(f"db {db}: file not found")
    if corpus is not None and not (Path(corpus) / "notes.jsonl").is_file():
        raise ConfigError(f"corpus {corpus}: no notes.jsonl there")
    if db is None:
        from ehrlib.synth import GENERATOR_VERSION, generate_hospital  # deferred: a given db needs no generator

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
    from ehrlib.synth.notes import GENERATOR_VERSION as NOTES_VERSION  # deferred: as above
    from ehrlib.synth.notes import write_corpus

    corpus_dir = work / f"corpus-{db_path.stem}-n{notes_per_type}-s{seed}"
    stamp = {"generator": NOTES_VERSION, "db": str(db_path.resolve()), "db_mtime": db_path.stat().st_mtime,
             "notes_per_type": notes_per_type, "seed": seed}
    stamp_path = corpus_dir.with_suffix(".json")
    if not _fresh(stamp_path, stamp, corpus_dir / "notes.jsonl", corpus_dir / "gold.jsonl"):
        write_corpus(db_path, corpus_dir, seed=seed, notes_per_type=notes_per_type, progress=progress)
        write_json(stamp, stamp_path)
    return db_path, corpus_dir


def layout_variants(work_dir: str | os.PathLike[str], layouts: Sequence[str], **kwargs: Any) -> dict[str, dict[str,
                                                                                                               str]]:
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
