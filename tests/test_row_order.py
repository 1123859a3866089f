"""Verdicts do not depend on how the event tables are stored on disk.

``build-db`` and the synthetic hospital store every event table sorted by (subject,
admission, time, row id) so DuckDB's zone maps skip the row groups of other patients.
That order is a speed-up only: a query whose result matters has to say ``ORDER BY``.
This test stores the same rows shuffled and checks that the offline inspector's
predictions are the same, tool calls and their answers included.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from ehrlib import schema
from ehrlib.bench.speed import canonical_predictions
from ehrlib.bench.tools import store_shuffled
from ehrlib.db.ddl import table_defs
from ehrlib.db.finalize import order_keys
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import run_experiment
from ehrlib.synth import generate_hospital
from ehrlib.synth.notes import write_corpus

pytestmark = pytest.mark.slow


def _event_tables(con) -> list[tuple[str, str, list[str]]]:
    """(logical name, quoted reference, sort keys) of the mimic3 event tables present."""
    present = {r[0].lower() for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return [(logical, d.ref, order_keys("mimic3", logical)) for logical, d in table_defs("mimic3").items()
            if schema.LOGICAL[logical].kind == "event" and d.name.lower() in present]


def _physical_rows(con, ref: str, keys: list[str]) -> list[tuple]:
    cols = ", ".join(schema.quote_ident(k) for k in keys)
    return con.execute(f"SELECT {cols} FROM {ref} ORDER BY rowid").fetchall()  # noqa: S608


def _shuffle(db: Path) -> None:
    """Rewrite every event table in a seeded pseudo-random order (same rows, same types)."""
    with duckdb.connect(str(db)) as con:
        for _, ref, keys in _event_tables(con):
            store_shuffled(con, ref, schema.quote_ident(keys[-1]))
        con.execute("CHECKPOINT")


def _predictions(corpus: Path, db: Path, runs: Path, run_id: str) -> list[str]:
    params = RunParams(corpus=str(corpus), db=str(db), method="inspector", backend="offline", run_id=run_id,
                       runs_dir=str(runs), progress=False)
    return canonical_predictions(run_experiment(params))


def test_built_event_tables_are_stored_in_patient_order(tmp_path):
    db = generate_hospital(tmp_path / "h.duckdb", patients=4, seed=1)
    with duckdb.connect(str(db), read_only=True) as con:
        tables = _event_tables(con)
        assert {"chartevents", "labevents"} <= {logical for logical, _, _ in tables}
        for logical, ref, keys in tables:
            assert keys[:2] == [schema.schema_map("mimic3").table(logical).columns[c]
                                for c in ("subject_id", "hadm_id")]
            rows = _physical_rows(con, ref, keys)
            assert rows == sorted(rows, key=lambda r: tuple((v is None, v) for v in r)), logical


def test_predictions_do_not_depend_on_physical_row_order(tmp_path, monkeypatch):
    monkeypatch.setenv("EHRLIB_CACHE_DIR", str(tmp_path / "cache"))
    sorted_db = generate_hospital(tmp_path / "sorted.duckdb", patients=8, seed=0)
    corpus = write_corpus(sorted_db, tmp_path / "corpus", seed=0, notes_per_type=2, progress=False)
    shuffled_db = tmp_path / "shuffled.duckdb"
    shutil.copyfile(sorted_db, shuffled_db)
    _shuffle(shuffled_db)
    with duckdb.connect(str(shuffled_db), read_only=True) as con:
        _, ref, keys = next(t for t in _event_tables(con) if t[0] == "chartevents")
        rows = _physical_rows(con, ref, keys)
        assert rows != sorted(rows, key=lambda r: tuple((v is None, v) for v in r))  # really shuffled
    expected = _predictions(corpus, sorted_db, tmp_path / "runs", "sorted")
    assert expected, "no predictions: the comparison would be empty"
    assert _predictions(corpus, shuffled_db, tmp_path / "runs", "shuffled") == expected
