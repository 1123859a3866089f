"""PHI guard: credentialed data only to endpoints marked safe; open data anywhere."""
from __future__ import annotations

import pytest

from ehrlib.errors import PHIError
from ehrlib.llm import OVERRIDE_ENV, SAFE_HOSTS_ENV, check_phi, classify_endpoint, make_client

DEV_API = "https://generativelanguage.googleapis.com/"
VERTEX = "https://europe-west4-aiplatform.googleapis.com/"
AZURE = "https://my-resource.openai.azure.com/openai/v1"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (OVERRIDE_ENV, SAFE_HOSTS_ENV, "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY", "GEMINI_API_KEY",
                 "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)


def test_credentialed_to_developer_api_is_refused_with_reason() -> None:
    with pytest.raises(PHIError) as info:
        check_phi("credentialed", DEV_API)
    msg = str(info.value)
    assert "Gemini Developer API" in msg and "PhysioNet" in msg and OVERRIDE_ENV in msg


@pytest.mark.parametrize("url", [VERTEX, "https://aiplatform.googleapis.com/",
                                 "https://aiplatform.eu.rep.googleapis.com/", AZURE,
                                 "https://x.cognitiveservices.azure.com/", "http://localhost:8000/v1",
                                 "http://127.0.0.1:11434/v1", "http://10.1.2.3:30000/v1",
                                 "http://192.168.0.5:8000/v1", "http://[::1]:8000/v1"])
def test_credentialed_to_safe_endpoints_is_allowed(url: str) -> None:
    assert check_phi("credentialed", url).safe


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "https://api.together.xyz/v1",
                                 "http://8.8.8.8:8000/v1", "https://evil-aiplatform.googleapis.com.example.com/",
                                 "https://openai.azure.com.attacker.net/v1"])
def test_credentialed_to_unknown_public_endpoints_is_refused(url: str) -> None:
    with pytest.raises(PHIError, match="unknown public endpoint"):
        check_phi("credentialed", url)


@pytest.mark.parametrize("kind", ["open-demo", "synthetic"])
@pytest.mark.parametrize("url", [DEV_API, "https://api.openai.com/v1", VERTEX])
def test_open_data_is_allowed_anywhere(kind: str, url: str) -> None:
    check_phi(kind, url)


def test_unknown_source_kind_fails_closed() -> None:
    with pytest.raises(PHIError):
        check_phi("mystery", DEV_API)


def test_configured_safe_hosts_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_phi("credentialed", "https://gpu.hospital.org/v1", safe_hosts=["gpu.hospital.org"]).safe
    assert check_phi("credentialed", "https://a.b.hospital.org/v1", safe_hosts=["*.hospital.org"]).safe
    monkeypatch.setenv(SAFE_HOSTS_ENV, "vllm.internal.example")
    assert classify_endpoint("https://vllm.internal.example/v1").safe


def test_override_allows_with_warning(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(OVERRIDE_ENV, "1")
    verdict = check_phi("credentialed", DEV_API)
    assert not verdict.safe and OVERRIDE_ENV in caplog.text
    monkeypatch.setenv(OVERRIDE_ENV, "yes")  # only the exact value "1" counts
    with pytest.raises(PHIError):
        check_phi("credentialed", DEV_API)


def test_make_client_applies_guard_to_real_gemini_endpoints() -> None:
    from google.oauth2.credentials import Credentials

    with pytest.raises(PHIError, match="Developer API"):
        make_client("gemini", api_key="k", source_kind="credentialed")
    client = make_client("gemini", vertexai=True, project="p", location="us-central1",
                         credentials=Credentials(token="t"), source_kind="credentialed")
    assert client.manifest()["phi"]["reason"] == "Vertex AI"
    assert make_client("gemini", api_key="k", source_kind="open-demo").phi_verdict is not None
    with pytest.raises(PHIError):
        make_client("openai", model="gpt-5", base_url="https://api.openai.com/v1", source_kind="credentialed")
    assert make_client("vllm", model="Qwen/Qwen3-32B", source_kind="credentialed").phi_verdict.safe
