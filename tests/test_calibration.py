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
from ehrlib.pipeline.calibration.apply import apply_confidence, note_features, resolve_calibrator
from ehrlib.pipeline.calibration.features import (
    NO_EVIDENCE,
    EvidenceStats,
    evidence_stats,
    item_similarity,
    line_sections,
    prediction_features,
    stated_number,
)
from ehrlib.pipeline.calibration.model import (
    FEATURE_VERSION,
    MODEL_KINDS,
    CalibratorError,
    fit_calibrator,
    fit_label_model,
    load_calibrator,
)
from ehrlib.pipeline.calibration.training import SetData, auc, choose_threshold, ece, loso_probabilities, targets
from ehrlib.pipeline.calibration.trees import GBM_PARAMS, TreeModel, export_gbm, fit_tree_model
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


def test_evidence_stats_distance_to_agreeing_rows_and_the_note():
    rows = [_row("2100-01-01 06:00:00", 19.0), _row("2100-01-02 20:00:00", 25.0),   # in the window: no 21
            _row("2100-01-04 05:00:00", 21.2),          # agrees (within 2 %), 29 h after the window
            _row("2099-12-31 18:00:00", 30.0)]
    ev = evidence_stats(_pred(), rows, "2100-01-02 12:00:00")
    assert ev.agree_outside is False and ev.agree_gap_h == pytest.approx(29 + 1 / 3600)
    assert ev.agree_note_h == pytest.approx(41.0)          # charted 41 h after the note
    assert ev.n_after_note == 1                            # the 20:00 row is in the window, after the note
    assert ev.in_range is True                             # 21 lies between 19 and 25
    assert ev.rel_dev == pytest.approx(2 / 21) and ev.rel_dev_any == pytest.approx(0.2 / 21)
    inside = evidence_stats(_pred(value="was 19"), rows, "2100-01-02 12:00:00")
    assert inside.agree_gap_h == 0.0 and inside.agree_note_h == pytest.approx(-30.0)
    nothing = evidence_stats(_pred(value="was 50"), rows, None)
    assert nothing.agree_gap_h is None and nothing.agree_note_h is None and nothing.in_range is False
    feats = prediction_features(_pred(), "nursing", ev, "labs")
    assert feats["agree_known"] == 1.0 and feats["agree_gap_h"] == pytest.approx(math.log1p(29 + 1 / 3600))
    assert feats["agree_note_h"] == pytest.approx(math.log1p(41)) and feats["section"] == "labs"
    assert prediction_features(_pred(), "nursing", inside)["agree_note_h"] == pytest.approx(-math.log1p(30))


def test_item_similarity_and_line_sections():
    assert item_similarity(_pred(entity="hematocrit")) == 1.0
    assert item_similarity(_pred(entity="lactate")) < 0.5
    assert item_similarity(_pred(items=())) == 0.0
    text = "Chief Complaint: sepsis\nHPI:\n72M with fever\nPhysical Examination\nHR 97\nAssessment and Plan:\n# AKI"
    secs = line_sections(text, "physician")
    assert len(secs) == 7 and secs[2] == "hpi" and secs[4] == "exam" and secs[6] == "assessment_plan"
    rows = note_features([_pred(line=4)], "physician", None, None, text)
    assert rows[0]["section"] == "exam"
    assert note_features([_pred(line=40)], "physician", None, None, text)[0]["section"] == "none"


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


def test_exported_trees_reproduce_sklearn_exactly():
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(3)
    x = np.column_stack([rng.normal(size=3000), rng.normal(size=3000), rng.integers(0, 2, 3000),
                         rng.uniform(-50, 50, 3000)])
    z = 1.5 * x[:, 0] - x[:, 1] * x[:, 2] + 0.02 * x[:, 3]
    y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-z))).astype(int)
    gbm = GradientBoostingClassifier(**GBM_PARAMS).fit(x.astype(np.float32), y)
    model = TreeModel.from_json(json.loads(json.dumps(export_gbm(gbm, x, {}, ("a", "b", "c", "d")).to_json())))
    fresh = np.column_stack([rng.normal(size=2000), rng.normal(size=2000), rng.integers(0, 2, 2000),
                             rng.uniform(-80, 80, 2000)])
    for m in (x, fresh):
        ours = 1 / (1 + np.exp(-model.decision(m)))
        assert np.abs(ours - gbm.predict_proba(m.astype(np.float32))[:, 1]).max() < 1e-9
    assert len(model.trees) == GBM_PARAMS["n_estimators"] and max(len(t.feature) for t in model.trees) <= 15


@pytest.mark.parametrize("fit", [fit_label_model, fit_tree_model], ids=["logistic", "gbm"])
def test_calibrator_recovers_a_known_probability(fit):
    rng = np.random.default_rng(0)
    rows, y, groups = [], [], []
    for g in "abcd":
        r, t, gs = _synthetic_rows(600, rng, g)
        rows, y, groups = rows + r, y + t, groups + gs
    model = fit(rows, y, groups)
    probe = [{"label": "inconsistent", "rule_id": "numbers.x", "rel_dev": d, "rel_dev_known": 1.0}
             for d in (0.1, 0.5, 0.9)]
    assert model.predict(probe) == pytest.approx([0.27, 0.55, 0.83], abs=0.08)
    test_rows, test_y, _ = _synthetic_rows(2000, rng, "z")
    assert ece(model.predict(test_rows).tolist(), test_y) < 0.05


def test_boosted_calibrator_learns_an_interaction():
    rng = np.random.default_rng(0)
    # an interaction no single feature shows: right when exactly one of two flags is set
    xor = [{"label": "inconsistent", "agree_outside": float(a), "in_range": float(b)}
           for a, b in rng.integers(0, 2, size=(2400, 2))]
    xy = [int(rng.uniform() < (0.9 if r["agree_outside"] != r["in_range"] else 0.1)) for r in xor]
    p = fit_tree_model(xor, xy, [str(i % 4) for i in range(len(xor))]).predict(
        [{"agree_outside": a, "in_range": b} for a, b in ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0))])
    assert p == pytest.approx([0.1, 0.9, 0.9, 0.1], abs=0.06)


def test_auc_and_the_threshold_rule():
    assert auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75
    assert auc([0.5, 0.5], [0, 1]) == 0.5 and auc([0.2], [1]) is None
    # three sets whose alarms are right exactly when their held-out confidence is >= 0.6
    sets = [_set(n, 8, 4) for n in "abc"]
    loso = {s.name: [0.9] * 6 + [0.6] * 2 + [0.3] * 4 for s in sets}
    # at 0.3 (nothing withheld) precision is 8/12; from 0.35 on it is 1.0 with recall 1.0
    assert choose_threshold(sets, loso) == 0.35
    # asking recall the threshold cannot keep: the best precision that keeps it (none: 0.0)
    assert choose_threshold(sets, loso, min_precision=0.99, min_recall=1.01) == 0.0


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_model_file_round_trip_and_checks(tmp_path, kind):
    rng = np.random.default_rng(1)
    rows, y, groups = _synthetic_rows(400, rng, "a")
    rows += [{**r, "label": "consistent"} for r in rows[:200]]
    y += [1 - v for v in y[:200]]
    cal = fit_calibrator(rows, y, groups + ["b"] * 200, kind=kind)
    assert cal.kind == kind
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
    older = {**json.loads(path.read_text()), "format_version": 1}    # a file of the logistic-only format
    (tmp_path / "older.json").write_text(json.dumps(older))
    with pytest.raises(CalibratorError, match="fitted for format 1.*ehrlib calibrate"):
        load_calibrator(tmp_path / "older.json")
    broken = json.loads(path.read_text())
    if kind == "logistic":
        broken["models"]["inconsistent"]["coef"] = [1.0]
    else:   # a node pointing outside its tree
        broken["models"]["inconsistent"]["trees"][3]["left"][0] = 99
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with pytest.raises(CalibratorError, match="malformed.*ehrlib calibrate"):
        load_calibrator(tmp_path / "broken.json")
    unknown = json.loads(path.read_text())
    unknown["models"]["inconsistent"]["kind"] = "forest"
    (tmp_path / "unknown.json").write_text(json.dumps(unknown))
    with pytest.raises(CalibratorError, match="malformed.*forest"):
        load_calibrator(tmp_path / "unknown.json")


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


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_loso_never_trains_on_the_scored_set(kind):
    sets = [_set(n, 30, 30) for n in "abc"]
    seen = {}

    def spy(rows, y, groups):
        held = ({"a", "b", "c"} - set(groups)).pop()
        seen[held] = set(groups)
        return fit_calibrator(rows, y, groups, kind=kind)

    loso = loso_probabilities(sets, spy)
    assert seen == {"a": {"b", "c"}, "b": {"a", "c"}, "c": {"a", "b"}}
    assert all(len(loso[s.name]) == len(s.preds) for s in sets)
    # wrong alarms (rel_dev 0) are scored lower than right ones on every held-out set
    assert all(max(loso[s.name][30:]) < min(loso[s.name][:30]) for s in sets)
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
    assert cal["status"] == "calibrated" and cal["abstain_below"] == DEFAULT_ABSTAIN_BELOW == 0.6
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

    path, info = refit([_set(n, 30, 30) for n in "abc"], tmp_path / "cal.json")
    cal = load_calibrator(path)
    assert cal.kind == info["model"] == "gbm" and info["gbm_params"]["max_depth"] <= 3
    manifest = json.loads((tmp_path / "cal.manifest.json").read_text())
    assert manifest["model_sha256"] == cal.sha256 and set(manifest["training_sets"]) == {"a", "b", "c"}
    assert [m["set"] for m in manifest["loso"]] == ["a", "b", "c"] and manifest["sklearn_version"]
    assert info["abstain_below_chosen"] == manifest["abstain_below_chosen"]


def test_calibration_benchmark_tables_and_figures(tmp_path):
    from ehrlib.bench.calibration import HEADER, evaluate, write_outputs

    rows, bins, curves = evaluate([_set(n, 30, 30) for n in "abc"], thresholds=(0.5,))
    for kind in MODEL_KINDS:   # both models side by side; the chosen threshold (0.05: the lowest
        mine = [r for r in rows if r["model"] == kind]   # meeting the target) added to the 0.5 asked for
        assert [(r["threshold"], r["chosen"], r["set"]) for r in mine] == [
            (t, int(t == 0.05), n) for t in (0.05, 0.5) for n in ("a", "b", "c", "all")]
        assert all(set(HEADER) <= set(r) for r in mine)
        pooled = mine[-1]
        assert pooled["alarms_before"] == 180 and pooled["alarm_precision_before"] == 0.5
        assert pooled["alarm_precision_after"] == 1.0 and pooled["f1_after"] <= pooled["f1_before"]
        assert pooled["auc"] == pooled["alarm_auc"] == 1.0
    assert set(bins.columns) >= {"model", "label", "mean_confidence", "observed", "n"}
    assert bins.groupby("model")["n"].sum().to_dict() == {"gbm": 180, "logistic": 180}
    full = curves[(curves["set"] == "all") & (curves["threshold"] == 0.0)]
    assert (full["coverage"] == 1.0).all() and (full["alarm_precision"] == 0.5).all()
    write_outputs(tmp_path, rows, bins, curves)
    assert (tmp_path / "bench_calibration.csv").read_text().splitlines()[0].startswith("model,threshold,chosen,set")
    for name in ("reliability", "coverage"):
        assert (tmp_path / f"bench_calibration_{name}.png").stat().st_size > 1000


def test_applying_the_bundled_model_never_imports_sklearn():
    import subprocess
    import sys

    code = ("import sys; from ehrlib.pipeline.calibration.apply import bundled_path; "
            "from ehrlib.pipeline.calibration.model import load_calibrator; "
            "cal = load_calibrator(bundled_path()); "
            "p = cal.predict([{'label': 'inconsistent', 'rule_id': 'numbers.value_in_window', 'rel_dev': 0.3}]); "
            "assert 0.0 <= p[0] <= 1.0 and cal.kind == 'gbm'; "
            "print(any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_confidence_is_certain():
    """An isotonic bin whose training verdicts were all right is a finite sample: capped below 1."""
    import numpy as np

    from ehrlib.pipeline.calibration.encoding import CERTAINTY_CAP, isotonic_map

    out = isotonic_map(np.array([0.0, 0.5, 1.0]), [0.0, 1.0], [0.0, 1.0])
    assert out[0] == 1.0 - CERTAINTY_CAP and out[2] == CERTAINTY_CAP < 1.0 and out[1] == 0.5
