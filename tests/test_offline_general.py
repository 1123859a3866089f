"""Known-answer tests for the offline verifier's general rule families (clock-time
precision, value-attached qualifiers, stated-from trends), on real MIMIC-III demo rows.

Truth read off the demo tables for admission 176016 (subject 41976, MetaVision):
vasopressin ran 2199-02-01 12:06-13:55 (two rate rows, one run); norepinephrine ran
02-01 02:10-04:30 and again 02-01 10:10 until 02-02 09:51 (many rate rows); prescriptions
of both start at midnight of 02-01 (date only). Labs on 02-03: WBC 9.6/10.9/10.8,
platelets 80/95/86, K 4.1/4.0/3.4, Na 146/146/148; lactate 2.3 on 02-02 14:24 then 0.8
on 02-03 18:21.
"""
from __future__ import annotations

from datetime import datetime

import duckdb
import pytest

from ehrlib.corpus.records import Note, TimeSpan
from ehrlib.pipeline.inspector import inspect_note
from ehrlib.pipeline.offline.verification.clocktime import clock_moments, edge_matches, infusion_runs, parse_clock
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.stages import StageEnv, get_stages

SUBJECT, HADM = 41976, 176016


# --- pure clock-time rules -----------------------------------------------------------------

@pytest.mark.parametrize("text,hour,minute,approx", [
    ("at 0700", 7, 0, False), ("since 0400", 4, 0, False), ("10:51PM", 22, 51, False),
    ("~1600", 16, 0, True), ("~9pm", 21, 0, True), ("at 12:15 AM", 0, 15, False), ("around 6 am", 6, 0, True),
])
def test_parse_clock(text, hour, minute, approx):
    c = parse_clock(text)
    assert c is not None and (c.hour, c.minute, c.approx) == (hour, minute, approx)
    assert c.tolerance.seconds == (3 if approx else 2) * 3600


def test_parse_clock_rejects_non_times():
    assert parse_clock("this AM") is None and parse_clock("x3 days") is None and parse_clock("") is None
    assert parse_clock("on [**2155-01-02**]") is None  # a year is not 21:55
    c = parse_clock("[**2145-7-10**] 06:29 AM")
    assert c is not None and (c.hour, c.minute) == (6, 29)


def _row(start: str, end: str | None, table: str = "inputevents_mv", label: str = "Norepinephrine") -> dict:
    return {"table": table, "label": label, "time": start, "end": end}


def test_rate_change_rows_form_one_run_and_dates_do_not_confirm_a_clock_time():
    rows = [_row("2199-02-01 12:06:00", "2199-02-01 12:36:00"), _row("2199-02-01 12:36:00", "2199-02-01 13:55:00"),
            _row("2199-02-01 00:00:00", "2199-02-02 00:00:00", table="prescriptions")]
    runs = infusion_runs(rows)
    assert [(a, b) for a, b, _ in runs] == [(datetime(2199, 2, 1, 12, 6), datetime(2199, 2, 1, 13, 55))]
    day = TimeSpan("2199-02-01 00:00:00", "2199-02-01 23:59:59")
    assert edge_matches(parse_clock("at 1200"), day, rows, "start")[0] is True
    assert edge_matches(parse_clock("at 0300"), day, rows, "start")[0] is False  # the midnight order date is not 0300
    titrated = [_row("2199-02-01 08:00:00", "2199-02-01 12:00:00"), _row("2199-02-01 12:00:00", "2199-02-01 18:00:00")]
    assert edge_matches(parse_clock("at 1200"), day, titrated, "end")[0] is False  # a rate change is not a stop
    assert edge_matches(parse_clock("at 1400"), day, rows, "end")[0] is True
    assert edge_matches(parse_clock("at 0300"), day, rows[2:], "start")[0] is None  # only dates: not judged here
    assert clock_moments(parse_clock("at 2300"), TimeSpan("2199-01-31 21:00:00", "2199-02-02 01:00:00")) == [
        datetime(2199, 1, 31, 23), datetime(2199, 2, 1, 23)]


def test_off_since_requires_no_later_run():
    rows = [_row("2199-02-01 02:10:00", "2199-02-01 04:30:00"), _row("2199-02-01 10:10:00", "2199-02-02 09:51:00")]
    w = TimeSpan("2199-02-01 02:00:00", "2199-02-02 06:00:00")
    assert edge_matches(parse_clock("since 0400"), w, rows, "end")[0] is False
    assert edge_matches(parse_clock("at 0930"), TimeSpan("2199-02-02 00:00:00", "2199-02-02 23:59:59"), rows,
                        "end")[0] is True


# --- through the tools on the real demo -----------------------------------------------------

@pytest.fixture(scope="module")
def run_note(mimic3_demo_db):
    from ehrlib.pipeline.context import note_context
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    con = duckdb.connect(str(mimic3_demo_db), read_only=True)
    stages = get_stages("inspector", "offline", RunParams(method="inspector"))

    def run(text: str, chartdate: str, note_type: str = "physician") -> dict:
        note = Note(f"g-{abs(hash((text, chartdate)))}", SUBJECT, HADM, note_type, chartdate, text)
        ctx = note_context(con, note, flavor="mimic3")
        tools = make_toolset(con, PatientContext(SUBJECT, HADM, ctx.admittime, ctx.dischtime, chartdate, ctx.sex))
        result = inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)
        return {p.entity.split()[0].lower(): p.label for p in result.predictions}

    yield run
    con.close()


_CLOCK_CASES = [
    ("vasopressin started at 1200", "2199-02-01", "vasopressin", "consistent"),
    ("vasopressin started at 0300", "2199-02-01", "vasopressin", "inconsistent"),
    ("vaso added ~1pm", "2199-02-01", "vaso", "consistent"),
    ("vaso started around 9pm", "2199-02-01", "vaso", "inconsistent"),
    ("levophed started at 1800", "2199-02-01", "levophed", "inconsistent"),
    ("off levophed since 0400", "2199-02-02", "levophed", "inconsistent"),
    ("levophed off at 0930", "2199-02-02", "levophed", "consistent"),
    # procedure records: a multi-lumen line placed 02-01 02:14 and another at 13:00 (overlapping dwell,
    # two events); extubation 02-07 09:33; the arterial line removed 02-11 11:29
    ("CVL placed ~1pm", "2199-02-01", "cvl", "consistent"),
    ("CVL placed at 2100", "2199-02-01", "cvl", "inconsistent"),
    ("extubated at 1700", "2199-02-07", "extubated", "inconsistent"),
    ("A-line pulled at 1130", "2199-02-11", "a-line", "consistent"),
    ("A-line pulled at 0300", "2199-02-11", "a-line", "inconsistent"),
]


# --- value-attached qualifiers and stated-origin trends -------------------------------------

def test_reference_words_and_attached_values():
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.verification.qualifiers import attached_value, qualifier_holds, reference_qualifier

    line = "WBC 16.2 (WNL), Cr 2.1 - elevated"
    q = reference_qualifier(line, len("WBC 16.2"))
    assert q is not None and q.kind == "normal" and qualifier_holds(q, "wbc", 16.2) is False
    q = reference_qualifier(line, line.index(" - elevated"))
    assert q is not None and q.kind == "high" and qualifier_holds(q, "creatinine", 2.1) is True
    assert reference_qualifier("WBC 16.2, Cr 2.1", len("WBC 16.2")) is None
    # a word that goes on to a number of its own states another value ("low of 96.1"), not a judgement
    assert reference_qualifier("Tmax 97.4 ax, low of 96.1 at MN", len("Tmax 97.4")) is None
    assert reference_qualifier("HR 88, low 50s overnight", len("HR 88")) is None
    assert reference_qualifier("K 3.1, low", len("K 3.1")) is not None
    assert qualifier_holds(q, "no_such_concept", 1.0) is None
    lex = load_lexicon()
    text = "K 5.9, hyperkalemic; plt 285 (thrombocytopenic)"
    assert attached_value(text, text.index("hyperkalemic"), lex) == ("potassium", 5.9)
    assert attached_value(text, text.index("thrombocytopenic"), lex) == ("platelets", 285.0)
    assert attached_value("pt hyperkalemic overnight", 3, lex) is None


def test_day_over_day_compares_with_the_previous_day():
    from ehrlib.pipeline.offline.verification.trendwords import day_over_day

    def rows(*pairs):
        return [{"time": t, "valuenum": v} for t, v in pairs]

    # a same-day wobble (16 -> 17.9) does not decide: the previous day's last draw (19.5) does
    assert day_over_day(rows(("2199-02-10 00:18", 20.2), ("2199-02-10 04:14", 19.5), ("2199-02-11 02:49", 16.2),
                             ("2199-02-11 14:00", 17.9)), 0.05) == "falling"
    assert day_over_day(rows(("2199-02-03 18:04", 27.7), ("2199-02-04 19:15", 26.5)), 0.05) == "stable"  # within 5 %
    assert day_over_day(rows(("2199-02-04 19:15", 115.0), ("2199-02-05 03:06", 145.0)), 0.5) == "rising"
    assert day_over_day(rows(("2199-02-05 03:06", 145.0), ("2199-02-05 09:00", 150.0)), 0.5) is None  # one day only


def test_stated_origin_parsing():
    from ehrlib.pipeline.offline.verification.trendwords import direction_of, parse_origin

    o = parse_origin("lactate down to 1.1 from 2.3 this AM")
    assert o is not None and (o.word, o.new, o.origin) == ("down", 1.1, 2.3)
    o = parse_origin("Cr rose from 2.0 to a peak of 4.3")
    assert o is not None and (o.new, o.origin) == (4.3, 2.0)
    assert parse_origin("WBC 11.7, stable") is None
    assert direction_of("improved", lower_is_worse=False) == "falling"  # a creatinine improves downwards
    assert direction_of("improved", lower_is_worse=True) == "rising"  # a platelet count improves upwards
    assert direction_of("improved", lower_is_worse=None) is None


_QUALIFIER_CASES = [
    ("WBC 10.9 (WNL)", "2199-02-03", "wbc", "consistent"),
    ("plt 95 (WNL)", "2199-02-03", "plt", "inconsistent"),
    ("WBC 10.9 (leukocytosis)", "2199-02-03", "leukocytosis", "inconsistent"),  # 12.2 the next day is not this value
    ("plt 95 (thrombocytopenic)", "2199-02-03", "thrombocytopenic", "consistent"),
    ("K 4.1, hyperkalemic", "2199-02-03", "hyperkalemic", "inconsistent"),
    ("Na 148 - hypernatremic", "2199-02-03", "hypernatremic", "consistent"),
    ("Tmax 37.2, febrile", "2199-02-03", "febrile", "inconsistent"),
    ("lactate down to 0.8 from 2.3", "2199-02-03", "lactate", "consistent"),
    ("lactate up to 0.8 from 2.3", "2199-02-03", "lactate", "inconsistent"),
    ("plt up to 145 from 115", "2199-02-05", "plt", "consistent"),
    ("plt up to 145 from 80", "2199-02-05", "plt", "inconsistent"),  # 80 was two days and five draws earlier
]


_RATE_CASES = [  # drip rates are the note day's: propofol ran 24.8-40 mcg/kg/min on 02-04 (faster on 02-05)
    ("propofol 50 mcg/kg/min", "2199-02-04", "propofol", "inconsistent"),
    ("propofol 40 mcg/kg/min", "2199-02-04", "propofol", "consistent"),
    ("vaso 0.04 u/min", "2199-02-01", "vaso", "consistent"),  # charted as 2.4 units/hour
    ("vaso 0.1 u/min", "2199-02-01", "vaso", "inconsistent"),
    # propofol went to 40 mcg/kg/min at 11:30 on 02-04
    ("propofol increased to 40 mcg/kg/min at 1130", "2199-02-04", "propofol", "consistent"),
    ("propofol increased to 40 mcg/kg/min at 1800", "2199-02-04", "propofol", "inconsistent"),
]


_TREND_CASES = [  # lactate 12.7 (02-01 13:51) -> 6.2 (02-01 18:51) -> 2.5, 3.3, 2.3 on 02-02 (1.8 on 01-31)
    ("lactate trending up", "2199-02-02", "lactate", "inconsistent"),  # 01-31's 1.8 is not the previous draw
    ("lactate trending down", "2199-02-02", "lactate", "consistent"),
    ("WBC downtrending", "2199-02-11", "wbc", "consistent"),  # 20.2/19.5 on 02-10 -> 16.2
    ("WBC uptrending", "2199-02-11", "wbc", "inconsistent"),
    # platelets 96 late on 02-02, then 80/95/86 on 02-03; 115 late on 02-04, 145 on 02-05 (49 on 02-01)
    ("Plt rose to 95", "2199-02-03", "plt", "inconsistent"),  # 49 two days before is not the previous draw
    ("Plt rose to 145", "2199-02-05", "plt", "consistent"),
]


_CULTURE_CASES = [  # blood cultures of 01-31 and 02-01 never grew; a 02-03 note reports them
    ("BCx grew GPCs", "2199-02-03", "bcx", "inconsistent"),
    ("BCx NGTD", "2199-02-03", "bcx", "consistent"),
]


@pytest.mark.parametrize("text,chartdate,word,label",
                         _CLOCK_CASES + _QUALIFIER_CASES + _RATE_CASES + _TREND_CASES + _CULTURE_CASES)
def test_one_line_notes_on_the_demo(run_note, text, chartdate, word, label):
    preds = run_note(text, chartdate)
    assert preds.get(word) == label, preds


# --- microbiology susceptibilities ------------------------------------------------------------

def test_susceptibility_parsing_and_check():
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.microsens import is_susceptibility_name, parse_susceptibilities
    from ehrlib.pipeline.offline.verification.microbiology import check_susceptibilities

    lex = load_lexicon()
    assert parse_susceptibilities("E. coli resistant to cipro and levo, sensitive to ceftriaxone", lex) == (
        [("ciprofloxacin", "R"), ("levofloxacin", "R"), ("ceftriaxone", "S")], False)
    assert parse_susceptibilities("MSSA, oxacillin-sensitive", lex) == ([("oxacillin", "S")], False)
    assert parse_susceptibilities("E. coli (levo R, CTX S)", lex)[0] == [("levofloxacin", "R"), ("ceftriaxone", "S")]
    assert parse_susceptibilities("Klebsiella, pan-sensitive", lex) == ([], True)
    assert parse_susceptibilities("started levo x 7 days", lex) == ([], False)
    line = "sputum E coli (levo R), R to cipro; levo 750 mg daily"
    assert is_susceptibility_name(line, line.index("levo"), line.index("levo") + 4)
    assert is_susceptibility_name(line, line.index("cipro"), line.index("cipro") + 5)
    assert not is_susceptibility_name(line, line.rindex("levo"), line.rindex("levo") + 4)  # the order
    assert not is_susceptibility_name("vanc R arm PICC", 0, 4)  # no culture on the line
    rows = [{"extra": {"antibiotic": "LEVOFLOXACIN", "interpretation": "R"}},
            {"extra": {"antibiotic": "CEFTRIAXONE", "interpretation": "S"}}]
    assert check_susceptibilities(rows, [("levofloxacin", "R"), ("ceftriaxone", "S")], False)[0]
    assert not check_susceptibilities(rows, [("levofloxacin", "S")], False)[0]
    assert not check_susceptibilities(rows, [], True)[0]  # pan-sensitive, but R to levofloxacin
    assert check_susceptibilities(rows, [("meropenem", "S")], False)[0]  # never tested: not judged


_MICRO_CASES = [  # subject 10061, admission 145203: sputum drawn 2107-01-29 grew E. coli (levo/cipro R, CTX S)
    # the organism and each antibiotic's susceptibility are separate statements
    ("Sputum cx grew E. coli, R to levofloxacin", {"sputum": "consistent", "levofloxacin": "consistent"}),
    ("Sputum cx grew E. coli, sensitive to levofloxacin", {"sputum": "consistent", "levofloxacin": "inconsistent"}),
    ("Sputum cx: E. coli, pan-sensitive", {"sputum": "consistent", "pan-sensitive": "inconsistent"}),
    ("sputum cx E coli (levo R, CTX S), cipro S", {"sputum": "consistent", "levo": "consistent", "ctx": "consistent",
                                                   "cipro": "inconsistent"}),
]


@pytest.mark.parametrize("text,expected", _MICRO_CASES)
def test_susceptibilities_on_the_demo(mimic3_demo_db, text, expected):
    from ehrlib.pipeline.context import note_context
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    with duckdb.connect(str(mimic3_demo_db), read_only=True) as con:
        # two days after the specimen was drawn: the result is reported in a later note
        note = Note(f"m-{abs(hash(text))}", 10061, 145203, "physician", "2107-02-01", text)
        ctx = note_context(con, note, flavor="mimic3")
        tools = make_toolset(con, PatientContext(10061, 145203, ctx.admittime, ctx.dischtime, "2107-02-01", ctx.sex))
        stages = get_stages("inspector", "offline", RunParams(method="inspector"))
        result = inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)
    labels = {p.entity.split()[0].lower(): p.label for p in result.predictions}
    assert labels == expected, labels


# --- flowsheet shorthand -----------------------------------------------------------------------

@pytest.mark.parametrize("text,concept,value", [
    ("sats 98% on 4LNC", "o2_flow", 4.0),  # no space between flow and device
    ("3L NC", "o2_flow", 3.0),
    ("fingersticks 70s-90s", "glucose", None),
    ("accuchecks 59-107", "glucose", 59.0),
])
def test_flowsheet_shorthand_mentions(text, concept, value):
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.mentions import find_mentions

    found = [m for m in find_mentions(text, 0, load_lexicon()) if m.concept == concept]
    assert found, [(m.text, m.concept) for m in find_mentions(text, 0, load_lexicon())]
    if value is not None:
        reading = found[0].claim.reading
        assert (reading.value if reading.value is not None else reading.min) == value


@pytest.mark.parametrize("text,chartdate,word,label", [
    # lactate peaked at 12.7 on 02-01 13:51; a note of 02-02 tells the course, not 02-02's maximum (3.3)
    ("lactate peaked at 12.7", "2199-02-02", "lactate", "consistent"),
    ("lactate peaked at 10.7", "2199-02-02", "lactate", "inconsistent"),
])
def test_peak_statements_look_back(run_note, text, chartdate, word, label):
    assert run_note(text, chartdate).get(word) == label


@pytest.mark.parametrize("chartdate,label", [("2148-01-15", "inconsistent"), ("2148-01-16", "consistent")])
def test_trend_follows_one_items_series(mimic3_demo_db, chartdate, label):
    """Subject 10112 (admission 188574): blood WBC 14.1 (01-13), 16.9 (01-14), 14.9 (01-15),
    15.9 (01-16). "WBC" also aligns a urine WBC item, whose values must not join the series."""
    from ehrlib.pipeline.context import note_context
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    with duckdb.connect(str(mimic3_demo_db), read_only=True) as con:
        note = Note(f"w-{chartdate}", 10112, 188574, "physician", chartdate, "white count trending up")
        ctx = note_context(con, note, flavor="mimic3")
        tools = make_toolset(con, PatientContext(10112, 188574, ctx.admittime, ctx.dischtime, chartdate, ctx.sex))
        stages = get_stages("inspector", "offline", RunParams(method="inspector"))
        result = inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)
    assert [p.label for p in result.predictions] == [label], [(p.entity, p.label, p.reason) for p in result.predictions]


@pytest.mark.parametrize("line, word, named", [
    ("Wound cx: Enterococcus - R ampicillin, vancomycin S", "ampicillin", True),   # a bare level letter before
    ("Urine cx: Klebsiella, pan-sensitive incl cefazolin and nitrofurantoin", "cefazolin", True),
    ("Urine cx: Klebsiella, pan-sensitive incl cefazolin and nitrofurantoin", "nitrofurantoin", True),
    ("Urine cx: Klebsiella, sensitive including ceftriaxone", "ceftriaxone", True),
    ("Urine cx: Klebsiella; started ceftriaxone", "ceftriaxone", False),          # the order
    ("Blood cx pending. R IJ placed, vancomycin given", "vancomycin", False),       # a side, not a level
])
def test_a_level_before_an_antibiotic_names_a_susceptibility(line, word, named):
    from ehrlib.pipeline.offline.microsens import is_susceptibility_name

    i = line.index(word)
    assert is_susceptibility_name(line, i, i + len(word)) is named
