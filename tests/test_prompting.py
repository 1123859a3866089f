"""The one prompt loader: ids are stem@sha8 of the file text; missing prompts and placeholders are ConfigErrors."""
from __future__ import annotations

import hashlib

import pytest

from ehrlib.errors import ConfigError
from ehrlib.prompting import get_prompt, load_prompt


def test_prompt_id_is_the_hash_of_the_file_text():
    p = load_prompt("verify_entity")
    digest = hashlib.sha256(p.template.template.encode("utf-8")).hexdigest()[:8]
    assert p.prompt_id == f"verify_entity@{digest}"
    assert get_prompt("verify_entity") is get_prompt("verify_entity")  # read once
    assert get_prompt("verify_entity").prompt_id == p.prompt_id


def test_missing_prompt_and_placeholder_are_config_errors():
    with pytest.raises(ConfigError, match="no prompt named"):
        load_prompt("no_such_prompt")
    with pytest.raises(ConfigError, match="no value for placeholder"):
        load_prompt("verify_entity").render()
