"""The speed work changes no verdict: the offline inspector's predictions are byte-identical
(run ids and tool timings aside) with the disk cache off, cold and warm, and with the
admission snapshot on (the default), off, and bounded so small that most tables fall back
to SQL.

By default on a small synthetic corpus and the hand-written MIMIC-III set ``handwritten``;
``EHRLIB_TEST_ALL_DEV_SETS=1`` adds every development set of ``ehrlib.bench.quality.DEV_SETS``
whose demo database can be built here (minutes).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ehrlib import disk_cache, ontology
from ehrlib.bench.quality import real_patient_sets
from ehrlib.bench.speed import canonical_predictions
from ehrlib.pipeline.offline import icd_match
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import run_experiment
from ehrlib.tools import lexical, profile, snapshot

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: a snapshot bound that holds the small tables of an admission but rarely its chartevents
SMALL_BOUND = 2000


def _forget() -> None:
    """Empty the process memos the disk cache stands behind, as a fresh process has them."""
    lexical._CATALOGS.clear()
    lexical._INDEXES.clear()
    ontology._CACHE.clear()
    profile._MEMORY.clear()
    icd_match._DICTIONARIES.clear()
    snapshot.release_recent()
    lexical._brand_to_generic.cache_clear()   # the drug-variant map (read by buckets when cached)
    lexical._generic_for.cache_clear()
    lexical.expand_query.cache_clear()


def _predictions(corpus: Path, db: Path, ids: list[str] | None, runs: Path, run_id: str) -> list[str]:
    _forget()
    params = RunParams(corpus=str(corpus), db=str(db), method="inspector", backend="offline", run_id=run_id,
                       runs_dir=str(runs), progress=False, **({"note_ids": tuple(ids)} if ids else {}))
    return canonical_predictions(run_experiment(params))


def _same_in_every_mode(corpus: Path, db: Path, ids: list[str] | None, tmp: Path, monkeypatch) -> list[str]:
    monkeypatch.delenv(snapshot.ROWS_ENV, raising=False)
    monkeypatch.setenv(disk_cache.DIR_ENV, "off")
    off = _predictions(corpus, db, ids, tmp / "runs", "off")
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp / "cache"))
    cold = _predictions(corpus, db, ids, tmp / "runs", "cold")
    entries = {p.name.split("-")[0] for d in (tmp / "cache").iterdir() for p in d.iterdir()}
    assert {"catalog", "ngrams", "ontology", "icd"} <= entries   # icd: the tokenised ICD dictionary
    warm = _predictions(corpus, db, ids, tmp / "runs", "warm")
    assert off, "no predictions: the comparison would be empty"
    assert cold == off
    assert warm == off
    _same_with_snapshot_off_and_bounded(corpus, db, ids, tmp, monkeypatch, on=warm)
    return off


def _same_with_snapshot_off_and_bounded(corpus: Path, db: Path, ids: list[str] | None, tmp: Path,
                                        monkeypatch, on: list[str] | None = None) -> list[str]:
    """Predictions with the admission snapshot on (the default; ``on`` when already run),
    checked equal with it off and bounded to SMALL_BOUND rows, under the disk cache in force.
    """
    monkeypatch.delenv(snapshot.ROWS_ENV, raising=False)
    if on is None:
        on = _predictions(corpus, db, ids, tmp / "runs", "snapshot-on")
    monkeypatch.setenv(snapshot.ROWS_ENV, "0")
    all_sql = _predictions(corpus, db, ids, tmp / "runs", "snapshot-off")
    monkeypatch.setenv(snapshot.ROWS_ENV, str(SMALL_BOUND))
    bounded = _predictions(corpus, db, ids, tmp / "runs", "snapshot-bounded")
    monkeypatch.delenv(snapshot.ROWS_ENV)
    assert on, "no predictions: the comparison would be empty"
    assert all_sql == on
    assert bounded == on
    return on


def test_synthetic_corpus_identical(tmp_path, monkeypatch):
    from ehrlib.synth import generate_hospital
    from ehrlib.synth.notes import write_corpus

    db = generate_hospital(tmp_path / "h.duckdb", patients=8, seed=0)
    corpus = write_corpus(db, tmp_path / "corpus", seed=0, notes_per_type=3, progress=False)
    _same_in_every_mode(corpus, db, None, tmp_path, monkeypatch)


def test_command_line_with_the_compile_caches_cold_and_warm_identical(tmp_path):
    """``ehrlib run`` compiles its regular expressions and dataclass methods from the last
    process's when warm (ehrlib.regex_cache, ehrlib.code_cache): the same predictions as
    without them (disk cache and bytecode writing off) and cold."""
    import subprocess
    import sys

    from ehrlib.synth import generate_hospital
    from ehrlib.synth.notes import write_corpus

    db = generate_hospital(tmp_path / "h.duckdb", patients=4, seed=2)
    corpus = write_corpus(db, tmp_path / "corpus", seed=2, notes_per_type=2, progress=False)
    root = Path(__file__).resolve().parents[1]
    out = {}
    for mode in ("off", "cold", "warm"):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(tmp_path / f"pyc-{mode == 'off'}"),
                    disk_cache.DIR_ENV: "off" if mode == "off" else str(tmp_path / "cache")})
        if mode == "off":
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        subprocess.run([sys.executable, "-m", "ehrlib", "run", "--corpus", str(corpus), "--db", str(db),
                        "--runs-dir", str(tmp_path / "runs"), "--run-id", mode, "--no-progress"],
                       env=env, cwd=tmp_path, check=True, capture_output=True)
        out[mode] = canonical_predictions(tmp_path / "runs" / mode)
        if mode == "cold":
            assert list((tmp_path / "cache" / "packages").glob("regex-*.pkl"))
            assert list((tmp_path / "pyc-False").rglob("ehrlib-dataclass-code.*.bin"))
    assert out["off"], "no predictions: the comparison would be empty"
    assert out["cold"] == out["off"] and out["warm"] == out["off"]


def test_handwritten_real_patient_set_identical(mimic3_demo_db, tmp_path, monkeypatch):
    _same_in_every_mode(FIXTURES / "handwritten", mimic3_demo_db, None, tmp_path, monkeypatch)


@pytest.mark.skipif(os.environ.get("EHRLIB_TEST_ALL_DEV_SETS") != "1",
                    reason="every development set takes minutes: set EHRLIB_TEST_ALL_DEV_SETS=1")
def test_every_development_set_identical(tmp_path_factory, monkeypatch):
    work = tmp_path_factory.mktemp("devsets")
    sets = real_patient_sets(work)
    if not sets:
        pytest.skip("no MIMIC demo database can be built here")
    for name, (corpus, parts) in sets.items():
        for k, (db, ids) in enumerate(parts):
            _same_in_every_mode(corpus, db, ids, work / f"{name}-{k}", monkeypatch)


@pytest.mark.skipif(os.environ.get("EHRLIB_TEST_ALL_DEV_SETS") != "1",
                    reason="every development set takes minutes: set EHRLIB_TEST_ALL_DEV_SETS=1")
def test_every_development_set_identical_with_and_without_the_snapshot(tmp_path_factory, monkeypatch):
    """The snapshot modes alone (3 runs a set, one warm disk cache per database): the check
    to rerun after a change to the tools' reads, when the cache modes above are not in question."""
    work = tmp_path_factory.mktemp("devsets_snapshot")
    sets = real_patient_sets(work)
    if not sets:
        pytest.skip("no MIMIC demo database can be built here")
    monkeypatch.setenv(disk_cache.DIR_ENV, str(work / "cache"))
    for name, (corpus, parts) in sets.items():
        for k, (db, ids) in enumerate(parts):
            _same_with_snapshot_off_and_bounded(corpus, db, ids, work / f"{name}-{k}", monkeypatch)
