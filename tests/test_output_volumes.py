"""Known-answer tests of output volumes written after (or "of") the site that put them out."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.output_volumes import output_volume_mentions


def _found(line: str) -> list[tuple[str, str, float, bool]]:
    return [(m.text, m.concept, m.claim.reading.value, m.claim.per_day) for m in output_volume_mentions(line, 0, [])]


@pytest.mark.parametrize("line, want", [
    ("Left chest tube drained 380 cc on POD 2.", [("380 cc", "chest_tube", 380.0, True)]),
    ("JP drains with 1,200 cc serous fluid overnight", [("1,200 cc", "drain_output", 1200.0, True)]),
    ("Barely 90 cc of urine today despite lasix", [("90 cc", "urine_output", 90.0, True)]),
    ("NGT to suction, 60 cc bilious", [("60 cc", "gastric_output", 60.0, False)]),   # one charting
    ("Rectal tube w/ ~2 L brown stool", [("~2 L", "stool_output", 2000.0, True)]),  # L is 1000 mL
    ("UOP 25 cc/hr", []),                                                              # an hourly rate
    ("UOP low, gave 500 cc LR", []),                                                   # an intake
    ("Received 1 L NS for low urine output", []),
    ("Plts 50. Then 300 cc more over two hours", []),                                  # no site named
    ("Foley removed. 250 cc of free water via the tube", []),                          # sentence ends the reach
])
def test_output_volumes(line, want):
    assert _found(line) == want


def test_taken_values_stay_with_their_statement():
    line = "CT output 300 cc today"
    assert output_volume_mentions(line, 0, [(0, 16)]) == []


@pytest.mark.parametrize("line, want", [
    ("OGT to suction, 450 cc bilious output", [("450 cc", "output")]),               # the tube's output is the claim
    ("Foley w/ amber urine, UOP for the day 600 cc", [("600 cc", "output")]),
    ("NGT placed, drained 450 cc", [("NGT", "procedure"), ("450 cc", "output")]),   # a placement is its own claim
])
def test_a_device_named_as_the_site_is_the_output_statement(line, want):
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.mentions import find_mentions
    assert [(m.text, m.kind) for m in find_mentions(line, 0, load_lexicon())] == want


def test_a_device_named_before_a_stated_output_of_its_kind_is_that_statement():
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.mentions import find_mentions
    found = find_mentions("GU: Foley draining dark urine, UOP 15-25 cc/hr.", 0, load_lexicon())
    assert [(m.text, m.kind) for m in found] == [("UOP", "output")]
    found = find_mentions("Foley draining dark urine. Creatinine 2.1.", 0, load_lexicon())
    assert [m.kind for m in found] == ["procedure", "measurement"]   # no output stated: the device stays


@pytest.mark.parametrize("line, volumes", [
    # a volume in a series after a site's volume reads the same site
    ("R pigtail put out ~1.4 L on placement; 310 mL since midnight", [("drain_output", 1400.0),
                                                                       ("drain_output", 310.0)]),
    ("JP 60 cc today, 45 cc yesterday", [("drain_output", 60.0), ("drain_output", 45.0)]),
    # a fluid given after it is no output
    ("Chest tube 150 cc; 1 L NS bolus given", [("chest_tube", 150.0)]),
])
def test_a_volume_series_shares_its_site(line, volumes):
    found = output_volume_mentions(line, 0, [])
    assert [(m.concept, m.claim.reading.value) for m in found] == volumes


def _outputs(line: str) -> list[tuple[str, str, float, bool, bool]]:
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.mentions import find_mentions
    return [(m.text, m.concept, m.claim.reading.value, bool(m.claim.per_day), bool(m.claim.per_hour))
            for m in find_mentions(line, 0, load_lexicon()) if m.kind == "output"]


@pytest.mark.parametrize("line, want", [
    # a period word after the volume, or an intake/output heading, makes it the period's total
    ("GU: UOP only 45 cc for the day", [("45 cc", "urine_output", 45.0, True, False)]),
    ("Ins/Outs: NGT 250, urine 900 cc", [("NGT", "gastric_output", 250.0, True, False),
                                         ("urine", "urine_output", 900.0, True, False)]),
    ("NGT 250 cc at 0400", [("NGT", "gastric_output", 250.0, False, False)]),          # one charting
])
def test_period_totals(line, want):
    assert _outputs(line) == want


@pytest.mark.parametrize("line, want", [
    # an hourly range after an output's site is the range of its hourly chartings
    ("Foley with ~900 cc today, 15-80 cc/hr", [("Foley", "urine_output", 900.0, True, False),
                                               ("15-80 cc/hr", "urine_output", 15.0, False, True)]),
    ("Urine output running 30 to 70 mL/hr", [("30 to 70 mL/hr", "urine_output", 30.0, False, True)]),
    ("NS at 75-100 cc/hr overnight", []),                                                 # a fluid given
])
def test_hourly_ranges(line, want):
    assert _outputs(line) == want


@pytest.mark.parametrize("line, want", [
    # a drain named with its position: which drain, and its bare volume in mL
    ("I/O: JP medial 120, JP lateral 35 serous", [("JP medial", "drain_output", 120.0, True, False),
                                                   ("JP lateral", "drain_output", 35.0, True, False)]),
    ("drain #2 60 cc since midnight", [("drain #2", "drain_output", 60.0, True, False)]),
])
def test_positioned_drains(line, want):
    assert _outputs(line) == want
