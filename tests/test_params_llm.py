"""The documented `llm:` block of a params file reaches the LLM client settings."""
from __future__ import annotations

import pytest

from ehrlib.errors import ConfigError
from ehrlib.pipeline.llm.caller import make_llm_client
from ehrlib.pipeline.params import load_params, params_from_mapping


def test_llm_block_becomes_client_settings(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("method: inspector\nllm:\n  backend: gemini\n  model: gemini-2.5-flash\n  timeout_s: 60\n")
    params = load_params(path)
    assert params.backend == "gemini"
    assert params.backend_options["llm"] == {"backend": "gemini", "model": "gemini-2.5-flash", "timeout_s": 60}
    # no temperature unless asked: the paper ran Gemini with its defaults
    assert params.temperature is None


def test_llm_block_rejects_non_mapping():
    with pytest.raises(ConfigError, match="llm must be a mapping"):
        params_from_mapping({"llm": "gemini"})


def test_explicit_backend_wins_over_llm_block():
    params = params_from_mapping({"backend": "openai", "llm": {"backend": "gemini"}})
    assert params.backend == "openai"


def test_client_built_from_block_with_backend_key():
    params = params_from_mapping({"backend": "scripted", "llm": {"backend": "scripted"},
                                  "backend_options": {"replies": ["ok"]}})
    client = make_llm_client("scripted", params)
    assert client is not None
