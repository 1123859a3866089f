"""The clinical criteria shared by the note writer, the criterion tool and the offline rules."""
from __future__ import annotations

import pytest

from ehrlib.criteria import compare, criterion, criterion_holds, load_criteria
from ehrlib.errors import ConfigError


def test_operators_on_known_answers():
    assert criterion_holds(">=", 100.4, 100.4) and not criterion_holds("<", 90, 90)
    assert criterion_holds("<=", 7.0, 7.5) and criterion_holds(">", 101.0, 100.4)
    assert criterion_holds("~", 1.0, 1.0) is False  # an unknown operator holds for nothing
    assert compare(65.0, "<", 65.0) is False
    with pytest.raises(KeyError):
        compare(1.0, "~", 1.0)


def test_packaged_criteria_load_and_unknown_ids_are_config_errors():
    crits = load_criteria()
    assert crits and all(c.id == cid for cid, c in crits.items())
    with pytest.raises(ConfigError, match="unknown clinical criterion"):
        criterion("no_such_state")


def test_packaged_criteria_are_those_of_their_text():
    """The packaged criteria come from the document every reader of the file shares: the same
    criteria as parsing the file's text with the pure-Python safe loader.
    """
    from importlib import resources

    from ehrlib.criteria import CRITERIA_RESOURCE, parse_criteria

    text = resources.files("ehrlib").joinpath("data", CRITERIA_RESOURCE).read_text(encoding="utf-8")
    assert dict(load_criteria()) == dict(parse_criteria(text))


def test_covered_items_match_each_item_once_per_catalog():
    # a criterion test's items: those its table, label and fluid patterns cover, in catalog
    # order; kept with the catalog, so a second ask (or a rebuilt catalog) gives the same
    from ehrlib.criteria import CriterionTest
    from ehrlib.tools.criteria import covered_items
    from ehrlib.tools.items import Catalog, CatalogItem

    items = (CatalogItem("chartevents:1", "chartevents", "itemid", 1, "Temperature F"),
             CatalogItem("chartevents:2", "chartevents", "itemid", 2, "Heart Rate"),
             CatalogItem("labevents:3", "labevents", "itemid", 3, "Creatinine", fluid="Urine"),
             CatalogItem("labevents:4", "labevents", "itemid", 4, "Creatinine", fluid="Blood"),
             CatalogItem("chartevents:5", "chartevents", "itemid", 5, "temperature c (calc)"))
    catalog = Catalog(items, {i.key: i for i in items})
    temp = CriterionTest("chartevents", r"^temperature", "C", ">", 38.0)
    creat = CriterionTest("labevents", r"creatinine", "mg/dL", fluid=r"^blood")
    assert [i.key for i in covered_items(catalog, temp)] == ["chartevents:1", "chartevents:5"]
    assert [i.key for i in covered_items(catalog, creat)] == ["labevents:4"]
    assert covered_items(catalog, temp) is covered_items(catalog, temp)   # matched once
    calls = []
    assert catalog.derived("x", lambda: calls.append(1) or len(calls)) == 1
    assert catalog.derived("x", lambda: calls.append(1) or len(calls)) == 1 and calls == [1]
    fresh = Catalog(items, {i.key: i for i in items})
    assert fresh == catalog and fresh.derived("x", lambda: 7) == 7   # the memo is no part of equality


def test_covered_items_are_the_whole_catalog_scan():
    """The items a test covers are read from its table's items (in catalog order), the same
    as scanning the whole catalog."""
    from ehrlib.tools.criteria import covered_items
    from ehrlib.tools.items import Catalog, CatalogItem

    items = tuple(CatalogItem(f"{t}:{k}", t, "itemid", k, label, fluid=fluid)
                  for k, (t, label, fluid) in enumerate([
                      ("labevents", "Creatinine", "Blood"), ("chartevents", "Temperature Fahrenheit", None),
                      ("labevents", "Creatinine, Urine", "Urine"), ("chartevents", "Temperature Celsius", None),
                      ("labevents", "Lactate", "Blood"), ("labevents", "Creatinine", "Blood")]))
    catalog = Catalog(items, {i.key: i for i in items})
    for crit in load_criteria().values():
        for test in crit.tests:
            want = tuple(i for i in items if test.matches(i.table, i.label, i.fluid))
            assert covered_items(catalog, test) == want
