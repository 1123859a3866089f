"""Lexical index ranking: ties are broken by item key, whatever the catalog's order."""
from __future__ import annotations

from ehrlib.tools.items import Catalog, CatalogItem
from ehrlib.tools.lexical import LexicalIndex


def _catalog(keys_labels: list[tuple[str, str]]) -> Catalog:
    items = tuple(CatalogItem(key=k, table="labevents", column="itemid", value=i, label=lab)
                  for i, (k, lab) in enumerate(keys_labels))
    return Catalog(items, {it.key: it for it in items})


def test_tied_items_come_in_key_order_for_any_catalog_order() -> None:
    entries = [("labevents:3", "Glucose"), ("labevents:1", "Glucose"), ("labevents:2", "Glucose"),
               ("labevents:9", "Potassium")]
    for order in (entries, entries[::-1], entries[1:] + entries[:1]):
        hits = LexicalIndex(_catalog(order)).search("glucose", k=2)
        assert [h.item.key for h in hits] == ["labevents:1", "labevents:2"]


def test_a_better_score_still_ranks_first_and_zero_scores_are_dropped() -> None:
    index = LexicalIndex(_catalog([("labevents:1", "Glucose, whole blood"), ("labevents:2", "Glucose"),
                                   ("labevents:3", "Sodium")]))
    hits = index.search("glucose", k=3)
    assert hits[0].item.key == "labevents:2"
    assert "labevents:3" not in [h.item.key for h in hits]


def test_l2_rows_matches_sklearn_normalize_and_keeps_empty_rows_zero():
    import numpy as np
    from scipy import sparse
    from sklearn.preprocessing import normalize

    from ehrlib.tools.ngrams import _l2_rows

    m = sparse.csr_matrix(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]], np.float32))
    got = _l2_rows(m).toarray()
    assert np.allclose(got, normalize(m, norm="l2").toarray())
    assert np.allclose(got[0], [0.6, 0.8, 0.0]) and not got[1].any()


def test_a_repeated_search_gives_the_same_matches_in_a_list_of_its_own() -> None:
    index = LexicalIndex(_catalog([("labevents:1", "Glucose"), ("labevents:2", "Creatinine")]))
    first = index.search("creat", k=2)
    want = list(first)
    assert want[0].item.key == "labevents:2"
    first.append(first[0])                            # a caller changing its list ...
    again = index.search("creat", k=2)
    assert again == want                              # ... changes no later answer
    assert again == index.search_many(["creat"], k=2)[0]      # the same as computed afresh
    assert index.search("creat", k=2, tables={"chartevents"}) == []   # a table filter is never kept
