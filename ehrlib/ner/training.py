"""What the NER tagger learns from: the gold spans of the development corpora.

A corpus's gold entities (text + line) become BIO tags over every non-blank line of its
notes, so lines without entities teach the tagger what is not a statement. The training
sets are the synthetic corpus's validation split and the hand-written real-patient
development sets (:data:`ehrlib.bench.quality.DEV_SETS`); the sealed estimate set is
never among them.
"""
from __future__ import annotations

import datetime as _dt
import os
import platform
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ehrlib.corpus.io import Corpus, load_corpus
from ehrlib.errors import ConfigError
from ehrlib.ner.bio import Token, locate_spans, spans_to_tags, tokenize
from ehrlib.ner.tagger import DEFAULT_MODEL, Tagger, train_tagger

__all__ = ["Sequences", "corpus_sequences", "dev_set_folders", "synthetic_dev_corpus", "train_on", "trained_model",
           "sets_named", "DEFAULT_MODEL"]

Sequences = list[tuple[str, tuple[Token, ...], list[str]]]


@dataclass(frozen=True, slots=True)
class SetStats:
    """How much of a corpus became training data."""

    notes: int
    lines: int
    entities: int
    not_found: int   # gold texts not found in their line (not taught)


def corpus_sequences(corpus: Corpus) -> tuple[Sequences, SetStats]:
    """(line, tokens, BIO tags) of every non-blank note line, and what was (not) taught."""
    by_line: dict[tuple[str, int], list[str]] = defaultdict(list)
    for g in corpus.gold:
        by_line[(g.note_id, g.line)].append(g.entity)
    out: Sequences = []
    missing = 0
    for note in corpus.notes:
        for i, line in enumerate(note.lines):
            tokens = tokenize(line)
            if not tokens:
                continue
            spans, lost = locate_spans(i, line, by_line.get((note.note_id, i), ()))
            missing += len(lost)
            out.append((line, tokens, spans_to_tags(tokens, spans)))
    return out, SetStats(len(corpus.notes), len(out), len(corpus.gold), missing)


def dev_set_folders(fixtures: Path | None = None) -> dict[str, Path]:
    """The real-patient development sets present: name -> corpus folder (never the sealed set)."""
    # deferred: the benchmark set list sits in the apps layer; only training reads it
    from ehrlib.bench import repo_root
    from ehrlib.bench.quality import DEV_SETS, ESTIMATE_SET

    root = fixtures if fixtures is not None else repo_root() / "tests" / "fixtures"
    return {name: root / name for name, _ in DEV_SETS
            if name != ESTIMATE_SET[0] and (root / name / "gold.jsonl").is_file()}


def synthetic_dev_corpus(work_dir: str | os.PathLike[str], *, patients: int = 40, notes_per_type: int = 10,
                         seed: int = 0) -> tuple[Path, Corpus]:
    """The synthetic corpus (built in ``work_dir`` when absent) and its validation split."""
    # deferred: the synthetic hospital generator is only needed for its corpus
    from ehrlib.inputs import prepare_inputs

    _, corpus_dir = prepare_inputs(work_dir, patients=patients, notes_per_type=notes_per_type, seed=seed)
    assert corpus_dir is not None
    return corpus_dir, load_corpus(corpus_dir, split="validation")


def train_on(corpora: Mapping[str, Corpus], *, min_count: int = 2) -> tuple[Tagger, dict[str, object]]:
    """A tagger trained on all ``corpora`` and the manifest that says how."""
    if not corpora:
        raise ConfigError("no training corpora for the NER tagger")
    seqs: Sequences = []
    sets: dict[str, object] = {}
    for name, corpus in corpora.items():
        got, stats = corpus_sequences(corpus)
        seqs += got
        sets[name] = {"notes": stats.notes, "lines": stats.lines, "entities": stats.entities,
                      "entities_not_found": stats.not_found}
    tagger = train_tagger(seqs, min_count=min_count)
    when = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return tagger, {"training_sets": sets, "model": "logistic regression, greedy BIO decoding",
                    "min_feature_count": min_count, "trained_at": when, "versions": _versions()}


def _versions() -> dict[str, str]:
    # deferred: numpy only for the manifest's version record
    import numpy
    import sklearn

    from ehrlib.cli import _version
    return {"ehrlib": _version(), "scikit-learn": sklearn.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}


def sets_named(names: Sequence[str], folders: Mapping[str, Path]) -> dict[str, Corpus]:
    """Load the named development sets; an unknown name is a one-line error."""
    unknown = [n for n in names if n not in folders]
    if unknown:
        raise ConfigError(f"unknown development set(s) {', '.join(unknown)}; have {', '.join(sorted(folders))}")
    return {n: load_corpus(folders[n]) for n in names}


def trained_model(folder: str | os.PathLike[str], sets: Sequence[str]) -> Path:
    """A tagger trained on the named development sets in ``folder``: reused when the
    folder's manifest names the same sets (and this ehrlib's features), else trained now.
    """
    # deferred: only the manifest writer needs it
    import json

    from ehrlib.ner.tagger import FEATURES_VERSION, MANIFEST_FILE, MODEL_FILE

    out = Path(folder)
    try:
        manifest = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))
        if ((out / MODEL_FILE).is_file() and sorted(manifest.get("training_sets", {})) == sorted(sets)
                and manifest.get("features_version") == FEATURES_VERSION):
            return out
    except (OSError, ValueError, AttributeError):
        pass   # absent or unreadable: train
    tagger, manifest = train_on(sets_named(sets, dev_set_folders()))
    return tagger.save(out, manifest)
