"""The disk cache of database-derived artefacts (ehrlib.disk_cache): a warm cache gives
the same catalog, n-gram index, ontology and item profile as a fresh build; a changed
database, version or damaged entry rebuilds; concurrent writers leave one whole entry.
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import shutil
import threading
from pathlib import Path

import duckdb
import numpy as np
import pytest

import ehrlib
from ehrlib import disk_cache
from ehrlib import ontology as ontology_module
from ehrlib.db.connect import connect
from ehrlib.pipeline.offline import icd_match
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.tools import lexical, profile


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> Path:
    from ehrlib.synth import generate_hospital

    return generate_hospital(tmp_path_factory.mktemp("cache_src") / "h.duckdb", patients=3, seed=1)


@pytest.fixture
def db(small_db, tmp_path, monkeypatch) -> Path:
    """A private copy (its own cache folder), the process memo emptied, no user cache dir."""
    monkeypatch.delenv(disk_cache.DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _forget()
    out = tmp_path / "db" / "h.duckdb"
    out.parent.mkdir()
    shutil.copy2(small_db, out)
    return out


def _forget() -> None:
    lexical._CATALOGS.clear()
    lexical._INDEXES.clear()
    ontology_module._CACHE.clear()
    profile._MEMORY.clear()
    icd_match._DICTIONARIES.clear()


def _artefacts(path: Path):
    con = connect(path)
    try:
        smap = schema_map(detect_flavor(con))
        index = lexical.lexical_index(con, smap)
        onto = ontology_module.load_ontology(con)
        return index, onto, index._vectorizer.to_arrays()
    finally:
        con.close()


def _entries(db: Path) -> list[str]:
    folder = db.with_name(db.name + ".ehrlib-cache")
    return sorted(p.name.rsplit("-", 1)[0] for p in folder.iterdir()) if folder.is_dir() else []


def test_warm_cache_gives_the_built_artefacts_without_building(db, monkeypatch):
    index, onto, arrays = _artefacts(db)
    assert _entries(db) == ["catalog-mimic3", "ngrams-mimic3", "ontology-rules"]
    _forget()

    def no_build(*_a, **_k):
        raise AssertionError("built although cached")

    monkeypatch.setattr(lexical, "build_catalog", no_build)
    monkeypatch.setattr(lexical.CharWbTfidf, "__init__", no_build)
    monkeypatch.setattr(ontology_module, "build_ontology_rules", no_build)
    index2, onto2, arrays2 = _artefacts(db)
    assert index2.catalog.items == index.catalog.items
    assert onto2 == onto and onto2.sha8 == onto.sha8
    assert arrays2.keys() == arrays.keys()
    for name in arrays:
        assert np.array_equal(arrays[name], arrays2[name]) and arrays[name].dtype == arrays2[name].dtype
    for query in ("wbc", "heart rate", "lasix", "blood culture"):
        assert [(m.item.key, m.score, m.matched) for m in index2.search(query)] == \
               [(m.item.key, m.score, m.matched) for m in index.search(query)]


def test_changed_database_rebuilds_and_drops_the_stale_entry(db):
    _artefacts(db)
    before = sorted(db.with_name(db.name + ".ehrlib-cache").iterdir())
    con = duckdb.connect(str(db))
    con.execute("UPDATE D_LABITEMS SET LABEL = 'Zzyzx Marker' WHERE ITEMID = (SELECT min(ITEMID) FROM D_LABITEMS)")
    con.close()
    _forget()
    index, _, _ = _artefacts(db)
    assert "Zzyzx Marker" in {i.label for i in index.catalog.items}
    after = sorted(db.with_name(db.name + ".ehrlib-cache").iterdir())
    assert len(after) == len(before) and not set(after) & set(before)


def test_another_version_has_another_key(db, monkeypatch):
    con = connect(db)
    try:
        ident = disk_cache.content_identity(con, str(db))
    finally:
        con.close()
    key = disk_cache.entry_key(ident, "catalog-mimic3", "d")
    monkeypatch.setattr(ehrlib, "__version__", "99.0")
    assert disk_cache.entry_key(ident, "catalog-mimic3", "d") != key
    assert disk_cache.entry_key(ident, "catalog-mimic3", "e") != key   # an edited builder too


_CALLED: list[str] = []


def _called(what: str) -> str:
    _CALLED.append(what)
    return what


class _Calls:
    """Pickles as a call of :func:`_called`: what a hostile cache file would hold."""

    def __reduce__(self):
        return (_called, ("unpickled",))


def _entry_with_payload(target: Path, payload: bytes) -> None:
    """A value entry with a correct header and checksum around ``payload``."""
    key = target.stem.rsplit("-", 1)[1]
    target.write_bytes(disk_cache._MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode()
                       + b"\n" + payload)


@pytest.mark.parametrize("damage", ["truncate", "garble", "pickle", "code", "wrong type"])
def test_damaged_entry_is_rebuilt_with_one_warning(db, damage, caplog):
    index, onto, _ = _artefacts(db)
    folder = db.with_name(db.name + ".ehrlib-cache")
    pattern = "ngrams-*.npz" if damage in ("truncate", "pickle") else "ontology-*.pkl"
    target = next(folder.glob(pattern))
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:1000])
    elif damage == "garble":   # one label changed: the payload checksum catches it
        target.write_bytes(target.read_bytes().replace(b"LABORATORY", b"LABORATORX", 1))
    elif damage == "pickle":   # an object array would need pickle to load: refused, never unpickled
        with open(target, "wb") as fh:
            np.savez(fh, __key__=np.array(target.stem.rsplit("-", 1)[1]), idf=np.array([object()], dtype=object))
    elif damage == "code":   # a checksummed pickle that would call a function: refused, never called
        _entry_with_payload(target, pickle.dumps({"format": _Calls()}, protocol=pickle.HIGHEST_PROTOCOL))
    else:   # plain data of the wrong shape: the decoder refuses it
        _entry_with_payload(target, pickle.dumps(["not", "an", "ontology"]))
    _forget()
    with caplog.at_level(logging.WARNING, logger="ehrlib.disk_cache"):
        index2, onto2, _ = _artefacts(db)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "damaged cache entry" in warnings[0].getMessage()
    assert not _CALLED
    assert "\n" not in warnings[0].getMessage()
    assert index2.catalog.items == index.catalog.items and onto2 == onto
    _forget()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ehrlib.disk_cache"):
        _artefacts(db)   # the rewritten entry reads cleanly
    assert not caplog.records


def test_unwritable_folder_falls_back_to_the_user_cache(db, tmp_path):
    db.with_name(db.name + ".ehrlib-cache").write_text("a file where the folder would go")
    _artefacts(db)
    folders = list((tmp_path / "xdg" / "ehrlib").iterdir())
    assert len(folders) == 1 and folders[0].name.startswith("h.duckdb-")
    assert {p.name.split("-")[0] for p in folders[0].iterdir()} == {"catalog", "ngrams", "ontology"}


def test_cache_can_be_turned_off_or_moved(db, tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.DIR_ENV, "off")
    _artefacts(db)
    assert _entries(db) == [] and not (tmp_path / "xdg").exists()
    _forget()
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path / "elsewhere"))
    _artefacts(db)
    assert _entries(db) == [] and len(list((tmp_path / "elsewhere").iterdir())) == 1


def test_concurrent_writers_leave_one_whole_entry(db):
    con = connect(db)
    results, errors = [], []
    built = threading.Semaphore(0)

    def build():
        built.release()
        return {"a": list(range(1000))}

    def worker():
        try:
            cur = con.cursor()
            results.append(disk_cache.cached_value(cur, str(db), "demo", "d", build, dict, dict))
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    con.close()
    assert not errors and all(r == {"a": list(range(1000))} for r in results)
    folder = db.with_name(db.name + ".ehrlib-cache")
    assert [p.name.split("-")[0] for p in folder.iterdir()] == ["demo"]   # no temp file left


def test_profile_without_its_table_is_cached(db):
    con = duckdb.connect(str(db))
    con.execute(f"DROP TABLE IF EXISTS {profile.PROFILE_TABLE}")
    con.close()
    con = connect(db)
    try:
        smap = schema_map(detect_flavor(con))
        ident = lexical.database_identity(con)
        key = next(k for k, in con.execute(f"SELECT '{'labevents:'}' || CAST(ITEMID AS VARCHAR) FROM LABEVENTS "
                                            "LIMIT 1").fetchall())
        rows = profile.profile_for(con, smap, key, ident, table_present=False)
        assert rows and rows[0]["rank"] == 1
        assert [p.name.split("-")[0] for p in db.with_name(db.name + ".ehrlib-cache").iterdir()] == ["profile"]
        _forget()
        assert profile.profile_for(con, smap, key, ident, table_present=False) == rows
    finally:
        con.close()


def test_cache_files_are_readable_like_the_database(db):
    _artefacts(db)
    mask = os.umask(0)
    os.umask(mask)
    for p in db.with_name(db.name + ".ehrlib-cache").iterdir():
        assert p.stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.fixture
def source(tmp_path, monkeypatch) -> Path:
    """Another package's data file, its artefacts cached under ``tmp_path/c/packages``."""
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path / "c"))
    out = tmp_path / "dictionary.bin"
    out.write_bytes(b"v1")
    return out


def test_package_data_cache_follows_its_source_file(source, tmp_path):
    builds = []

    def build():
        builds.append(1)
        return {"tylenol": ("acetaminophen",), "lasix": ("furosemide", "frusemide")}

    def get():
        return disk_cache.cached_package_value("demo", source, "d", build, dict,
                                               lambda d: {k: tuple(v) for k, v in d.items()})

    first = get()
    assert get() == first and len(builds) == 1
    assert list(get()["lasix"]) == ["furosemide", "frusemide"]   # order kept
    source.write_bytes(b"version 2")
    os.utime(source, ns=(1, 1))
    assert get() == first and len(builds) == 2
    assert len(list((tmp_path / "c" / "packages").iterdir())) == 1


def test_drug_variant_map_is_the_same_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path / "c"))
    lexical._brand_to_generic.cache_clear()
    built = lexical._brand_to_generic()
    lexical._brand_to_generic.cache_clear()
    cached = lexical._brand_to_generic()
    lexical._brand_to_generic.cache_clear()
    assert isinstance(cached, disk_cache.BucketedMap) and len(cached) == len(built) > 100_000
    assert all(cached.get(k) == v for k, v in list(built.items())[::97]) and cached.get("no such drug") is None
    assert dict(cached) == built


def test_a_bucketed_map_reads_buckets_on_lookup_and_refuses_code(tmp_path):
    mapping = {"lasix": ("furosemide",), "lantus": ("insulin glargine",), "tylenol": ("acetaminophen",), "x": ()}
    lazy = disk_cache.BucketedMap.decode(pickle.loads(pickle.dumps(disk_cache.BucketedMap.encode(mapping))))
    assert lazy.get("lasix") == ("furosemide",) and lazy._open.keys() == {"la"}
    assert lazy.get("x") == () and lazy.get("zz") is None and 3 not in lazy and len(lazy) == 4
    assert dict(lazy) == mapping and lazy == mapping
    bad = disk_cache.BucketedMap({"la": pickle.dumps({"lasix": os.getcwd})}, 1)   # a reference to code
    with pytest.raises(disk_cache.CacheDamaged):
        bad.get("lasix")
    with pytest.raises(TypeError):
        disk_cache.BucketedMap.decode({"size": 1, "buckets": {"la": "not bytes"}})


def test_read_only_cache_beside_a_shared_database_is_still_read(db, tmp_path, monkeypatch):
    index, onto, _ = _artefacts(db)   # the owner's run fills <db>.ehrlib-cache/
    _forget()
    beside = db.with_name(db.name + ".ehrlib-cache")
    real = disk_cache._writable_dir
    monkeypatch.setattr(disk_cache, "_writable_dir", lambda d: d != beside and real(d))

    def no_build(*_a, **_k):
        raise AssertionError("built although a readable cache was there")

    monkeypatch.setattr(lexical, "build_catalog", no_build)
    monkeypatch.setattr(ontology_module, "build_ontology_rules", no_build)
    index2, onto2, _ = _artefacts(db)
    assert index2.catalog.items == index.catalog.items and onto2 == onto
    user = tmp_path / "xdg" / "ehrlib"
    assert not user.exists() or not any(p.is_file() for p in user.rglob("*"))   # nothing copied on a hit


def test_a_value_that_is_not_plain_data_is_not_written(source, tmp_path):
    builds = []

    def build():
        builds.append(1)
        return {"when": Path("/x")}   # a class reference the reader would refuse

    for _ in range(2):
        assert disk_cache.cached_package_value("demo", source, "d", build, dict, dict) == {"when": Path("/x")}
    assert len(builds) == 2 and not list((tmp_path / "c" / "packages").iterdir())


def test_an_entry_replaces_only_its_own_artefact(source, tmp_path):
    """Writing "icd-crosswalk" prunes its stale entries, never those of "icd-crosswalk-parts"."""
    disk_cache.cached_package_value("icd-crosswalk-parts", source, "d", lambda: {"a": "b"}, dict, dict)
    disk_cache.cached_package_value("icd-crosswalk", source, "d", lambda: {"a": "c"}, dict, dict)
    names = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "c" / "packages").iterdir())
    assert names == ["icd-crosswalk", "icd-crosswalk-parts"]
    disk_cache.cached_package_value("icd-crosswalk", source, "e", lambda: {"a": "d"}, dict, dict)   # a new builder
    names = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "c" / "packages").iterdir())
    assert names == ["icd-crosswalk", "icd-crosswalk-parts"]


def test_icd_dictionary_is_the_same_from_the_cache(db, monkeypatch):
    from ehrlib.pipeline.offline import terminology

    class _Env:
        def __init__(self, con):
            self.con = con
            self.schema = schema_map(detect_flavor(con))
            self.identity = lexical.database_identity(con)
            self.catalog = lexical.catalog_for(con, self.schema, self.identity)

    class _Tools:
        def __init__(self, con):
            self.env = _Env(con)

    def dictionary():
        icd_match._DICTIONARIES.clear()
        con = connect(db)
        try:
            return icd_match.dictionary_for(_Tools(con))
        finally:
            con.close()

    built = dictionary()
    assert "icd-dictionary-mimic3" in _entries(db) and len(built) > 0
    _forget()
    monkeypatch.setattr(terminology, "tokenise_titles", lambda *_a: pytest.fail("tokenised although cached"))
    monkeypatch.setattr(icd_match, "tokenise_titles", lambda *_a: pytest.fail("tokenised although cached"))
    cached = dictionary()
    assert cached._titles == built._titles and cached._tokens == built._tokens and cached._raw == built._raw
    assert cached._index == built._index and cached._headers == built._headers
    for phrase in ("sepsis", "acute kidney failure", "pneumonia", "coronary bypass"):
        assert cached.match(phrase) == built.match(phrase)


def test_long_lived_data_is_frozen_out_of_the_collector_only_under_the_process_policy(monkeypatch):
    import gc

    monkeypatch.setattr(disk_cache, "_freeze_long_lived", False)
    frozen = gc.get_freeze_count()
    with disk_cache.long_lived():
        kept = [[i] for i in range(1000)]
        assert gc.isenabled()                       # a library default: the host's collector untouched
    assert gc.get_freeze_count() == frozen
    disk_cache.freeze_long_lived()
    assert disk_cache._freeze_long_lived
    try:
        with disk_cache.long_lived():
            assert not gc.isenabled()
            with disk_cache.long_lived():           # nested: still paused, not yet frozen
                kept += [[i] for i in range(1000)]
            assert not gc.isenabled() and gc.get_freeze_count() == frozen
        assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(kept)
        gc.disable()                                # a caller's own pause is kept
        with disk_cache.long_lived():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
        disk_cache.freeze_long_lived(False)
