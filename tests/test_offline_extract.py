"""Known answers for the offline extraction's time attachment (ehrlib.pipeline.offline.extract)."""
from __future__ import annotations

from ehrlib.pipeline.claims import NumericClaim


def test_a_record_stamp_times_every_value_of_its_line(offline_note) -> None:
    # the stamp is far from the last values, and the next line writes another date
    result = offline_note("stamp-1", "Labs:\n"
                                     "[**2199-02-02**] 05:10AM BLOOD WBC-9.9 Hgb-10.1* Hct-30.2* MCV-88 MCH-29.0 "
                                     "RDW-15.1* Plt Ct-201 Glucose-131* UreaN-33* Creat-1.6*\n"
                                     "MICRO ([**01-30**]): blood cultures pending")
    values = [e for e in result.entities if e.line == 1 and isinstance(e.claim, NumericClaim)]
    assert {e.claim.concept for e in values} >= {"wbc", "creatinine", "bun"}
    assert {(e.window.start, e.window.end) for e in values if e.window} == {("2199-02-02 00:00:00",
                                                                             "2199-02-02 23:59:59")}
    assert all(e.value is not None and not e.value.startswith("-") for e in values)


def test_a_repeated_name_is_aligned_by_its_words_not_by_the_value_that_tells_it_apart(offline_note) -> None:
    # the same procedure item named twice in one paragraph, each with its own action: the
    # statements are told apart by the action appended to their text, and both still align
    result = offline_note("repeat-1", "Lines:\nThe first multi-lumen was removed on [**2-4**]\n"
                                      "and a new multi-lumen was placed on [**2-1**].", chartdate="2199-02-05")
    lines = [e for e in result.entities if "multi-lumen" in e.text.lower()]
    assert len(lines) == 2
    assert all(any(it.label == "Multi Lumen" for it in e.items) for e in lines)
