"""The speed benchmark's bookkeeping: what counts as the same predictions, speed-ups and the projection."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ehrlib.bench import speed
from ehrlib.errors import ConfigError


def _run(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return folder


def _pred(run_id: str, label: str, ms: float, call_id: str) -> dict:
    return {"run_id": run_id, "note_id": "n1", "entity_id": "n1:e1", "label": label,
            "tool_calls": [{"tool": "Get_Item_Status_History", "args": {"item": "labevents:1"}, "n_rows": 2,
                            "ms": ms, "call_id": call_id}]}


def test_canonical_predictions_ignore_run_id_timing_and_call_numbering(tmp_path):
    a = _run(tmp_path / "a", [_pred("r1", "consistent", 1.5, "call-3")])
    b = _run(tmp_path / "b", [_pred("r2", "consistent", 9.0, "call-7")])
    c = _run(tmp_path / "c", [_pred("r1", "inconsistent", 1.5, "call-3")])
    assert speed.canonical_predictions(a) == speed.canonical_predictions(b)
    assert speed.canonical_predictions(a) != speed.canonical_predictions(c)   # a verdict change shows


def test_speedups_identity_and_projection(tmp_path):
    same = _run(tmp_path / "same", [_pred("x", "consistent", 1, "call-1")])
    other = _run(tmp_path / "other", [_pred("y", "inconsistent", 1, "call-1")])
    base = _run(tmp_path / "base", [_pred("z", "consistent", 1, "call-9")])
    rows = [
        {"code": "baseline", "scenario": "real_corpus", "_mode": "warm", "wall_s": 30.0, "cpu_s": 28.0,
         "n_notes": 14, "_run": base},
        {"code": "current", "scenario": "real_corpus", "_mode": "cold", "wall_s": 15.0, "cpu_s": 14.0,
         "n_notes": 14, "_run": other},
        {"code": "current", "scenario": "real_corpus", "_mode": "warm", "wall_s": 10.0, "cpu_s": 7.0,
         "n_notes": 14, "_run": same},
    ]
    speed._finish(rows)
    assert [r["speedup_vs_baseline"] for r in rows] == [1.0, 2.0, 3.0]
    assert [r["identical_predictions"] for r in rows] == ["", "no", "yes"]
    # 0.5 CPU s per note x 59,652 notes = 8.3 h on one core, 0.26 h on 32
    assert rows[2]["projected_hours_1_core"] == 8.3 and rows[2]["projected_hours_32_cores"] == 0.26


def test_unknown_baseline_ref_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv(speed.BASELINE_ENV, "no-such-ref-xyz")
    monkeypatch.setattr(speed, "demo_folder", lambda: tmp_path)
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "mimic3demo.duckdb").write_bytes(b"")   # present: the build is skipped
    with pytest.raises(ConfigError) as exc:
        speed.run(tmp_path / "out", work_dir=tmp_path / "w")
    assert "no-such-ref-xyz" in str(exc.value) and "\n" not in str(exc.value)


def test_a_child_started_from_the_checkout_imports_the_code_it_is_given(tmp_path, monkeypatch):
    """The baseline must run the baseline's code: ``python -m`` puts the working folder before
    ``PYTHONPATH``, so a child started in the checkout would import the checkout instead."""
    import subprocess
    import sys

    other = tmp_path / "other" / "ehrlib"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("", encoding="utf-8")
    (other / "__main__.py").write_text("import ehrlib; print(ehrlib.__file__)\n", encoding="utf-8")
    monkeypatch.chdir(speed.repo_root())   # where `make bench` runs it
    env, cwd = speed.child_process(tmp_path / "other", tmp_path / "cache", tmp_path)
    out = subprocess.run([sys.executable, "-m", "ehrlib"], env=env, cwd=cwd, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == str(other / "__init__.py")
    # the trap it avoids: the same child started in the checkout imports the checkout's package
    trapped = subprocess.run([sys.executable, "-c", "import ehrlib; print(ehrlib.__file__)"], env=env,
                             cwd=speed.repo_root(), capture_output=True, text=True, check=True).stdout.strip()
    assert trapped != str(other / "__init__.py")


def test_a_child_keeps_bytecode_beside_the_cache(tmp_path, monkeypatch):
    """An environment that forbids bytecode (PYTHONDONTWRITEBYTECODE) would make every run
    compile every module from source: the children keep theirs, as an installed package does."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env, _ = speed.child_process(tmp_path / "code", tmp_path / "cache-current", tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] == str((tmp_path / "pycache").resolve())
