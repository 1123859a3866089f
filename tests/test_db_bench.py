"""`ehrlib bench`: discovery, skipping, and the build benchmark's CSV (on a tiny folder)."""
from __future__ import annotations

import csv
import importlib

import pytest
from test_db_build import write_table

from ehrlib.bench import available
from ehrlib.bench import build as bench_build
from ehrlib.bench.cli import run_benchmarks
from ehrlib.errors import ConfigError


def test_discovers_build_and_rejects_unknown(tmp_path):
    assert "build" in available() and "cli" not in available()
    with pytest.raises(ConfigError, match="unknown benchmark"):
        run_benchmarks(["nope"], tmp_path)
    with pytest.raises(ConfigError, match="did you mean 'quality'"):
        run_benchmarks(["qualty"], tmp_path)


def test_every_listed_benchmark_has_a_run_function():
    # `ehrlib bench` runs them all: a command module listed here (calibrate) would crash it
    modules = {n: importlib.import_module(f"ehrlib.bench.{n}") for n in available()}
    missing = [n for n, m in modules.items() if not callable(getattr(m, "run", None))]
    assert missing == []


def test_build_benchmark_writes_rows_per_second(tmp_path, monkeypatch):
    src = tmp_path / "m3"
    write_table(src, "mimic3", "patients", [{"SUBJECT_ID": i} for i in range(1, 51)])
    write_table(src, "mimic3", "labevents", [{"SUBJECT_ID": i % 50 + 1} for i in range(500)], gz=True)
    monkeypatch.setattr(bench_build, "demo_folder", lambda: src)
    out = run_benchmarks(["build"], tmp_path / "figures")["build"]
    assert out == tmp_path / "figures" / "bench_build.csv"
    rows = list(csv.DictReader(out.open()))
    by_table = {r["table"]: r for r in rows}
    assert set(by_table) == {"PATIENTS", "LABEVENTS", "TOTAL"}  # missing tables are not rows
    assert int(by_table["TOTAL"]["rows"]) == 550
    assert int(by_table["PATIENTS"]["rows"]) + int(by_table["LABEVENTS"]["rows"]) == 550
    for r in rows:
        assert float(r["rows_per_s"]) == pytest.approx(int(r["rows"]) / float(r["seconds"]), rel=0.02)


def test_build_benchmark_skips_without_data(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_build, "demo_folder", lambda: None)
    result = run_benchmarks(["build"], tmp_path)["build"]
    assert isinstance(result, str) and "absent" in result
    assert not (tmp_path / "bench_build.csv").exists()
