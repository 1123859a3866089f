"""The options of the tools and executors benchmarks: scales, output files, kept rows, ratios."""
from __future__ import annotations

import csv

import duckdb
import pytest
from test_tools_testdb import build_tiny_hospital

from ehrlib.bench import executors as bench_executors
from ehrlib.bench import tools as bench_tools
from ehrlib.errors import ConfigError


def test_tool_scales_default_and_opt_in(monkeypatch):
    monkeypatch.delenv(bench_tools.SCALES_ENV, raising=False)
    assert bench_tools.scales_from_env() == (3_000_000, 30_000_000)
    assert bench_tools.out_name(bench_tools.SCALES) == "bench_tools.csv"
    monkeypatch.setenv(bench_tools.SCALES_ENV, "30000000,330e6")
    assert bench_tools.scales_from_env() == (30_000_000, 330_000_000)
    assert bench_tools.out_name((30_000_000, 330_000_000)) == "bench_tools_330m.csv"
    assert bench_tools.out_name((1000, 5000)) == "bench_tools_5000.csv"
    assert bench_tools.out_name(bench_tools.SCALES, shuffled=True) == "bench_tools_shuffled.csv"
    assert bench_tools.out_name((30_000_000, 330_000_000), True) == "bench_tools_330m_shuffled.csv"
    for bad in ("30000000", "big,bigger", "30000000,3000000"):
        monkeypatch.setenv(bench_tools.SCALES_ENV, bad)
        with pytest.raises(ConfigError, match=bench_tools.SCALES_ENV):
            bench_tools.scales_from_env()


def test_bare_sql_ratio_rows():
    p95 = {bench_tools.BARE_SQL: 2.0, "View_General_Timeline": 2.9, "Get_Item_Status_History": 3.2,
           "Lexical_Search": 9.0}
    rows = {r[3]: r for r in bench_tools.bare_sql_rows("synthetic-30000000", p95)}
    assert set(rows) == {"View_General_Timeline", "Get_Item_Status_History"}  # patient-scoped tools only
    assert rows["View_General_Timeline"][7] == "1.45" and rows["View_General_Timeline"][10] == "true"
    assert rows["Get_Item_Status_History"][7] == "1.60" and rows["Get_Item_Status_History"][10] == "false"
    assert rows["View_General_Timeline"][0] == "p95 vs bare SQL synthetic-30000000"
    assert all(len(r) == len(bench_tools.HEADER) for r in rows.values())


def test_the_reference_lookup_reads_patients_the_tools_never_read(tmp_path):
    # the reference is timed on a patient nothing has read yet, as the tools meet theirs
    with duckdb.connect(str(build_tiny_hospital(tmp_path / "tiny.duckdb")), read_only=True) as con:
        tools, references = bench_tools._admission_samples(con, 5, seed=0)
        assert tools == bench_tools._patients(con, 5, seed=0)      # the tools' sample is unchanged
        assert len(tools) == 2 and references == []                # both admissions go to the tools
        tools, references = bench_tools._admission_samples(con, 0, seed=0)
        assert len(tools) == 1 and len(references) == 1
        assert {s for s, _ in tools}.isdisjoint(s for s, _ in references)


def test_executor_backends_are_checked(monkeypatch):
    monkeypatch.delenv("EHRLIB_BENCH_EXECUTOR_BACKENDS", raising=False)
    assert bench_executors._backends() == ("offline", "oracle")
    monkeypatch.setenv("EHRLIB_BENCH_EXECUTOR_BACKENDS", "offline")
    assert bench_executors._backends() == ("offline",)
    monkeypatch.setenv("EHRLIB_BENCH_EXECUTOR_BACKENDS", "offline,gpt")
    with pytest.raises(ConfigError, match="EHRLIB_BENCH_EXECUTOR_BACKENDS"):
        bench_executors._backends()


def test_executor_rows_of_backends_not_measured_are_kept(tmp_path):
    path = tmp_path / "bench_executors.csv"
    assert bench_executors._kept_rows(path, ("offline",)) == []
    old_header = bench_executors.HEADER[:-2]  # a file written before speedup and load_avg_1m
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(old_header)
        w.writerow(["offline", "ray", "2", "1"] + [""] * (len(old_header) - 4))
        w.writerow(["oracle", "ray", "2", "1"] + ["9"] * (len(old_header) - 4))
        w.writerow(["transfer only", "ray", "1", "1"] + [""] * (len(old_header) - 4))
    kept = bench_executors._kept_rows(path, ("offline",))
    assert [r[0] for r in kept] == ["oracle"]
    assert len(kept[0]) == len(bench_executors.HEADER) and kept[0][-2:] == ["", ""]
    assert [r[0] for r in bench_executors._kept_rows(path, ("oracle",))] == ["offline", "transfer only"]
    path.write_text("something,else\n1,2\n")
    assert bench_executors._kept_rows(path, ("offline",)) == []  # another table: nothing kept
