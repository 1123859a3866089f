"""Known-answer tests of line sites: the vessel a line statement names and the site items it reads."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.line_sites import site_keys, site_rows, stated_location, with_site_items

_PAIRS = [(ItemRef("chartevents", "INV Line#1 [Site]", 8392), "chartevents:8392"),
          (ItemRef("chartevents", "INV Line#1 [Type]", 8380), "chartevents:8380"),
          (ItemRef("chartevents", "Arterial BP Mean", 52), "chartevents:52")]


@pytest.mark.parametrize("text, charted, want", [
    ("L radial A-line", "Left Radial", True),
    ("R fem art line", "Right Femoral", True),
    ("R IJ CVL, L radial A-line", "Left Radial", True),      # the vessel nearest the line's name
    ("R IJ CVL, L radial A-line", "Right IJ", False),
    ("left subclavian TLC", "Left Subclavian", True),
    ("A-line in place", "Left Radial", None),                # no vessel stated
])
def test_stated_location(text, charted, want):
    where = stated_location(text)
    assert (None if where is None else bool(where.search(charted))) == want


@pytest.mark.parametrize("before, after, charted, want", [
    ("Lines: PICC", " L upper arm, site WNL", "Left Upper Arm", True),   # the site written after the name
    ("A-line", " (R radial) dampened", "Right Radial", True),
    ("R radial A-line", ", L IJ CVL", "Right Radial", True),            # the next line's vessel is not this one's
])
def test_a_site_after_the_name(before, after, charted, want):
    where = stated_location(before, after)
    assert (None if where is None else bool(where.search(charted))) == want


def test_a_sided_line_reads_the_patients_site_items_first():
    items = [_PAIRS[2]]
    assert [k for _, k in with_site_items("R radial A-line", "", "r", items, _PAIRS)] == ["chartevents:8392",
                                                                                         "chartevents:52"]
    assert with_site_items("A-line", "", "r", items, _PAIRS) == items          # no vessel: nothing to read
    assert with_site_items("radial A-line", "", None, items, _PAIRS) == items  # no side: nothing to check


def test_site_rows_keep_the_stated_vessel():
    rows = [{"value": "Right Radial"}, {"value": "Right Subclavian"}]
    assert site_rows("L radial A-line", "", rows) == [{"value": "Right Radial"}]
    assert site_keys([it for it, _ in _PAIRS], [k for _, k in _PAIRS]) == ["chartevents:8392"]
