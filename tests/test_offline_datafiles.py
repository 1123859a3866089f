"""The offline extractor's data files: each has a JSON Schema and passes it; a typo fails at load."""
from __future__ import annotations

import json

import jsonschema
import pytest

from ehrlib.datafiles import data_text, load_data

EXTRACTION_DATA = ("offline_context.yaml", "offline_nonstatement.yaml", "offline_concept_flags.yaml",
                   "offline_sections.yaml", "offline_lexicon.yaml")


def _schema(name: str) -> dict:
    return json.loads(data_text(f"schemas/{name.rsplit('.', 1)[0]}.schema.json"))


@pytest.mark.parametrize("name", EXTRACTION_DATA)
def test_data_file_has_a_schema_and_passes_it(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(_schema(name))
    load_data(name)  # validates against the schema


@pytest.mark.parametrize("name, broken", [
    ("offline_sections.yaml", lambda d: d["sections"][0].update(scope="sometimes")),
    ("offline_concept_flags.yaml", lambda d: d.update(day_total_min="400")),
    ("offline_lexicon.yaml", lambda d: next(iter(d["concepts"].values())).update(kind="measurment")),
    ("offline_nonstatement.yaml", lambda d: d["vocab"].update(studies=[])),
])
def test_a_typo_in_the_data_is_rejected(name: str, broken) -> None:
    doc = json.loads(json.dumps(load_data(name)))  # a private copy: the loaded one is shared
    broken(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, _schema(name))


def test_a_fresh_process_reads_the_checked_document_from_the_disk_cache(tmp_path, monkeypatch) -> None:
    from ehrlib import datafiles, disk_cache

    name = "offline_sections.yaml"
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path))
    parsed = datafiles.parse_data_yaml(data_text(name))
    load_data.cache_clear()
    try:
        assert load_data(name) == parsed   # parsed, validated and stored
        assert [p.name.rsplit("-", 1)[0] for p in (tmp_path / "packages").iterdir()] == [f"data-{name}"]
        load_data.cache_clear()
        monkeypatch.setattr(datafiles, "parse_data_yaml", lambda _t: pytest.fail("parsed although cached"))
        assert load_data(name) == parsed
        load_data.cache_clear()
        monkeypatch.setenv(disk_cache.DIR_ENV, "off")   # no cache: parsed again
        with pytest.raises(pytest.fail.Exception, match="parsed although cached"):
            load_data(name)
    finally:
        load_data.cache_clear()
