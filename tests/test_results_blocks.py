"""Known answers for results blocks: a heading's draw stamp dates every results line under it
(ehrlib.pipeline.offline.results_blocks, .verification.draws.block_clock)."""
from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from test_tools_testdb import HA, A, T, lactate_hospital
from verification_kit import FakeTools, assert_decided, entity, row, spanned, verify

from ehrlib.corpus.records import Note, TimeSpan
from ehrlib.pipeline.offline.results_blocks import block_stamp, block_time, heading_stamp, is_results_line
from ehrlib.pipeline.offline.timex import TimeContext
from ehrlib.pipeline.records import TimeRef

BLOCK = ["Chem (0510): Na 139 K 4.4 Cl 102",
         "             Mg 2.1 Phos 3.0",
         "             Hgb 8.7 Plt 140 INR 1.2",
         " Plt falling since the weekend, recheck tonight.",
         "Gas 0630: pH 7.38 pCO2 41"]


@pytest.mark.parametrize("text, results", [
    ("   Mg 2.1 Phos 3.0", True),
    ("WBC 7.7 (9.9 on admit)   Hgb 8.7   Plt 140", True),  # an aside is part of the result
    ("Na-137 K-4.0* Creat-1.1", True),  # the Name-value form of a copied record
    (" Plt falling since the weekend, recheck tonight.", False),
    ("Pt seen and examined at bedside", False),
])
def test_a_results_line_lists_name_value_pairs_only(text, results):
    assert is_results_line(text) is results


def test_an_overlong_line_is_no_results_line_nor_heading():
    long = "Na 139 K 4.4 " * 100
    assert not is_results_line(long) and heading_stamp("Labs (0510): " + long) is None


def test_a_stamped_heading_of_results_heads_a_block_and_one_of_prose_does_not():
    assert heading_stamp("Chem (0510): Na 139 K 4.4").clock == (5, 10)
    assert heading_stamp("AM LABS 06:45:").clock == (6, 45)
    s = heading_stamp("Discharge labs [**2130-1-14**]: Hgb 9.0")
    assert s is not None and s.clock is None
    assert heading_stamp("Exam (1400): awake, following commands") is None  # prose under the stamp
    assert heading_stamp("Labs: Na 139 K 4.4") is None  # no clock time or date
    assert heading_stamp("[**2130-1-12**] 05:10AM BLOOD Na-139 K-4.4") is None  # a results record of its own


def test_the_stamp_dates_the_continuation_lines_up_to_the_first_line_of_prose():
    assert [block_stamp(BLOCK, i) is not None for i in range(len(BLOCK))] == [True, True, True, False, True]
    assert block_stamp(BLOCK, 2).line == 0 and block_stamp(BLOCK, 4).line == 4
    broken = [BLOCK[0], "", BLOCK[1]]  # a blank line ends the block
    assert block_stamp(broken, 2) is None
    relabelled = [BLOCK[0], "   CBC: Hgb 8.7 Plt 140"]  # so does a new label
    assert block_stamp(relabelled, 1) is None


CTX = TimeContext(datetime(2130, 1, 12), {"admission": datetime(2130, 1, 10, 14, 0)})


def test_a_time_of_another_line_gives_way_to_the_stamp_and_a_time_of_the_own_line_does_not():
    since = TimeRef(3, "since the weekend", TimeSpan("2130-01-08 00:00:00", "2130-01-12 23:59:59"), span=(1, 5))
    # the prose line's time, joined to the results line above it, does not date the values before it
    assert block_time(BLOCK, 2, since, (3, 16), CTX) is None  # the clock-only stamp leaves the segment's window
    lines = ["Chem (0510): Na 139", "   CK 310 on admission"]
    own = TimeRef(1, "on admission", TimeSpan("2130-01-09 00:00:00", "2130-01-11 23:59:59"), span=(10, 22))
    assert block_time(lines, 1, own, (1, 10), CTX) is own
    assert block_time(["K 4.4 Mg 2.1"], 0, since, (3, 16), CTX) is since  # outside a block: unchanged
    dated = ["Labs [**2130-1-11**] 05:10: Na 139", "    K 4.4"]
    ref = block_time(dated, 1, None, None, CTX)
    assert ref is not None and ref.window.start.startswith("2130-01-11")


def _k(*rows):
    return FakeTools({"labevents:50971": [row(t, v, key="labevents:50971", table="labevents") for t, v in rows]})


@pytest.mark.parametrize("stated, label", [(3.9, "inconsistent"), (4.4, "consistent")])
def test_a_continuation_line_is_judged_at_the_stamps_draw(stated, label):
    text = f"Chem (0510): Na 139\n        K {stated:g} Mg 2.1"
    line = text.split("\n")[1]
    e = dataclasses.replace(entity("K", "measurement", keys=("labevents:50971",), concept="potassium", value=stated),
                            line=1, span=spanned(line, "K"))
    tools = _k(("2199-02-02 17:00:00", 3.9), ("2199-02-03 05:10:00", 4.4))
    v = verify(e, tools, line=text)
    assert_decided(v, "numbers.value_in_window", label)
    assert "05:10" in v.reason
    # without the stamped heading the 3.9 of the evening before meets the value
    bare = dataclasses.replace(e, line=0, span=spanned(line, "K"))
    assert_decided(verify(bare, tools, line=line), "numbers.value_in_window", "consistent")


# --- the inspector on a tiny hospital ------------------------------------------------------


@pytest.fixture(scope="module")
def lactate_db(tmp_path_factory) -> Path:
    """The tiny hospital plus patient A's lactates: 4.9 on the 12th at 08:00, 5.0 on the 13th at 06:00."""
    return lactate_hospital(tmp_path_factory.mktemp("blocks"), [(T(12, 8), 4.9), (T(13, 6), 5.0)])


def _lactate(db: Path, text: str):
    from ehrlib.pipeline.context import note_context
    from ehrlib.pipeline.inspector import inspect_note
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.stages import StageEnv, get_stages
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    with duckdb.connect(str(db), read_only=True) as con:
        note = Note("n1", A, HA, "physician", "2130-01-13", text, charttime="2130-01-13 11:00:00")
        ctx = note_context(con, note, flavor="mimic3")
        tools = make_toolset(con, PatientContext(A, HA, ctx.admittime, ctx.dischtime, "2130-01-13", ctx.sex))
        stages = get_stages("inspector", "offline", RunParams(method="inspector"))
        result = inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)
    (p,) = [p for p in result.predictions if p.entity.lower().startswith("lactate")]
    return p


@pytest.mark.parametrize("stated, label", [(4.9, "inconsistent"), (5.0, "consistent")])
def test_a_blocks_indented_value_is_its_stamps_and_not_the_prose_lines_after_it(lactate_db, stated, label):
    # the prose line under the block is joined to it as one wrapped paragraph; its "yesterday" is its own
    text = (f"Gas (0600): pH 7.31 pCO2 44 pO2 88 HCO3 22 BE -3 SaO2 96\n"
            f"            Lactate {stated:g} iCa 1.10 K 4.0 Na 139 Cl 101 Glu 140\n"
            f" Ventilator weaned to pressure support yesterday, tolerating it well.")
    p = _lactate(lactate_db, text)
    assert p.label == label, p.reason
    assert p.time_basis == "note_day" and "06:00" in p.reason


# --- a results line reports one draw (verification.line_draws) ---------------------------------

_CBC = {"wbc": ("labevents:51301", "White Blood Cells"), "hgb": ("labevents:51222", "Hemoglobin"),
        "plt": ("labevents:51265", "Platelet Count")}


def _cbc(draws: dict[str, list[tuple[str, float]]]) -> tuple[FakeTools, list]:
    from ehrlib.corpus.records import ItemRef
    items = {key: [row(t, v, key=key, table="labevents", label=label) for t, v in draws.get(name, [])]
             for name, (key, label) in _CBC.items()}
    return FakeTools(items), [(ItemRef("labevents", label, key.split(":")[1]), key) for key, label in _CBC.values()]


LINE = "WBC 6.9 Hgb 9.9 Plt 373"
EARLY, LATE = "2199-02-01 04:50:00", "2199-02-03 05:00:00"  # the window is 02-02 to 02-04


def _hgb(tools, items, basis=None):
    e = dataclasses.replace(entity("Hgb", "measurement", keys=("labevents:51222",), concept="hemoglobin", value=9.9),
                            span=spanned(LINE, "Hgb"), time_basis=basis)
    return verify(e, tools, line=LINE, patient_items=items)


def test_a_line_whose_values_miss_the_window_together_is_dated_by_the_draw_they_all_match():
    tools, items = _cbc({"wbc": [(EARLY, 6.9), (LATE, 7.5)], "hgb": [(EARLY, 9.9), (LATE, 9.4)],
                         "plt": [(EARLY, 373), (LATE, 373)]})
    v = _hgb(tools, items)
    assert_decided(v, "numbers.value_in_window", "consistent")
    assert "2199-02-01 04:50" in v.reason and "dates the line" in v.reason
    # a window the note wrote is not moved
    assert_decided(_hgb(tools, items, "explicit_date"), "numbers.value_in_window", "inconsistent")


@pytest.mark.parametrize("draws", [
    # the values split between draws: the WBC of the early draw is another
    {"wbc": [(EARLY, 7.7), ("2199-01-31 05:00:00", 6.9)], "hgb": [(EARLY, 9.9), (LATE, 9.4)], "plt": [(LATE, 373)]},
    # only the Hgb misses the window: a wrong value, not a wrong time
    {"wbc": [(EARLY, 6.9), (LATE, 6.9)], "hgb": [(EARLY, 9.9), (LATE, 9.4)], "plt": [(LATE, 373)]},
    # a value that met the window disagrees with the draw: the line is not that draw
    {"wbc": [(EARLY, 6.9), (LATE, 7.5)], "hgb": [(EARLY, 9.9), (LATE, 9.4)], "plt": [(EARLY, 250), (LATE, 373)]},
])
def test_values_split_between_draws_or_one_value_missing_change_nothing(draws):
    tools, items = _cbc(draws)
    assert_decided(_hgb(tools, items), "numbers.value_in_window", "inconsistent", "contradiction")


def test_a_value_in_an_aside_keeps_its_own_time_and_is_no_draw_of_the_stamp():
    from ehrlib.pipeline.offline.results_blocks import in_aside
    lines = ["Chem (0510): Na 139, Phos 3.7 (1.4", "yesterday, repleted), Alb 2.4"]
    text = " ".join(lines)
    assert in_aside(text, text.index("1.4")) and not in_aside(text, text.index("Phos"))
    own = TimeRef(1, "yesterday", TimeSpan("2130-01-10 12:00:00", "2130-01-11 23:59:59"), span=(0, 9))
    assert block_time(lines, 0, own, (1, 0), CTX, text=text, pos=text.index("1.4")) is own
    assert block_time(lines, 0, own, (1, 0), CTX, text=text, pos=text.index("Phos")) is None
    # the verification does not read an aside's value at the stamp's clock
    text = "Chem (0510): Na 139\n        K 4.4 (from 3.9)"
    line = text.split("\n")[1]
    at = line.index("3.9")
    e = dataclasses.replace(entity("K 3.9", "measurement", keys=("labevents:50971",), concept="potassium", value=3.9),
                            line=1, span=(at, at + 3))
    tools = _k(("2199-02-02 17:00:00", 3.9), ("2199-02-03 05:10:00", 4.4))
    assert_decided(verify(e, tools, line=text), "numbers.value_in_window", "consistent")
