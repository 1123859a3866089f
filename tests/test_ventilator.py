"""Known-answer tests of ventilator shorthand: modes, volume x rate, the set rate, qualifiers."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _found(line: str) -> list[tuple[str, str, float | str | None]]:
    out = []
    for m in find_mentions(line, 0, load_lexicon()):
        reading = getattr(m.claim, "reading", None)
        out.append((m.concept, line[m.start:m.end].strip(), reading.value if reading is not None else m.value))
    return out


@pytest.mark.parametrize("line, want", [
    # a volume-control mode with two numbers: tidal volume x set rate
    ("Vent settings AC 450 x 16, PEEP 8", [("ventilator_mode", "AC", "AC"), ("tidal_volume", "450", 450.0),
                                           ("vent_rate", "16", 16.0), ("peep", "PEEP 8", 8.0)]),
    ("A/C 500/14/5/40", [("tidal_volume", "500", 500.0), ("vent_rate", "14", 14.0),   # a settings panel
                         ("peep", "5", 5.0), ("fio2", "40", 40.0)]),
    # a tidal-volume name with "x": the same without the mode
    ("TV 600cc x 18 and FiO2 35%", [("tidal_volume", "TV 600", 600.0), ("vent_rate", "18", 18.0),
                                    ("fio2", "FiO2 35%", 35.0)]),
    # a bare rate in a ventilator clause is the set rate
    ("Placed on SIMV, rate decreased to 8", [("ventilator_mode", "SIMV", "SIMV"),
                                             ("vent_rate", "rate decreased to 8", 8.0)]),
])
def test_volume_x_rate_and_set_rate(line, want):
    assert _found(line) == want


@pytest.mark.parametrize("line, modes", [
    ("Ventilator mode: PRVC/AC -> CPAP/PS", ["PRVC/AC", "CPAP/PS"]),        # one claim per mode, heading absorbed
    ("remains on pressure support 10/5", ["pressure support"]),
    ("back on AC after failing SBT", ["AC"]),
    ("ECOG PS 1, lives alone", []),                                         # a performance status
    ("FS AC/HS with RISS", []),                                             # fingersticks before meals
    ("AC joint tender", []),
])
def test_mode_words_need_a_ventilator_context(line, modes):
    assert [t for c, t, _ in _found(line) if c == "ventilator_mode"] == modes


@pytest.mark.parametrize("line, concept, text", [
    ("Vt (Set): 420 mL", "tidal_volume", "Vt (Set): 420 mL"),               # a tidal volume's own unit is a volume
    ("Spont Vt (Spontaneous): 280 - 610 mL", "tidal_volume", "Vt (Spontaneous): 280 - 610 mL"),
    ("RR (Total): 18 - 31", "respiratory_rate", "RR (Total): 18 - 31"),
    ("RR total 14-22 on PS", "respiratory_rate", "RR total 14-22"),
])
def test_qualified_readings_are_read(line, concept, text):
    assert (concept, text) in [(c, t) for c, t, _ in _found(line)]


def test_a_qualifier_narrows_to_its_item():
    from ehrlib.corpus.records import ItemRef
    from ehrlib.pipeline.offline.findings_data import narrow_by_modality
    items = [(ItemRef("chartevents", "Respiratory Rate", 1), "k1"),
             (ItemRef("chartevents", "Respiratory Rate (Total)", 2), "k2"),
             (ItemRef("chartevents", "Respiratory Rate (Set)", 3), "k3")]
    assert [it.label for it, _ in narrow_by_modality("RR total 25-32", items)] == ["Respiratory Rate (Total)"]
    assert [it.label for it, _ in narrow_by_modality("rate set 12", items)] == ["Respiratory Rate (Set)"]
    assert len(narrow_by_modality("RR 20", items)) == 3                      # no qualifier: every item


@pytest.mark.parametrize("line, want", [
    ("Resp: 8.0 ETT 24 cm, PEEP 5", [("ett_size", "8.0 ETT"), ("ett_mark", "24 cm"), ("peep", "PEEP 5")]),
    ("Airway: ETT 7.0 21 cm at the teeth", [("ett_size", "ETT 7.0"), ("ett_mark", "21 cm at the teeth")]),
    ("7.5mm ETT secured", [("ett_size", "7.5mm ETT")]),
])
def test_a_tube_size_before_or_after_its_name_is_its_size(line, want):
    assert [(c, t) for c, t, _ in _found(line)] == want                    # not a respiratory rate of 8
