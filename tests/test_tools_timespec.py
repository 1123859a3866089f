"""Time specs (paper Appendix C.3) and the trend rule, as pure functions."""
from __future__ import annotations

import datetime as dt

import pytest

from ehrlib.tools.context import PatientContext
from ehrlib.tools.timespec import TimeSpecError, parse_time_spec
from ehrlib.tools.trend import trend_stats

CTX = PatientContext(1, 2, dt.datetime(2130, 6, 23, 14, 30), dt.datetime(2130, 6, 28, 11, 0),
                     dt.datetime(2130, 6, 28), "M", {"surgery": dt.datetime(2130, 6, 24, 9, 0),
                                                     "Intubation": "2130-06-25 03:00"})


def D(day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(2130, 6, day, hour, minute)


@pytest.mark.parametrize("spec,start,end", [
    ("", D(22, 14, 30), D(29, 11)),                       # whole admission, widened a day each way
    ("during admission", D(22, 14, 30), D(29, 11)),
    ("admission", D(22, 14, 30), D(24, 14, 30)),          # anchor ± 1 day
    ("On Admission", D(22, 14, 30), D(24, 14, 30)),
    ("discharge", D(27, 11), D(29, 11)),
    ("note date", D(27), D(30)),                          # the note's day, widened
    ("yesterday", D(26), D(29)),                          # the day before the note, widened
    ("overnight", D(26, 18), D(29, 8)),                   # 18:00-08:00 before the note, widened
    ("HD 1", D(22), D(25)),                               # HD 1 = admission day
    ("hospital day 3", D(24), D(27)),
    ("POD 0", D(23), D(26)),                              # surgery day
    ("POD 2", D(25), D(28)),
    ("post-op day 1", D(24), D(27)),
    ("POD 1 after intubation", D(25), D(28)),
    ("intubation", D(24, 3), D(26, 3)),
    ("2130-06-24", D(24), D(25)),                         # exact date: that day
    ("06-24", D(24), D(25)),                              # paper's "06-24": year from the admission
    ("6/24", D(24), D(25)),
    ("2130-06-24 08:00", D(24, 7), D(24, 9)),             # exact timestamp ± 1 hour
    ("2130-06-24T08:00:00", D(24, 7), D(24, 9)),
    ("HD 2 to HD 4", D(23), D(28)),                        # duration widened one day each way
    ("from 2130-06-24 to 2130-06-25", D(23), D(27)),
    ("between admission and POD 1", D(22, 14, 30), D(27)),
    ("06-24 - 06-26", D(23), D(28)),
])
def test_time_specs(spec, start, end):
    w = parse_time_spec(spec, CTX)
    assert (w.start, w.end) == (start, end), w.description


def test_month_day_picks_the_year_nearest_the_admission():
    ctx = PatientContext(1, 2, dt.datetime(2130, 12, 30, 10), dt.datetime(2131, 1, 3))
    assert parse_time_spec("01-02", ctx).start == dt.datetime(2131, 1, 2)


@pytest.mark.parametrize("spec,needle", [
    ("yesterday-ish", "cannot read"), ("2130-02-30", "cannot read"), ("13-45", "not a valid month-day"),
    ("9999-01-01", "outside the years"), ("HD 100000", "implausibly large"), ("POD 2 after lunch", "no event named"),
    ("HD 5 to HD 2", "ends before"), ("x" * 300, "too long"), ("'; DROP TABLE x; --", "cannot read"),
])
def test_bad_specs_explain_themselves(spec, needle):
    with pytest.raises(TimeSpecError, match=needle):
        parse_time_spec(spec, CTX)


def test_pod_without_a_surgery_anchor():
    ctx = PatientContext(1, 2, D(23), D(28))
    with pytest.raises(TimeSpecError, match="surgery"):
        parse_time_spec("POD 1", ctx)
    with pytest.raises(TimeSpecError, match="note date"):
        parse_time_spec("note date", ctx)


def _series(values, hours=24):
    return [(D(20) + dt.timedelta(hours=hours * i), v) for i, v in enumerate(values)]


@pytest.mark.parametrize("values,direction", [
    ([1.0, 1.4, 1.9], "rising"), ([15.2, 13.0, 11.1, 9.0], "falling"), ([100, 101, 99, 100, 100], "stable"),
    ([80, 100, 80, 100, 80, 100], "stable"),     # fluctuation, no trend
    ([1.0, 1.02], "stable"),                      # 2 % change is below the 5 % rule
    ([1.0, 1.2], "rising"), ([5.0], "insufficient data"), ([], "insufficient data"),
])
def test_trend_direction_rule(values, direction):
    assert trend_stats(_series(values))["direction"] == direction


def test_trend_statistics():
    s = trend_stats(_series([10, 12, 14, 16], hours=12))
    assert (s["first"], s["last"], s["min"], s["max"], s["n"]) == (10, 16, 10, 16, 4)
    assert s["slope_per_day"] == pytest.approx(4.0)
    assert s["rate_of_change_per_day"] == pytest.approx(4.0)
    assert s["span_days"] == pytest.approx(1.5)
    assert s["max_step_change"] == 2
    assert s["cv"] == pytest.approx(s["sd"] / 13, rel=1e-3)


def test_char_wb_tfidf_equals_scikit_learn():
    """The per-word TF-IDF (ehrlib.tools.ngrams) reproduces TfidfVectorizer(char_wb, 2-4, sublinear)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from test_tools_testdb import tiny_rows

    from ehrlib.tools.ngrams import CharWbTfidf

    rows = tiny_rows()
    texts = [r["label"] for r in rows["d_items"] + rows["d_labitems"]] + [r["long_title"]
                                                                          for r in rows["d_icd_diagnoses"]]
    texts += ["Heart Rate", "a", "  NRB  ", "Ünïcödé 体温  x", "O2 sat 92%", "Arterial BP [Systolic]"]
    ours = CharWbTfidf(texts)
    ref = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, dtype=np.float32)
    x = ref.fit_transform(texts)
    assert set(ours.vocabulary) == set(ref.vocabulary_)
    order = [ours.vocabulary[g] for g in ref.get_feature_names_out()]
    assert abs(ours.columns[:, order] - x.tocsc()).max() < 1e-6
    queries = ["heart rt", "WBC cells", "nothing known here: qqq"]
    assert abs(ours.transform(queries)[:, order] - ref.transform(queries)).max() < 1e-6


def test_search_similarities_are_scipys_sparse_product_bit_for_bit():
    """The SciPy-free search product (CharWbTfidf.similarities) gives the very float32 bits
    of ``columns @ transform(queries).T``, read back from the cached arrays too: rankings
    and tie-breaks cannot move. Texts share many n-grams, so sums have many terms."""
    import numpy as np
    from test_tools_testdb import tiny_rows

    from ehrlib.tools.ngrams import CharWbTfidf

    rows = tiny_rows()
    texts = [r["label"] for r in rows["d_items"] + rows["d_labitems"]] + [r["long_title"]
                                                                          for r in rows["d_icd_diagnoses"]]
    texts += ["Heart Rate", "Heart Rate Alarm - High", "Arterial BP [Systolic]", "Arterial BP Mean", "a"]
    fitted = CharWbTfidf(texts)
    queries = ["heart rt", "heart rate alrm hi", "arterial systolic bp", "WBC cells", "qqq", "", "BP mean art"]
    for v in (fitted, CharWbTfidf.from_arrays(fitted.to_arrays())):
        q = v.transform(queries)
        want = (v.columns @ q.T).toarray()
        got = np.ascontiguousarray(v.similarities(queries))
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == (len(texts), len(queries))
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
        assert got[:, 0].argmax() == texts.index("Heart Rate") and not got[:, 4].any()
