"""The NER extraction baseline (ehrlib.ner): BIO conversion, the tagger, the ``--extraction ner``
stage end to end, the missing-model error."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ehrlib.corpus.records import GoldEntity, Note
from ehrlib.errors import ConfigError, DataError
from ehrlib.ner.bio import locate_spans, spans_to_tags, tags_to_spans, tokenize
from ehrlib.ner.extractor import UNREAD_RULE, NerExtractor, segment_spans
from ehrlib.ner.tagger import load_tagger, train_tagger
from ehrlib.ner.training import corpus_sequences
from ehrlib.pipeline.records import Entity, Segment


def test_bio_round_trip_from_gold_spans():
    line = "- K 3.4 this AM, repleted; K 3.9 tonight"
    spans, missing = locate_spans(5, line, ["K", "repleted", "K", "lactate"])
    assert missing == ["lactate"]
    assert [(s.start, s.end, s.text) for s in spans] == [(2, 3, "K"), (17, 25, "repleted"), (27, 28, "K")]
    tokens = tokenize(line)
    tags = spans_to_tags(tokens, spans)
    assert [t.text for t, g in zip(tokens, tags, strict=True) if g != "O"] == ["K", "repleted", "K"]
    assert tags_to_spans(5, line, tokens, tags) == spans


def test_bio_multi_token_entities_and_overlaps():
    line = "BP 100/60 on levophed"
    spans, _ = locate_spans(0, line, ["BP 100/60", "BP", "levophed"])   # "BP" overlaps the longer span: dropped
    assert [s.text for s in spans] == ["BP 100/60", "levophed"]
    tokens = tokenize(line)
    tags = spans_to_tags(tokens, spans)
    assert tags == ["B", "I", "I", "I", "O", "B"]
    assert [s.text for s in tags_to_spans(0, line, tokens, tags)] == ["BP 100/60", "levophed"]
    # a tagger's stray I opens a span instead of being lost
    assert [s.text for s in tags_to_spans(0, line, tokens, ["O", "O", "O", "O", "O", "I"])] == ["levophed"]


def _planted():
    """Vital signs are entities, the words around them are not."""
    lines = []
    for k, (a, b) in enumerate([("HR", "BP"), ("RR", "HR"), ("BP", "SpO2"), ("SpO2", "RR"), ("HR", "SpO2")] * 4):
        lines.append(f"{a} {80 + k} and {b} {90 + k} noted by the team")
        lines.append("Plan: continue to follow closely with the team")
    seqs = []
    for line in lines:
        tokens = tokenize(line)
        words = [w for w in ("HR", "BP", "RR", "SpO2") if w in line.split()]
        spans, _ = locate_spans(0, line, words)
        seqs.append((line, tokens, spans_to_tags(tokens, spans)))
    return seqs


def test_tagger_learns_planted_corpus_and_saves_without_pickle(tmp_path):
    tagger = train_tagger(_planted(), min_count=1)
    line = "HR 101 and RR 22 noted by the team"
    tokens = tokenize(line)
    assert [s.text for s in tags_to_spans(0, line, tokens, tagger.tag(line, tokens))] == ["HR", "RR"]
    plan = "Plan: continue to follow closely"
    assert set(tagger.tag(plan, tokenize(plan))) == {"O"}
    folder = tagger.save(tmp_path / "m", {"training_sets": {"planted": {}}})
    with np.load(folder / "model.npz", allow_pickle=False) as z:   # readable with pickle off
        assert z["weights"].shape[0] == len(tagger.vocab)
    again, manifest = load_tagger(folder)
    assert manifest["training_sets"] == {"planted": {}} and manifest["features_version"] == 1
    assert again.tag(line, tokens) == tagger.tag(line, tokens)


def test_missing_or_foreign_model_is_one_line_error(tmp_path):
    with pytest.raises(ConfigError, match="ehrlib train-ner"):
        load_tagger(tmp_path / "absent")
    folder = train_tagger(_planted(), min_count=1).save(tmp_path / "m", {})
    doc = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**doc, "features_version": 99}))
    with pytest.raises(DataError, match="other features"):
        load_tagger(folder)


def test_cli_run_with_missing_model_names_the_command(tiny_run, synth_db, tmp_path, capsys):
    from ehrlib.cli import main

    _, corpus = tiny_run
    code = main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--runs-dir", str(tmp_path / "ner-runs"),
                 "--extraction", "ner", "--ner-model", str(tmp_path / "nomodel"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "ehrlib train-ner" in err and "nomodel" in err
    assert not (tmp_path / "ner-runs").exists()   # refused before a run folder was made


def test_corpus_sequences_tags_every_nonblank_line():
    from ehrlib.corpus.io import Corpus

    note = Note("n1", 1, 2, "physician", "2150-01-01", "K 3.4, repleted\n\nPlan: none")
    gold = (GoldEntity("n1", "g1", 0, "K", "consistent"), GoldEntity("n1", "g2", 0, "Mg", "consistent"))
    corpus = Corpus((note,), gold, {})
    seqs, stats = corpus_sequences(corpus)
    assert [s[0] for s in seqs] == ["K 3.4, repleted", "Plan: none"]
    assert seqs[0][2][0] == "B" and set(seqs[1][2]) == {"O"}
    assert (stats.lines, stats.entities, stats.not_found) == (2, 2, 1)


def test_ner_stage_takes_framework_reading_of_overlapping_span():
    tagger = train_tagger(_planted(), min_count=1)
    lines = ["HR 120 and BP 90 noted by the team", "Plan: continue to follow closely with the team"]
    framework = (Entity("L0:0", 0, "HR 120", "measurement", value="120", span=(0, 6)),
                 Entity("L1:0", 1, "Plan", "finding", span=(0, 4)))

    def reader(ctx, env, seg, timeline, known):
        from ehrlib.pipeline.stages import StageOutput
        return StageOutput(framework)

    ctx = type("Ctx", (), {"lines": lines})()
    out = NerExtractor(tagger, (reader,))(ctx, None, Segment(0, 0, 1, "s", "other"), None, ())
    assert [(e.entity_id, e.text, e.kind, e.value) for e in out.value] == [("N0:0", "HR", "measurement", "120")]
    assert [(d.text, d.rule_id) for d in out.dropped] == [("BP", UNREAD_RULE)]   # no framework reading
    bare = NerExtractor(tagger)(ctx, None, Segment(0, 0, 1, "s", "other"), None, ())
    assert [(e.text, e.kind, e.source) for e in bare.value] == [("HR", "event", "baseline"),
                                                                ("BP", "event", "baseline")]


def test_extraction_ner_end_to_end_on_synthetic_db(synth_db, tmp_path_factory):
    from ehrlib.corpus.io import load_corpus
    from ehrlib.judge.evaluate import evaluate_run
    from ehrlib.ner.evaluate import run_extraction_scores
    from ehrlib.ner.training import train_on
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.runner import run_experiment
    from ehrlib.synth.notes import write_corpus

    work = tmp_path_factory.mktemp("ner_e2e")
    cdir = write_corpus(synth_db, work / "corpus", seed=2, notes_per_type=1, progress=False)
    tagger, manifest = train_on({"synthetic_validation": load_corpus(cdir, split="validation")})
    model = tagger.save(work / "model", manifest)
    test_ids = tuple(n.note_id for n in load_corpus(cdir, split="test").notes)[:3]
    runs = {}
    for ext in ("inspector", "ner"):
        params = RunParams(corpus=str(cdir), db=str(synth_db), extraction=ext, ner_model=str(model),
                           run_id=f"e2e-{ext}", runs_dir=str(work / "runs"), note_ids=test_ids, progress=False)
        runs[ext] = run_experiment(params)
        evaluate_run(runs[ext], progress=False)
    manifest = json.loads((runs["ner"] / "manifest.json").read_text())
    assert manifest["params"]["extraction"] == "ner"
    preds = [json.loads(x) for x in (runs["ner"] / "predictions.jsonl").read_text().splitlines()]
    notes = {n.note_id: n for n in load_corpus(cdir).notes}
    tagged = {(nid, s.line, s.text) for nid in test_ids for s in segment_spans(
        tagger, notes[nid].lines, Segment(0, 0, len(notes[nid].lines) - 1, "note", "other"))}
    assert preds and all((p["note_id"], p["line"], p["entity"]) in tagged for p in preds)   # only the tagger's spans
    table = run_extraction_scores({"framework": runs["inspector"], "ner": runs["ner"]})
    assert list(table["extraction"]) == ["framework", "ner"]
    ner = table.set_index("extraction").loc["ner"]
    # two validation notes teach it little, but what it tags and the framework reads is verified and judged
    assert ner["n_pred"] == len(preds) and ner["extraction_recall"] > 0 and ner["lenient_f1"] > 0


def test_bundled_model_loads_and_never_saw_the_sealed_set():
    from ehrlib.bench.quality import ESTIMATE_SET
    from ehrlib.ner.training import DEFAULT_MODEL

    tagger, manifest = load_tagger(DEFAULT_MODEL)
    assert ESTIMATE_SET[0] not in manifest["training_sets"] and "synthetic_validation" in manifest["training_sets"]
    line = "WBC 12.3, K 3.1 repleted"
    assert tagger.tag(line, tokenize(line))[0] == "B"


def test_switch_reads_spans_offline_and_sends_bare_spans_elsewhere(tmp_path):
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.stages import Stages, apply_switches

    model = train_tagger(_planted(), min_count=1).save(tmp_path / "m", {})

    def step(*args):
        raise AssertionError("not called here")

    params = RunParams(extraction="ner", ner_model=str(model))
    for backend, readers in (("offline", (step, step)), ("gemini", ())):
        got = apply_switches(Stages("inspector", backend, step, step, None, step, step), params)
        assert isinstance(got.patient_extractor, NerExtractor) and got.ontology_extractor is None
        assert got.patient_extractor.readers == readers
