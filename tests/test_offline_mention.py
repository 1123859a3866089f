"""The mention record's helpers and the concept flags the scanners read (offline_concept_flags.yaml)."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import Mention, clean_line, concept_flags, emit, line_clause, overlaps


def test_clean_line_keeps_offsets() -> None:
    text = "seen [**10-23**] by ID"
    cleaned = clean_line(text)
    assert len(cleaned) == len(text) and cleaned.index("by") == text.index("by") and "[**" not in cleaned


def test_spans_and_emit() -> None:
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []
    emit(out, taken, Mention(0, 2, 5, "HR", "measurement", "heart_rate"))
    assert taken == [(2, 5)] and overlaps(taken, 4, 9) and not overlaps(taken, 5, 9)
    assert line_clause("K 3.1, repleted. Mg 2.0", 1) == " 3.1, repleted"


def test_every_flagged_concept_is_a_lexicon_concept() -> None:
    flags = concept_flags()
    concepts = load_lexicon().concepts
    ids = (list(flags["blood_pressure_values"]) + list(flags["dose_names"]) + list(flags["temperature"]["concepts"])
           + list(flags["flow_unit_concepts"]) + list(flags["repletion"]) + list(flags["self_describing_findings"])
           + list(flags["comma_spanning_findings"]) + list(flags["rhythm_rates"]) + list(flags["rhythm_rates"].values())
           + list(flags["hospital_day_procedures"]) + list(flags["ct_concepts"])
           + [cid for _, cid in flags["blood_gas"].values()] + [flags["o2_flow_concept"]])
    missing = sorted({c for c in ids if c not in concepts})
    assert not missing, f"concept flags name concepts the lexicon lacks: {missing}"
    assert set(flags["comma_spanning_findings"]) <= set(flags["self_describing_findings"])
    drugs = set(load_lexicon().drugs.values())
    assert {s["drug"] for s in flags["drug_senses"].values()} <= drugs
