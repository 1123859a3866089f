"""Confidence calibration: features, the model and its file, LOSO, abstention, the runner's record."""
from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

from ehrlib.corpus.records import GoldEntity, ItemRef, Prediction, RowRef, TimeSpan, ToolCallRecord
from ehrlib.errors import ConfigError
from ehrlib.pipeline.calibration import apply as apply_mod
from ehrlib.pipeline.calibration.apply import apply_confidence, resolve_calibrator
from ehrlib.pipeline.calibration.features import (
    NO_EVIDENCE,
    EvidenceStats,
    evidence_stats,
    prediction_features,
    stated_number,
)
from ehrlib.pipeline.calibration.model import (
    FEATURE_VERSION,
    CalibratorError,
    fit_calibrator,
    fit_label_model,
    load_calibrator,
)
from ehrlib.pipeline.calibration.training import SetData, choose_threshold, ece, loso_probabilities, targets
from ehrlib.pipeline.params import DEFAULT_ABSTAIN_BELOW, load_params

HCT = ItemRef("labevents", "Hematocrit", 51221)
TEMP = ItemRef("chartevents", "Temperature C", 223762)


def _pred(label="inconsistent", value="was 21", items=(HCT,), **kw):
    base = {"run_id": "r", "note_id": "n1", "line": 0, "entity": "Hct", "label": label, "items": items,
            "value": value, "time_window": TimeSpan("2100-01-01 00:00:00", "2100-01-02 23:59:59"),
            "rule_id": "numbers.value_in_window", "inconsistency_type": "contradiction" if label == "inconsistent"
            else None, "reason": "Hct 21: stated value 21 not found in the window; recorded 21.6, 24"}
    base.update(kw)
    return Prediction(**base)


def _row(t, num, unit="%", value=None):
    return {"table": "labevents", "row_id": t, "time": t, "value": value or str(num), "valuenum": num, "unit": unit}


# --- features ------------------------------------------------------------------------

def test_evidence_stats_on_hand_made_rows():
    rows = [_row("2100-01-01 06:00:00", 21.6), _row("2100-01-02 05:00:00", 24.0),
            _row("2100-01-03 10:00:00", 21.0),          # agrees, a day after the window
            _row("2100-01-06 10:00:00", 21.0)]          # agrees, but far outside: not counted
    ev = evidence_stats(_pred(), rows, "2100-01-03 12:00:00")
    assert ev.n_in_window == 2 and ev.looked_up
    assert ev.rel_dev == pytest.approx(0.6 / 21)
    assert ev.agree_outside is True
    assert ev.note_gap_h == pytest.approx(12 + 1 / 3600)
    assert ev.unit_converted is False
    # no agreeing row near the window
    assert evidence_stats(_pred(), rows[:2] + rows[3:], "2100-01-03").agree_outside is False


def test_evidence_stats_unit_conversion_and_no_items():
    rows = [_row(f"2100-01-01 0{h}:00:00", v, unit="?C") for h, v in ((1, 36.5), (2, 37.0), (3, 38.4))]
    ev = evidence_stats(_pred(value="101.2", items=(TEMP,)), rows, None)
    assert ev.unit_converted and ev.rel_dev == pytest.approx(abs((101.2 - 32) / 1.8 - 38.4) / ((101.2 - 32) / 1.8),
                                                            abs=1e-3)
    assert ev.note_gap_h is None
    assert evidence_stats(_pred(items=()), rows, "2100-01-02").looked_up is False


def test_prediction_features_degrade_without_new_fields():
    bare = prediction_features(_pred(), "nursing")
    assert bare["rule_family"] == "numbers" and bare["family_label"] == "numbers:inconsistent"
    assert bare["time_basis"] == "none" and bare["n_deciding_rows"] == 0.0
    assert bare["rel_dev_known"] == 0.0 and bare["kind"] == "number" and bare["reason_scope"] == "value_not_found"
    full = prediction_features(_pred(time_basis="relative_day", deciding_row_ids=(RowRef("labevents", 1),),
                                     tool_calls=(ToolCallRecord("x", {}, error="boom"),)), "nursing",
                               EvidenceStats(rel_dev=5.0, n_in_window=3, looked_up=True, note_gap_h=48.0))
    assert full["time_basis"] == "relative_day" and full["n_deciding_rows"] == 1.0 and full["failed_calls"] == 1.0
    assert full["rel_dev"] == 2.0 and full["note_gap_h"] == 2.0 and full["log_in_window"] == pytest.approx(math.log(4))
    assert prediction_features(_pred(value="90s-100s"), None, NO_EVIDENCE)["kind"] == "range"
    assert stated_number("rose to 1355") == 1355.0 and stated_number("SR") is None


# --- the model -----------------------------------------------------------------------

def _synthetic_rows(n, rng, group):
    """Alarms whose chance of being right is 0.2 + 0.7 * rel_dev (rel_dev in [0, 1])."""
    rows, y = [], []
    for _ in range(n):
        d = float(rng.uniform(0, 1))
        rows.append({"label": "inconsistent", "rule_id": "numbers.x", "rel_dev": d, "rel_dev_known": 1.0})
        y.append(int(rng.uniform() < 0.2 + 0.7 * d))
    return rows, y, [group] * n


def test_calibrator_recovers_a_known_probability():
    rng = np.random.default_rng(0)
    rows, y, groups = [], [], []
    for g in "abcd":
        r, t, gs = _synthetic_rows(600, rng, g)
        rows, y, groups = rows + r, y + t, groups + gs
    model = fit_label_model(rows, y, groups)
    probe = [{"label": "inconsistent", "rule_id": "numbers.x", "rel_dev": d, "rel_dev_known": 1.0}
             for d in (0.1, 0.5, 0.9)]
    assert model.predict(probe) == pytest.approx([0.27, 0.55, 0.83], abs=0.08)
    test_rows, test_y, _ = _synthetic_rows(2000, rng, "z")
    assert ece(model.predict(test_rows).tolist(), test_y) < 0.05


def test_model_file_round_trip_and_checks(tmp_path):
    rng = np.random.default_rng(1)
    rows, y, groups = _synthetic_rows(400, rng, "a")
    rows += [{**r, "label": "consistent"} for r in rows[:200]]
    y += [1 - v for v in y[:200]]
    cal = fit_calibrator(rows, y, groups + ["b"] * 200)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(cal.to_json("now")))
    back = load_calibrator(path)
    assert back.predict(rows[:5]) == cal.predict(rows[:5])
    assert back.predict([{"label": "unverified"}]) == [None]
    assert len(back.sha256) == 64 and back.describe()["status"] == "calibrated"
    with pytest.raises(CalibratorError, match="ehrlib calibrate"):
        load_calibrator(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CalibratorError, match="corrupt.*ehrlib calibrate"):
        load_calibrator(tmp_path / "bad.json")
    old = {**json.loads(path.read_text()), "feature_version": FEATURE_VERSION + 1}
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(CalibratorError, match="fitted for.*ehrlib calibrate"):
        load_calibrator(tmp_path / "old.json")
    broken = json.loads(path.read_text())
    broken["models"]["inconsistent"]["coef"] = [1.0]
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(CalibratorError, match="malformed"):
        load_calibrator(tmp_path / "broken.json")


def test_bundled_calibrator_is_current():
    cal = load_calibrator(apply_mod.bundled_path())
    assert set(cal.models) == {"consistent", "inconsistent"}


def test_missing_bundled_file_is_a_visible_fallback(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(apply_mod, "bundled_path", lambda: tmp_path / "gone.json")
    with caplog.at_level(logging.WARNING):
        res = resolve_calibrator(None, 0.5)
    assert res.calibrator is None and res.record["status"] == "uncalibrated"
    assert "ehrlib calibrate" in res.record["reason"] and "uncalibrated" in caplog.text
    assert resolve_calibrator("none", 0.5).record == {"status": "uncalibrated", "reason": "calibrator: none",
                                                      "abstain_below": None}
    with pytest.raises(CalibratorError, match="ehrlib calibrate"):   # an explicit file is never skipped
        resolve_calibrator(str(tmp_path / "gone.json"), 0.5)


# --- abstention ----------------------------------------------------------------------

def test_abstention_withholds_only_unsure_alarms():
    preds = [_pred(), _pred(), _pred(label="consistent"), _pred(label="unverified")]
    out = apply_confidence(preds, [0.32, 0.8, 0.1, None], 0.5)
    assert out[0].label == "unverified" and out[0].abstained_from == "inconsistent"
    assert out[0].reason.startswith("low confidence (p=0.32): Hct 21") and out[0].confidence == 0.32
    assert out[0].inconsistency_type is None
    assert out[1].label == "inconsistent" and out[1].confidence == 0.8 and out[1].abstained_from is None
    assert out[2].label == "consistent" and out[2].confidence == 0.1        # consistent verdicts are kept
    assert out[3] == preds[3]                                                # no verdict, no confidence
    assert apply_confidence(preds, [0.32, 0.8, 0.1, None], 0.0)[0].label == "inconsistent"


@pytest.mark.parametrize("bad", ["nan", "inf", "1.5", "-0.1", "high"])
def test_abstain_below_is_validated(bad):
    with pytest.raises(ConfigError, match="abstain_below"):
        load_params(None, abstain_below=bad)


def test_abstain_below_accepts_numbers():
    assert load_params(None, abstain_below="0.3").abstain_below == 0.3
    assert load_params(None, calibrator="none").calibrator == "none"


# --- training data and LOSO ----------------------------------------------------------

def _set(name, n_right, n_wrong):
    """A set of one note: n_right alarms on inconsistent gold, n_wrong on consistent gold."""
    gold, preds = [], []
    for k in range(n_right + n_wrong):
        lab = "inconsistent" if k < n_right else "consistent"
        item = ItemRef("labevents", f"Item {name}{k}", 1000 + k)
        gold.append(GoldEntity(f"{name}-n", f"g{k}", k, f"item{k}", lab, (item,)))
        preds.append(_pred(note_id=f"{name}-n", line=k, entity=f"item{k}", items=(item,)))
    feats = tuple({"label": "inconsistent", "rule_id": "numbers.x", "rel_dev": float(k < n_right),
                   "rel_dev_known": 1.0} for k in range(n_right + n_wrong))
    return SetData(name, tuple(gold), tuple(preds), feats, tuple(targets(gold, preds)))


def test_targets_follow_the_matcher():
    s = _set("a", 2, 1)
    assert s.right == (1, 1, 0)
    stray = _pred(note_id="a-n", line=40, entity="something else", items=(ItemRef("labevents", "Other", 9),))
    assert targets(s.gold, [*s.preds, stray])[-1] == 0     # unmatched: not right


def test_loso_never_trains_on_the_scored_set():
    sets = [_set(n, 6, 6) for n in "abc"]
    seen = {}

    def spy(rows, y, groups):
        held = ({"a", "b", "c"} - set(groups)).pop()
        seen[held] = set(groups)
        return fit_calibrator(rows, y, groups)

    loso = loso_probabilities(sets, spy)
    assert seen == {"a": {"b", "c"}, "b": {"a", "c"}, "c": {"a", "b"}}
    assert all(len(loso[s.name]) == len(s.preds) for s in sets)
    # wrong alarms (rel_dev 0) are scored lower than right ones on every held-out set
    assert all(max(loso[s.name][6:]) < min(loso[s.name][:6]) for s in sets)
    assert choose_threshold(sets, loso) > 0.0


# --- the runner ----------------------------------------------------------------------

def _runner_corpus(tmp_path, synth_db):
    import duckdb

    from ehrlib.corpus.io import write_jsonl
    from ehrlib.corpus.records import Note

    con = duckdb.connect(str(synth_db), read_only=True)
    s, h, t = con.execute("SELECT subject_id, hadm_id, admittime FROM admissions ORDER BY hadm_id LIMIT 1").fetchone()
    con.close()
    corpus = tmp_path / "corpus"
    write_jsonl([Note("c1", s, h, "physician", str(t.date()),
                      "Events:\nHR 97\nCreatinine 9.9\nWBC 7\nLactate 2.2\nPlan: follow up")], corpus / "notes.jsonl")
    return corpus


def test_runner_records_the_calibrator_and_fills_confidence(tmp_path, synth_db):
    from ehrlib.pipeline.runner import run_experiment

    corpus = _runner_corpus(tmp_path, synth_db)
    common = {"corpus": str(corpus), "db": str(synth_db), "backend": "offline", "runs_dir": str(tmp_path / "runs"),
              "progress": False}
    run_dir = run_experiment(load_params(None, run_id="cal", **common))
    withheld = run_experiment(load_params(None, run_id="abstain", abstain_below=1.0, **common))
    after = [json.loads(x) for x in (withheld / "predictions.jsonl").read_text().splitlines()]
    assert all(p["label"] != "inconsistent" for p in after)
    assert json.loads((withheld / "manifest.json").read_text())["calibration"]["abstain_below"] == 1.0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    cal = manifest["calibration"]
    assert cal["status"] == "calibrated" and cal["abstain_below"] == DEFAULT_ABSTAIN_BELOW == 0.5
    assert cal["sha256"] == load_calibrator(apply_mod.bundled_path()).sha256
    preds = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert preds and all((p["confidence"] is not None)
                         == (p["label"] != "unverified" or p["abstained_from"] is not None) for p in preds)
    assert all(p["label"] == "unverified" for p in preds if p["abstained_from"])

    raw = run_experiment(load_params(None, run_id="raw", calibrator="none", **common))
    assert json.loads((raw / "manifest.json").read_text())["calibration"]["status"] == "uncalibrated"
    assert all(json.loads(x)["confidence"] is None for x in (raw / "predictions.jsonl").read_text().splitlines())

    broken = tmp_path / "broken.json"
    broken.write_text("[]")
    with pytest.raises(CalibratorError, match="ehrlib calibrate"):
        run_experiment(load_params(None, run_id="bad", calibrator=str(broken), **common))


def test_cli_names_ehrlib_calibrate_for_a_bad_file(tmp_path, synth_db, capsys):
    from ehrlib.cli import main

    corpus = _runner_corpus(tmp_path, synth_db)
    bad = tmp_path / "cal.json"
    bad.write_bytes(b"\x00\x01")
    code = main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--runs-dir", str(tmp_path),
                 "--calibrator", str(bad), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "ehrlib calibrate" in err[0]
    assert main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--abstain-below", "2"]) == 2


def test_refit_writes_a_loadable_model_and_manifest(tmp_path):
    from ehrlib.bench.calibrate import refit

    path, info = refit([_set(n, 6, 6) for n in "abc"], tmp_path / "cal.json")
    cal = load_calibrator(path)
    manifest = json.loads((tmp_path / "cal.manifest.json").read_text())
    assert manifest["model_sha256"] == cal.sha256 and set(manifest["training_sets"]) == {"a", "b", "c"}
    assert [m["set"] for m in manifest["loso"]] == ["a", "b", "c"] and manifest["sklearn_version"]
    assert info["abstain_below_chosen"] == manifest["abstain_below_chosen"]


def test_calibration_benchmark_tables_and_figures(tmp_path):
    from ehrlib.bench.calibration import HEADER, evaluate
    from ehrlib.viz import savefig
    from ehrlib.viz.confidence import plot_reliability, plot_risk_coverage

    rows, bins, curves = evaluate([_set(n, 6, 6) for n in "abc"], threshold=0.5)
    assert [r["set"] for r in rows] == ["a", "b", "c", "all"] and all(set(HEADER) <= set(r) for r in rows)
    pooled = rows[-1]
    assert pooled["alarms_before"] == 36 and pooled["alarm_precision_before"] == 0.5
    assert pooled["alarm_precision_after"] > 0.5 and pooled["f1_after"] <= pooled["f1_before"]
    assert set(bins.columns) >= {"label", "mean_confidence", "observed", "n"} and bins["n"].sum() == 36
    full = curves[(curves["set"] == "all") & (curves["threshold"] == 0.0)].iloc[0]
    assert full["coverage"] == 1.0 and full["alarm_precision"] == 0.5
    for fig, name in ((plot_reliability(bins), "rel"), (plot_risk_coverage(curves), "cov")):
        (png,) = savefig(fig, name, out_dir=tmp_path, formats=("png",))
        assert png.stat().st_size > 1000
