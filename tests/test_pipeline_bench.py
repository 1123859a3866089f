"""The orchestration oracle behind bench_pipeline.csv: call structure, cache, no accuracy claims."""
from __future__ import annotations

import json

from ehrlib.bench.pipeline import ORACLE_MODEL, _measure, grouped_findings_corpus
from ehrlib.corpus.io import read_gold


def test_oracle_grouped_findings_cache_halves_verification_calls(tmp_path, synth_db):
    corpus = grouped_findings_corpus(synth_db, tmp_path / "g", n_notes=2)
    gold = read_gold(corpus / "gold.jsonl")
    assert len({(g.note_id, g.line) for g in gold}) < len(gold)  # several findings per line
    with_cache = _measure(corpus, synth_db, tmp_path / "runs", "m5", 4, latency=0.0, cache=5)
    without = _measure(corpus, synth_db, tmp_path / "runs", "m0", 4, latency=0.0, cache=0)
    assert with_cache["cache_hits"] == len(gold) - len({(g.note_id, g.line) for g in gold})
    assert without["cache_hits"] == 0
    assert with_cache["calls_verification"] < 0.6 * without["calls_verification"]
    manifest = json.loads((tmp_path / "runs" / "m5" / "manifest.json").read_text())
    assert manifest["model"] == ORACLE_MODEL  # every oracle run says what it is
    preds = [json.loads(x) for x in (tmp_path / "runs" / "m5" / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == len(gold) and all(p["reason"] == "orchestration oracle (gold)" for p in preds)
