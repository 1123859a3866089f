"""Test/valid splits: read from a corpus's manifest.json or import.json, applied by `ehrlib run`
(the notes it loads) and `ehrlib judge` (the notes it scores), a one-line error without them.
"""
from __future__ import annotations

import json

import pytest

from ehrlib.cli import main
from ehrlib.corpus.io import write_json
from ehrlib.corpus.splits import canonical_split, corpus_splits, split_note_ids, splits_record
from ehrlib.errors import ConfigError, DataError
from ehrlib.judge.evaluate import evaluate_run, read_judgements
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runner import _load_notes


def _assign(corpus, splits, where="import.json"):
    record = {"source": "ehrcon", "sha256": "0" * 64, "source_kind": "credentialed", "splits": splits}
    write_json(record, corpus / where)


def test_split_names_and_records():
    assert [canonical_split(s) for s in ("test", "valid", "validation", "Dev", "train")] == [
        "test", "valid", "valid", "valid", None]
    assert splits_record([("a", "test"), ("b", None), ("c", "valid")]) == {"test": ["a"], "valid": ["c"]}
    assert splits_record([("a", None)]) is None


def test_manifest_and_import_assignments(tmp_path):
    assert corpus_splits(tmp_path) is None
    write_json({"splits": {"validation": ["n2"], "test": ["n1"]}}, tmp_path / "manifest.json")
    assert split_note_ids(tmp_path, "valid") == {"n2"}      # the synthetic corpus says "validation"
    other = tmp_path / "imported"
    other.mkdir()
    _assign(other, {"test": ["1", "2"]})
    assert split_note_ids(other, "test") == {"1", "2"}
    with pytest.raises(ConfigError, match="has no 'valid' split"):
        split_note_ids(other, "valid")
    _assign(other, {"train": ["1"]})
    with pytest.raises(ConfigError, match="field 'splits'"):
        corpus_splits(other)


def test_run_loads_only_the_split_notes(tiny_run):
    _, corpus = tiny_run
    with pytest.raises(ConfigError, match="has no split assignment"):
        _load_notes(RunParams(corpus=str(corpus), split="test"))
    _assign(corpus, {"test": ["n1"], "valid": ["n2"]})
    notes, _ = _load_notes(RunParams(corpus=str(corpus), split="valid"))
    assert [n.note_id for n in notes] == ["n2"]
    assert [n.note_id for n in _load_notes(RunParams(corpus=str(corpus)))[0]] == ["n1", "n2"]
    _assign(corpus, {"test": ["n1", "n2"]})
    with pytest.raises(ConfigError, match="no 'valid' split"):
        _load_notes(RunParams(corpus=str(corpus), split="valid"))


def test_run_cli_reports_a_corpus_without_splits_in_one_line(tiny_run, capsys):
    _, corpus = tiny_run
    code = main(["run", "--corpus", str(corpus), "--db", str(corpus / "absent.duckdb"), "--split", "test",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "has no split assignment" in err  # before any database work


def test_judge_scores_only_the_split(tiny_run, capsys):
    run, corpus = tiny_run
    with pytest.raises(ConfigError, match="has no split assignment"):
        evaluate_run(run, split="test", progress=False)
    _assign(corpus, {"test": ["n1"], "valid": ["n2"]})
    valid = evaluate_run(run, split="valid", progress=False)
    assert set(valid["n_notes"]) == {1}
    assert {j.note_id for j in read_judgements(run)} == {"n2"}
    test = evaluate_run(run, split="test", progress=False)
    assert set(test["n_notes"]) == {1}
    # the other split's verdicts stay in judgements.jsonl; the tables cover the split judged
    assert {j.note_id for j in read_judgements(run)} == {"n1", "n2"}
    assert json.loads((run / "judges.json").read_text())["matcher"]["split"] == "test"
    both = evaluate_run(run, progress=False)
    assert set(both["n_notes"]) == {2}
    code = main(["judge", "--run", str(run), "--split", "valid", "--no-progress"])
    assert code == 0 and "| matcher | harsh | 1 |" in capsys.readouterr().out
    _assign(corpus, {"test": ["n9"]})
    with pytest.raises(DataError, match="attempted no note of the test split"):
        evaluate_run(run, split="test", progress=False)
