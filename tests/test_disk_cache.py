"""The disk cache of database-derived artefacts (ehrlib.tools.disk_cache): a warm cache gives
the same catalog, n-gram index, ontology and item profile as a fresh build; a changed
database, version or damaged entry rebuilds; concurrent writers leave one whole entry.
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
from pathlib import Path

import duckdb
import numpy as np
import pytest

import ehrlib
from ehrlib import ontology as ontology_module
from ehrlib.db.connect import connect
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.tools import disk_cache, lexical, profile


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


@pytest.mark.parametrize("damage", ["truncate", "garble", "pickle"])
def test_damaged_entry_is_rebuilt_with_one_warning(db, damage, caplog):
    index, onto, _ = _artefacts(db)
    folder = db.with_name(db.name + ".ehrlib-cache")
    target = next(folder.glob("ngrams-*.npz")) if damage != "garble" else next(folder.glob("ontology-*.json"))
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:1000])
    elif damage == "garble":   # valid JSON, one label changed: the payload checksum catches it
        target.write_text(target.read_text(encoding="utf-8").replace("LABORATORY", "LABORATORX", 1),
                          encoding="utf-8")
    else:   # an object array would need pickle to load: refused, never unpickled
        with open(target, "wb") as fh:
            np.savez(fh, __key__=np.array(target.stem.rsplit("-", 1)[1]), idf=np.array([object()], dtype=object))
    _forget()
    with caplog.at_level(logging.WARNING, logger="ehrlib.tools.disk_cache"):
        index2, onto2, _ = _artefacts(db)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "damaged cache entry" in warnings[0].getMessage()
    assert "\n" not in warnings[0].getMessage()
    assert index2.catalog.items == index.catalog.items and onto2 == onto
    _forget()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ehrlib.tools.disk_cache"):
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
            results.append(disk_cache.cached_json(cur, str(db), "demo", "d", build, dict, dict))
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


def test_package_data_cache_follows_its_source_file(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path / "c"))
    source = tmp_path / "dictionary.bin"
    source.write_bytes(b"v1")
    builds = []

    def build():
        builds.append(1)
        return {"tylenol": ("acetaminophen",), "lasix": ("furosemide", "frusemide")}

    def get():
        return disk_cache.cached_package_json("demo", source, "d", build, dict,
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
    assert cached == built and list(cached)[:50] == list(built)[:50] and len(built) > 100_000


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
