"""Known answers for numbered wounds (verification/numbered.py): the number whose charted site
the phrase's place words name decides which items a statement is judged on."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT
from ehrlib.pipeline.offline.verification.findings import judge_site_finding
from ehrlib.pipeline.offline.verification.numbered import numbered_rows
from ehrlib.pipeline.records import Entity


def _rows(*values: str) -> list[dict]:
    return [{"time": "2150-05-06 08:00:00", "value": v} for v in values]


ROWS_OF = [("Incision Site #1", _rows("Flank - Left")), ("Incision Site #2", _rows("Sternum")),
           ("Incision Drainage #1", _rows("None")), ("Incision Drainage #2", _rows("Serosanginous")),
           ("Incision Drainage Amount #2", _rows("Scant"))]


@pytest.mark.parametrize("phrase, kept", [
    ("sternal incision scant serosanguinous", ["Incision Drainage #2", "Incision Drainage Amount #2"]),
    ("L flank incision without drainage", ["Incision Drainage #1"]),
    ("incision with scant drainage", []),  # two wounds, no place words: not told
])
def test_numbered_rows(phrase, kept):
    assert [label for label, _ in numbered_rows(phrase, ROWS_OF)] == kept


def test_one_numbered_wound_needs_no_place():
    one = [("Incision Site #1", _rows("Abdominal")), ("Incision Drainage #1", _rows("Purulent"))]
    assert [label for label, _ in numbered_rows("incision draining", one)] == ["Incision Drainage #1"]


def test_unnumbered_items_are_kept():
    rows_of = [("Sputum Color", _rows("Yellow"))]
    assert numbered_rows("sputum yellow", rows_of) == rows_of


def _entity(value: str) -> Entity:
    return Entity(entity_id="L1:0", line=1, text=value, kind="finding", segment=0, value=value,
                  claim=Claim(concept=SITE_CONCEPT))


@pytest.mark.parametrize("phrase, value, expected", [
    ("L flank incision with purulent drainage", "purulent", False),  # wound #1 drains nothing
    ("sternal incision scant serosanguinous", "scant, serosanguinous", True),
    ("sternal incision with large drainage", "large", False),  # wound #2 drains scant
])
def test_judged_on_the_named_wound(phrase, value, expected):
    ok, reason, _ = judge_site_finding(_entity(value), numbered_rows(phrase, ROWS_OF))
    assert ok is expected, reason
