"""Known-answer tests: the LLM verifier's deciding rows are the leading cited rows a tool returned."""
from __future__ import annotations

from ehrlib.corpus.records import RowRef
from ehrlib.pipeline.claims import claim_for
from ehrlib.pipeline.llm.verify import LLMVerifier
from ehrlib.pipeline.records import Entity, Usage

_E = Entity(entity_id="e1", line=0, text="HR", kind="measurement", claim=claim_for("measurement", value=140.0))
_SEEN = {("chartevents", "1"), ("chartevents", "3")}
_CITED = [{"table": "chartevents", "row_id": 1}, {"table": "chartevents", "row_id": 2},
          {"table": "chartevents", "row_id": 3}]


def _verdict(**reply):
    value = {"label": "inconsistent", "inconsistency_type": "contradiction", "reason": "stated 140 vs charted 120",
             "evidence_row_ids": _CITED, **reply}
    return LLMVerifier._verdict(_E, value, (), (), _SEEN, Usage(), "verify_entity@x")


def test_the_first_cited_row_decides_when_the_reply_does_not_say():
    v = _verdict()
    assert v.deciding_row_ids == (RowRef("chartevents", 1),)
    assert v.evidence_row_ids == (RowRef("chartevents", 1), RowRef("chartevents", 3))


def test_n_deciding_leading_rows_keep_only_those_a_tool_returned():
    # row 2 was never returned by a tool: dropped from both lists
    assert _verdict(n_deciding=2).deciding_row_ids == (RowRef("chartevents", 1),)
    assert _verdict(n_deciding=3).deciding_row_ids == (RowRef("chartevents", 1), RowRef("chartevents", 3))
    assert _verdict(n_deciding=0).deciding_row_ids == ()
    assert _verdict(n_deciding=-1).deciding_row_ids == (RowRef("chartevents", 1),)  # malformed: the default


def test_a_missing_verdict_has_no_deciding_rows():
    assert _verdict(inconsistency_type="missing").deciding_row_ids == ()
