"""`ehrlib demo` output: folded judge modes, the closing lines, the real-notes fallback."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ehrlib import demo
from ehrlib.demo import DemoConfig, closing_lines, results_table

_COLS = ["method", "mode", "n_notes", "recall", "precision", "f1", "n_gold", "n_pred"]


def _metrics(surface_lenient_f1: float = 0.66) -> pd.DataFrame:
    return pd.DataFrame([
        ["inspector", "harsh", 24, 0.82, 0.91, 0.86, 585, 516],
        ["inspector", "lenient", 24, 0.82, 0.91, 0.86, 585, 516],
        ["surface", "harsh", 24, 0.67, 0.65, 0.66, 585, 626],
        ["surface", "lenient", 24, 0.67, 0.65, surface_lenient_f1, 585, 626],
    ], columns=_COLS)


def test_identical_modes_fold_into_one_row():
    lines = results_table(_metrics()).splitlines()
    assert len(lines) == 3  # header + one row per method
    assert all("harsh = lenient" in line for line in lines[1:])


def test_differing_modes_keep_both_rows():
    lines = results_table(_metrics(surface_lenient_f1=0.70)).splitlines()
    assert len(lines) == 4
    assert "harsh = lenient" in lines[1]
    assert [line.split()[1] for line in lines[2:]] == ["harsh", "lenient"]


def test_closing_lines_say_what_ran_the_numbers_and_what_to_open(tmp_path):
    cfg = DemoConfig(figures_dir=tmp_path / "figures")
    real = demo._RealNotes(_metrics().assign(n_notes=9), True, "run")
    viewer = Path("runs/demo/runs/demo-inspector/viewer/index.html")
    lines = closing_lines(cfg, _metrics(), real, [Path("runs/notebooks/01_x.ipynb")], [viewer, None])
    assert len(lines) == 3
    assert "24 synthetic notes" in lines[0] and "9 held-out real-patient notes" in lines[0]
    assert "1 notebooks" in lines[0]
    assert "inspector 0.860, surface 0.660" in lines[1]
    assert lines[2].startswith("open: ") and str(viewer) in lines[2] and "runs/notebooks/" in lines[2]


def test_real_notes_fall_back_to_the_benchmark_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("ehrlib.bench.build.demo_folder", lambda: None)  # demo imports it when the step runs
    figures = tmp_path / "figures"
    figures.mkdir()
    rows = _metrics().assign(corpus="realnotes_holdout", scope="all")
    other = _metrics().assign(corpus="synthetic_test", scope="all", f1=0.1)
    pd.concat([other, rows]).to_csv(figures / "bench_quality.csv", index=False)
    real = demo._real_notes(DemoConfig(figures_dir=figures))
    assert real is not None and not real.ran
    assert "bench_quality.csv" in real.source and "not found" in real.source
    assert sorted(real.metrics["f1"]) == [0.66, 0.86]
    assert "numbers read from" in capsys.readouterr().out
    lines = closing_lines(DemoConfig(figures_dir=figures), _metrics(), real, [], [])
    assert "(from the benchmark file)" in lines[1] and "real-patient" not in lines[0]


def test_real_notes_absent_everywhere(tmp_path, monkeypatch):
    monkeypatch.setattr("ehrlib.bench.build.demo_folder", lambda: None)  # demo imports it when the step runs
    assert demo._real_notes(DemoConfig(figures_dir=tmp_path)) is None


def test_notebooks_without_the_extra_fail_before_any_work(tmp_path, monkeypatch):
    import builtins

    import pytest

    from ehrlib.errors import ConfigError

    real_import = builtins.__import__

    def no_papermill(name, *args, **kwargs):
        if name == "papermill":
            raise ImportError("no papermill")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_papermill)
    with pytest.raises(ConfigError, match=r"ehrlib\[notebooks\]"):
        demo.run_demo(DemoConfig(out_dir=tmp_path / "demo", notebooks=True))
    assert not (tmp_path / "demo").exists()
