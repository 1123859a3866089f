"""Known answers for the data-driven categorical-finding fallback (findings_data)."""
from __future__ import annotations

import duckdb
import pytest

from ehrlib.corpus.records import ItemRef, Note
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.findings_data import DATA_CONCEPT, normalise_value
from ehrlib.pipeline.offline.verification.findings import judge_data_finding
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.records import Entity
from ehrlib.pipeline.stages import StageEnv, get_stages

SUBJECT, HADM, DAY = 40612, 104697, "2159-11-18"  # Urine Color "Yellow", Skin Temperature "Warm" that day


def test_normalise_value_expands_ward_abbreviations():
    assert normalise_value("NT, ND") == {"non-tender", "non-distended"}
    assert normalise_value("on RA") == {"room", "air"}
    assert normalise_value("Dim.") == {"diminished"}


def _entity(value: str) -> Entity:
    return Entity(entity_id="L1:0", line=1, text=f"LS {value}", kind="finding", segment=0, value=value,
                  claim=Claim(concept=DATA_CONCEPT), items=(ItemRef("chartevents", "RUL Lung Sounds", 223986),),
                  item_keys=("chartevents:223986",))


@pytest.mark.parametrize("value, rows, expected", [
    ("clear", ["Clear", "Rhonchi"], True),        # a matching value was charted
    ("clear", ["Diminished", "Crackles"], False),  # only opposite values: contradiction
    ("clear", ["Bronchial"], None),                # different but not opposite: not judged
    ("clear", [], None),                           # nothing charted: never "missing" here
])
def test_judge_data_finding(value, rows, expected):
    ok, reason, _ = judge_data_finding(_entity(value), [{"value": v} for v in rows])
    assert ok is expected, reason


@pytest.fixture(scope="module")
def run_note(mimic3_demo_db):
    from ehrlib.pipeline.context import ItemProfiler, note_context
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    con = duckdb.connect(str(mimic3_demo_db), read_only=True)
    stages = get_stages("inspector", "offline", RunParams(method="inspector"))
    profiler = ItemProfiler(lambda: con.cursor(), "mimic3", 10)

    def run(text: str) -> list:
        note = Note(f"f-{abs(hash(text))}", SUBJECT, HADM, "nursing", DAY, text)
        ctx = note_context(con, note, flavor="mimic3")
        tools = make_toolset(con, PatientContext(SUBJECT, HADM, ctx.admittime, ctx.dischtime, DAY, ctx.sex))
        env = StageEnv(con=con, toolset=tools, item_profile=profiler)
        return list(inspect(ctx, stages, env).predictions)

    yield run
    con.close()


def inspect(ctx, stages, env):
    from ehrlib.pipeline.inspector import inspect_note

    return inspect_note(ctx, stages, env, cache_size=5)


def test_uncovered_finding_aligns_to_the_patients_item_and_is_consistent(run_note):
    preds = run_note("NURSING NOTE\nGU: voiding clear yellow urine.\n")
    urine = [p for p in preds if p.entity == "clear yellow urine"]  # a site statement: colour and appearance
    assert len(urine) == 1
    assert urine[0].label == "consistent"
    assert sorted(i.itemid for i in urine[0].items) == [224016, 224876]  # Urine Color, Urine Appearance


def test_opposite_charted_value_is_a_contradiction(run_note):
    preds = run_note("NURSING NOTE\nSkin: pale, skin cool to touch.\n")
    cool = [p for p in preds if p.entity.lower() == "skin cool"]
    assert len(cool) == 1
    assert (cool[0].label, cool[0].inconsistency_type) == ("inconsistent", "contradiction")


def test_vocabulary_findings_keep_their_entities(run_note):
    preds = run_note("NURSING NOTE\nGI: abd soft, hypoactive BS.\n")
    assert not [p for p in preds if "charted values neither" in p.reason or p.entity.lower() in ("abd soft",)]
    assert any(p.entity.lower().startswith("abd") for p in preds)


def test_narrow_by_modality():
    from ehrlib.pipeline.offline.findings_data import narrow_by_modality

    items = [(ItemRef("chartevents", "Arterial BP [Systolic]", 1), "k1"),
             (ItemRef("chartevents", "NBP [Systolic]", 2), "k2")]
    assert [k for _, k in narrow_by_modality("art BP 90-140", items)] == ["k1"]
    assert [k for _, k in narrow_by_modality("NBP 100-120 systolic", items)] == ["k2"]
    assert [k for _, k in narrow_by_modality("BP 100-120", items)] == ["k1", "k2"]  # no modality named
    assert [k for _, k in narrow_by_modality("ABP 95-130", items[1:])] == ["k2"]  # the patient has no arterial item


_ITEMS = {"k1": ("Sedation Scale", ["Agitated", "Calm/Cooperative"]),
          "k2": ("Dorsal PedPulse [Right]", ["Weak Palpable"]),
          "k3": ("Dorsal PedPulse [Left]", ["Weak Palpable"]), "k4": ("Radial Pulse [Right]", ["Weak Palpable"]),
          "k5": ("Feeding Tube Type", ["NGT", "PEG"]), "k6": ("Wound Drainage", ["Serous"])}


def _found(*lines: str, section: str = "nursing_system") -> list[tuple[int, str, list[str]]]:
    from ehrlib.pipeline.offline.findings_data import data_findings
    from ehrlib.pipeline.records import Segment

    pairs = [(ItemRef("chartevents", label, i), k) for i, (k, (label, _)) in enumerate(_ITEMS.items())]
    seg = Segment(0, 0, len(lines) - 1, "x", section)
    return [(e.line, e.text, sorted(k for k in e.item_keys))
            for e in data_findings(list(lines), seg, pairs, lambda k: _ITEMS[k][1], [])]


def test_a_charted_value_alone_names_its_item():
    # a value of two words written in order names the one item charting it ("/" joins words)
    assert _found("Neuro: oriented, calm/cooperative.") == [(0, "calm/cooperative", ["k1"])]
    # several items chart it: the label words the phrase names pick them (both sides of one item)
    assert _found("Ext: pedal pulses weak palpable bilat.") == [(0, "pedal pulses weak palpable bilat", ["k2", "k3"])]
    # an acronym value opening the phrase ("PEG in place"), not one in passing ("meds via PEG")
    assert _found("GI: PEG in place.") == [(0, "PEG", ["k5"])]
    assert _found("GI: meds via PEG.") == []
    assert _found("GI: peg site clean.") == []  # an acronym value only as the note writes it: upper case


def test_a_value_alone_that_names_no_item_is_not_a_statement():
    assert _found("Ext: weak palpable.") == []  # dorsal or radial pulses: the phrase does not say
    assert _found("Neuro: calm/cooperative.", section="hpi") == []  # no exam or nursing section
    assert _found("Wound: serous.") == []  # one word: the item's name must be written with it


def test_a_phrase_is_free_unless_a_statement_starts_in_it():
    from ehrlib.pipeline.offline.findings_data import data_findings
    from ehrlib.pipeline.records import Segment

    pairs = [(ItemRef("chartevents", label, i), k) for i, (k, (label, _)) in enumerate(_ITEMS.items())]
    line = "Ext: edema both legs, DP pulses weak palpable."
    seg = Segment(0, 0, 0, "x", "nursing_system")
    # an edema statement running on over the comma leaves the pulses phrase free; one starting in it does not
    ran_on = data_findings([line], seg, pairs, lambda k: _ITEMS[k][1], [(0, (5, 45))])
    assert [e.text for e in ran_on] == ["DP pulses weak palpable"]
    assert not data_findings([line], seg, pairs, lambda k: _ITEMS[k][1], [(0, (22, 45))])
    # a value alone outside the statement that starts in its phrase is a statement of its own
    line = "Sat 96% on calm/cooperative"
    assert [e.text for e in data_findings([line], seg, pairs, lambda k: _ITEMS[k][1], [(0, (0, 7))])] == [
        "calm/cooperative"]
    assert not data_findings([line], seg, pairs, lambda k: _ITEMS[k][1], [(0, (0, 20))])


def test_the_value_index_finds_what_a_scan_of_every_item_finds():
    # the note-wide index of charted values proposes candidate items only: with or without it,
    # each phrase gets the same items, value and span (and a phrase naming no value none)
    from ehrlib.pipeline.offline.findings_data import _chunk_words, _value_only

    items = [(ItemRef("chartevents", label, i), k) for i, (k, (label, _)) in enumerate(_ITEMS.items())]
    profile = lambda k: _ITEMS[k][1]  # noqa: E731
    index: list = []
    phrases = ["calm/cooperative", "pedal pulses weak palpable bilat", "PEG in place", "meds via PEG",
               "weak palpable", "serous drainage", "agitated", "radial pulse weak palpable", ""]
    got = []
    for text in phrases:
        words = _chunk_words(text, 0, len(text))
        scan = _value_only(text, words, items, profile)
        assert _value_only(text, words, items, profile, index) == scan, text
        got.append(scan and (sorted(k for _, k in scan[0]), scan[1]))
    assert len(index) == 1  # built once, on the first phrase
    assert got == [(["k1"], "calm cooperative"), (["k2", "k3"], "weak palpable"), (["k5"], "peg"), None,
                   None, None, None, (["k4"], "weak palpable"), None]   # "weak palpable" alone: which pulse?


def test_a_note_reuses_its_value_index_and_a_new_item_list_gets_its_own():
    from ehrlib.pipeline.offline import findings_data as fd

    pairs = [(ItemRef("chartevents", label, i), k) for i, (k, (label, _)) in enumerate(_ITEMS.items())]
    profile = lambda k: _ITEMS[k][1]  # noqa: E731
    items, index = fd._charted(pairs, profile)
    assert fd._charted(pairs, profile)[1] is index            # the same note's pairs: the same holder
    assert fd._charted(list(pairs), profile)[1] is not index  # another list (another note): a new one
    assert fd._charted(pairs, lambda k: ())[1] is not index   # another profile: a new one
    assert [k for _, k in items] == list(_ITEMS)
