"""Real demo datasets as run variants: skipped with a reason when absent, labelled in tables."""
from __future__ import annotations

import pandas as pd
import pytest

from ehrlib.experiments import realdata
from ehrlib.experiments.realdata import REAL_DATASETS, dataset_table, real_variants


def test_absent_demo_data_is_reported_as_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(realdata, "data_folder", lambda ds: None)
    variants, skipped = real_variants(tmp_path, ["mimic3", "mimic4"])
    assert variants == {}
    assert list(skipped["dataset"]) == [REAL_DATASETS["mimic3"].label, REAL_DATASETS["mimic4"].label]
    assert skipped["reason"].str.contains("not found").all()


def test_unknown_dataset_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="unknown real dataset"):
        real_variants(tmp_path, ["mimic5"])


def test_dataset_labels():
    summary = pd.DataFrame({"variant": ["demo_mimic3_perturbed", "mimic4"], "model": [None, "m"],
                            "backend": ["offline", "offline"]})
    out = dataset_table(summary)
    assert list(out["dataset"]) == ["MIMIC-III demo (perturbed)", "synthetic mimic4"]
    assert list(out["backbone"]) == ["offline", "m"]
