"""Every `llm:` block and LLM command in README.md and docs/ resolves to a client and a first
request, offline (`ehrlib llm check` sends nothing), and each backend name gets its defaults."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from ehrlib.cli import build_parser, main
from ehrlib.errors import ConfigError
from ehrlib.llm.check import check_llm, check_run_params
from ehrlib.llm.factory import BACKENDS, make_client, resolve_backend
from ehrlib.pipeline.params import params_from_mapping

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_ENV = ("EHRLIB_OPENAI_BASE_URL", "EHRLIB_OPENAI_API_KEY", "EHRLIB_OPENAI_MODEL", "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_DEPLOYMENT", "GOOGLE_GENAI_USE_VERTEXAI", "GEMINI_API_KEY",
        "GOOGLE_API_KEY", "EHRLIB_PHI_SAFE_HOSTS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS",
        "CLOUDSDK_CONFIG", "GCE_METADATA_HOST")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def documented_env(monkeypatch, tmp_path):
    """What the docs tell a user to export before the Azure and Gemini examples (no real
    secrets): a Gemini check without a key, or Vertex without project and credentials, fails.
    """
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://YOUR-RESOURCE.openai.azure.com")
    gcloud = tmp_path / "gcloud"
    gcloud.mkdir()
    (gcloud / "application_default_credentials.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "YOUR-PROJECT")
    monkeypatch.setenv("GEMINI_API_KEY", "not-a-key")


def llm_blocks() -> list[tuple[str, dict]]:
    """(where, params mapping) for fenced YAML with an `llm:` key, inline `{backend: ...}` cells,
    and the params/ files with an `llm:` block."""
    found = [(f"params/{p.name}", yaml.safe_load(p.read_text(encoding="utf-8")))
             for p in sorted((ROOT / "params").glob("*.yaml"))
             if (yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("llm")]  # `llm: null`: none configured
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.DOTALL):
            data = yaml.safe_load(m.group(1))
            if isinstance(data, dict) and "llm" in data:
                found.append((f"{doc.name}@{text[:m.start()].count(chr(10)) + 1}", data))
        for m in re.finditer(r"`(\{backend: [^`]+\})`", text):
            found.append((f"{doc.name}@{text[:m.start()].count(chr(10)) + 1}", {"llm": yaml.safe_load(m.group(1))}))
    return found


def llm_commands() -> list[tuple[str, list[str]]]:
    found = []
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in re.finditer(r"`?(ehrlib (?:judge|llm check) [^`|]+)`?", line):
                cmd = m.group(1).strip()
                if "[" in cmd or "--ping" in cmd:  # a synopsis; or a request sent (tested on fake servers)
                    continue
                argv = shlex.split(cmd, comments=True)[1:]
                if argv[0] == "judge" and "--run" not in argv:
                    continue  # prose naming an option, not a command
                if "--params" in argv:
                    if not (ROOT / argv[argv.index("--params") + 1]).is_file():
                        continue  # a placeholder such as P or my.yaml
                    argv[argv.index("--params") + 1] = str(ROOT / argv[argv.index("--params") + 1])
                if "--backend" in argv or "--params" in argv:
                    found.append((f"{doc.name}:{n}", argv))
    return found


BLOCKS = llm_blocks()
COMMANDS = llm_commands()


def test_docs_have_blocks_and_commands():
    assert len(BLOCKS) >= 8 and len(COMMANDS) >= 2


@pytest.mark.parametrize("where, data", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_every_documented_llm_block_checks(where, data, tmp_path, capsys, documented_env):
    report = check_run_params(params_from_mapping(data))
    assert report is not None and report.model and report.endpoint.startswith(("https://", "http://"))
    assert report.request["body"]
    assert "***" in str(report.request.get("headers")) or "Authorization" not in report.request.get("headers", {})
    # and through the command line, exactly as a user would
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["llm", "check", "--params", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"model:       {report.model}" in out and "first request" in out


@pytest.mark.parametrize("where, argv", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_documented_llm_command_checks(where, argv, capsys, documented_env):
    args = build_parser().parse_args(argv)
    if argv[0] == "judge":
        from ehrlib.judge.cli import llm_settings

        settings = llm_settings(args)
        backend = settings.pop("backend")
        settings.setdefault("model", args.judge)
        report = check_llm(backend, settings)
        assert report.model == args.judge
        if report.preset == "azure" or report.model.startswith("gpt-5"):
            # GPT-5 refuses sampling settings and max_tokens
            body = report.request["body"]
            assert "temperature" not in body and "top_p" not in body and "max_completion_tokens" in body
            assert report.request["headers"].get("api-key") is None  # no key set here
    else:
        assert main(argv) == 0


@pytest.mark.parametrize("name, client, endpoint", [
    ("openai", "openai", None), ("vllm", "openai", "http://localhost:8000/v1"),
    ("ollama", "openai", "http://localhost:11434/v1"), ("sglang", "openai", "http://localhost:30000/v1"),
    ("llamacpp", "openai", "http://localhost:8080/v1"), ("llama.cpp", "openai", "http://localhost:8080/v1"),
    ("azure", "openai", None), ("gemini", "gemini", None), ("vertex", "gemini", None), ("vertexai", "gemini", None),
])
def test_backend_names_resolve(name, client, endpoint):
    preset_name, preset = resolve_backend(name)
    assert preset.client == client and preset_name in BACKENDS
    if endpoint:
        assert make_client(name, model="m").manifest()["endpoint"] == endpoint


def test_presets_defaults(monkeypatch):
    vllm = check_llm("vllm", {"model": "Qwen/Qwen3-32B"})
    assert (vllm.generation["temperature"], vllm.generation["top_p"], vllm.generation["max_tokens"]) == (0.5, 0.95,
                                                                                                         2048)
    assert vllm.safe_for_credentialed and vllm.structured_output.startswith("json_schema")
    llama = check_llm("llamacpp", {"model": "smol"})
    assert llama.request["body"]["response_format"]["type"] == "json_object"
    assert llama.request["body"]["response_format"]["schema"]["required"] == ["label"]
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com/")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "secret-azure")
    azure = check_llm("azure", {"model": "gpt-5"})
    assert azure.endpoint == "https://res.openai.azure.com/openai/v1"
    assert azure.request["headers"]["api-key"] == "***" and "secret" not in str(azure.request)
    assert azure.credentials == "API key from AZURE_OPENAI_API_KEY"
    body = azure.request["body"]
    assert body["max_completion_tokens"] == 16000 and "temperature" not in body and "max_tokens" not in body
    # an Azure host under the generic backend also reads the Azure key and uses the api-key header
    generic = check_llm("openai", {"model": "gpt-4.1", "base_url": "https://res.openai.azure.com/openai/v1"})
    assert generic.request["headers"]["api-key"] == "***" and generic.request["body"]["temperature"] == 0.5
    with pytest.raises(ConfigError, match="no API key"):
        check_llm("gemini", {})
    gem = check_llm("gemini", {"api_key": "k"})
    assert gem.model == "gemini-2.5-flash" and not gem.safe_for_credentialed and "settings" in gem.credentials
    with pytest.raises(ConfigError, match="no Google Cloud project"):
        check_llm("vertex", {"location": "europe-west4"})
    monkeypatch.setenv("CLOUDSDK_CONFIG", "/nonexistent")
    monkeypatch.setenv("HOME", "/nonexistent")
    with pytest.raises(ConfigError, match="no Google credentials"):
        check_llm("vertex", {"project": "p", "location": "europe-west4"})
    monkeypatch.setenv("GCE_METADATA_HOST", "metadata.google.internal")  # a Google Cloud VM's credentials
    vertex = check_llm("vertex", {"project": "p", "location": "europe-west4"})
    assert vertex.safe_for_credentialed and "europe-west4-aiplatform" in vertex.request["url"]
    assert vertex.request["body"]["config"]["response_json_schema"]["required"] == ["label"]


def test_unknown_backend_and_setting_are_one_line_errors(capsys):
    with pytest.raises(ConfigError, match="did you mean 'vllm'.*openai") as caught:
        resolve_backend("vlm")
    assert "scripted" not in str(caught.value)   # the test preset is accepted, never offered
    assert resolve_backend("scripted")[0] == "scripted"
    assert main(["llm", "check", "--backend", "vllm", "--model", "m", "--base-url", "ftp:"]) == 2
    assert "error:" in capsys.readouterr().err


def test_pipeline_registry_knows_every_preset():
    from ehrlib.pipeline.stages import BACKENDS as PIPELINE_BACKENDS

    assert set(BACKENDS) <= set(PIPELINE_BACKENDS)


def test_offline_params_make_no_llm_calls(capsys, tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("method: inspector\n", encoding="utf-8")
    assert main(["llm", "check", "--params", str(path)]) == 0
    assert "no LLM calls" in capsys.readouterr().out
