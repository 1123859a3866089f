"""Known answers for diagnoses named in progress-note prose (ehrlib.pipeline.offline.prose_diagnoses)."""
from __future__ import annotations

from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.prose_diagnoses import prose_diagnosis_mentions, reads_prose, with_prose_diagnoses

KNOWN = {"sepsis", "pancreatitis", "akf", "acute kidney injury", "pneumonia", "gi bleed", "septic shock",
         "cholangitis", "biliary obstruction"}


def _texts(text, known=KNOWN):
    return [m.text for m in prose_diagnosis_mentions(text, 0, lambda p: p.lower() in known)]


def test_list_after_the_cue_only():
    # the comorbidities before "admitted with" are history, the list after it is this stay's
    got = _texts("66F w/ HTN, DM2, s/p CCY, admitted with pancreatitis, acute kidney injury and sepsis.")
    assert got == ["pancreatitis", "acute kidney injury", "sepsis"]


def test_list_ends_at_the_sentence_or_a_stop_word():
    assert _texts("Presented with pneumonia. Sepsis was ruled out.") == ["pneumonia"]
    assert _texts("now with pneumonia likely from aspiration, sepsis") == ["pneumonia"]


def test_parenthetical_aside_is_skipped_and_offsets_stay():
    text = "Dx: GI bleed (clipped on EGD today), septic shock."
    ms = prose_diagnosis_mentions(text, 3, lambda p: p.lower() in KNOWN)
    assert [(m.text, text[m.start:m.end], m.line, m.kind) for m in ms] == [
        ("GI bleed", "GI bleed", 3, "diagnosis"), ("septic shock", "septic shock", 3, "diagnosis")]


def test_a_dx_header_opens_the_paragraph_only():
    assert _texts("Seen by GI. Dx: cholangitis") == []


def test_unresolved_items_are_no_mentions():
    assert _texts("admitted with weakness and sepsis") == ["sepsis"]


def test_no_cue_no_mention():
    assert _texts("Pneumonia, sepsis; cont abx.") == []


def test_note_types_and_sections():
    assert reads_prose("physician", "assessment_plan") and reads_prose("nursing", None)
    assert not reads_prose("discharge_summary", "hpi")
    assert not reads_prose("physician", "past_history")


def test_a_diagnosis_replaces_the_mentions_inside_it_but_not_a_whole_bedside_state():
    text = "admitted with septic shock and hypotension."
    shock = Mention(0, 21, 26, "shock", "interpretation", "shock")
    hypo = Mention(0, 31, 42, "hypotension", "interpretation", "hypotension")
    got = with_prose_diagnoses(text, 0, [shock], [shock, hypo], lambda p: p.lower() in KNOWN | {"hypotension"})
    assert [(m.text, m.kind) for m in got] == [("septic shock", "diagnosis")]


def test_a_listed_line_of_several_diagnoses_is_split_only_when_each_part_names_one():
    from ehrlib.pipeline.offline.prose_diagnoses import split_listed

    line = "Sepsis, pancreatitis, pneumonia"
    m = Mention(5, 10, 10 + len(line), line, "diagnosis", "diagnosis", line)
    parts = split_listed(m, lambda p: p.lower() in KNOWN)
    assert [(p.text, p.start, p.end - p.start) for p in parts] == [("Sepsis", 10, 6), ("pancreatitis", 18, 12),
                                                                   ("pneumonia", 32, 9)]
    title = Mention(5, 0, 31, "Pneumonia, organism unspecified", "diagnosis", "diagnosis")
    assert split_listed(title, lambda p: p.lower() in KNOWN) == [title]


def test_a_list_with_one_unknown_part_is_still_a_list():
    # two or more parts naming concepts make the commas a list; the part naming none ("NSCLC"
    # without a synonym) stays an entry of its own for the no-concept rule to judge
    from ehrlib.pipeline.offline.prose_diagnoses import split_listed

    line = "NSCLC, sepsis, pneumonia"
    m = Mention(3, 0, len(line), line, "diagnosis", "diagnosis", line)
    assert [p.text for p in split_listed(m, lambda p: p.lower() in KNOWN)] == ["NSCLC", "sepsis", "pneumonia"]
    one = Mention(3, 0, 24, "Pneumonia, left lower lobe", "diagnosis", "diagnosis")
    assert split_listed(one, lambda p: p.lower() in KNOWN) == [one]
