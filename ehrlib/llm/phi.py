"""PHI guard: credentialed MIMIC text goes only to endpoints marked safe for it.

PhysioNet's Credentialed Health Data License and its guidance on using online
services with credentialed data forbid sending MIMIC text to services that may
retain it or use it for training. The paper ran Gemini through Vertex AI and GPT-5
through Azure OpenAI for that reason. The rule here: a database whose build
manifest says `source_kind == "credentialed"` may be sent only to Vertex AI, Azure
OpenAI, a server on this machine or a private network address, or a host the user
listed as safe. The Gemini Developer API and any other public host are refused,
unless the loudly named override variable is set. Anything not known to be open
data (open demo, synthetic) is treated as credentialed: the guard fails closed.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ehrlib.errors import PHIError

__all__ = [
    "OVERRIDE_ENV",
    "SAFE_HOSTS_ENV",
    "OPEN_SOURCE_KINDS",
    "EndpointVerdict",
    "classify_endpoint",
    "check_phi",
]

log = logging.getLogger(__name__)

OVERRIDE_ENV = "EHRLIB_I_ACCEPT_SENDING_CREDENTIALED_DATA_TO_PUBLIC_APIS"
SAFE_HOSTS_ENV = "EHRLIB_PHI_SAFE_HOSTS"
OPEN_SOURCE_KINDS = frozenset({"open-demo", "synthetic"})

# Hosts whose terms let credentialed data through (no retention for training, BAA
# available): Vertex AI (global, regional "{location}-aiplatform", multi-regional
# "aiplatform.{location}.rep"), and Azure OpenAI / Azure AI Foundry resources.
_SAFE_HOSTS = (
    (re.compile(r"(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com"), "Vertex AI"),
    (re.compile(r"aiplatform\.[a-z0-9-]+\.rep\.googleapis\.com"), "Vertex AI"),
    (re.compile(r"[a-z0-9-]+\.openai\.azure\.com"), "Azure OpenAI"),
    (re.compile(r"[a-z0-9-]+\.cognitiveservices\.azure\.com"), "Azure OpenAI"),
    (re.compile(r"[a-z0-9-]+\.services\.ai\.azure\.com"), "Azure AI Foundry"),
)
_DEVELOPER_API_HOST = "generativelanguage.googleapis.com"


@dataclass(frozen=True, slots=True)
class EndpointVerdict:
    """Whether a URL may receive credentialed data, and why."""

    url: str
    host: str
    safe: bool
    reason: str


def _host_matches(host: str, suffix: str) -> bool:
    return host == suffix or host.endswith("." + suffix)


def classify_endpoint(url: str, *, safe_hosts: Iterable[str] = ()) -> EndpointVerdict:
    """Classify an endpoint URL (scheme://host[:port]/path) for credentialed data."""
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower().rstrip(".")
    listed = {h.strip().lower() for h in safe_hosts if h.strip()}
    listed |= {h.strip().lower() for h in os.environ.get(SAFE_HOSTS_ENV, "").split(",") if h.strip()}
    if not host:
        return EndpointVerdict(url, host, False, "the endpoint URL has no host")
    if host in listed or any(_host_matches(host, h.lstrip("*.")) for h in listed if h.startswith("*.")):
        return EndpointVerdict(url, host, True, "listed as safe in configuration")
    if host == "localhost" or host.endswith(".localhost"):
        return EndpointVerdict(url, host, True, "a server on this machine")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None and (ip.is_loopback or ip.is_private or ip.is_link_local):
        return EndpointVerdict(url, host, True, "a loopback or private network address")
    for pattern, service in _SAFE_HOSTS:
        if pattern.fullmatch(host):
            return EndpointVerdict(url, host, True, service)
    if _host_matches(host, _DEVELOPER_API_HOST):
        return EndpointVerdict(url, host, False, "the Gemini Developer API (use Vertex AI for credentialed data)")
    return EndpointVerdict(url, host, False, "an unknown public endpoint")


def check_phi(
    source_kind: str,
    endpoint: str,
    *,
    safe_hosts: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> EndpointVerdict:
    """Refuse (PHIError) to send data of `source_kind` to `endpoint` unless allowed.

    `source_kind` comes from the database build manifest ("credentialed",
    "open-demo", "synthetic"). Returns the endpoint verdict when allowed.
    """
    env = os.environ if environ is None else environ
    verdict = classify_endpoint(endpoint, safe_hosts=safe_hosts)
    if source_kind in OPEN_SOURCE_KINDS or verdict.safe:
        return verdict
    if env.get(OVERRIDE_ENV) == "1":
        log.warning(
            "%s=1: sending %s data to %s (%s). You are responsible for PhysioNet license compliance.",
            OVERRIDE_ENV, source_kind, verdict.host, verdict.reason,
        )
        return verdict
    raise PHIError(
        f"refusing to send {source_kind!r} data to {verdict.host or endpoint} ({verdict.reason}). "
        "PhysioNet's credentialed-data license forbids sending MIMIC text to services that may "
        "retain it or use it for training. Use Vertex AI (GOOGLE_GENAI_USE_VERTEXAI=true), Azure "
        "OpenAI, or a local/private server; list a private host in llm.safe_hosts or "
        f"{SAFE_HOSTS_ENV}; or, if you are certain your agreement allows it, set {OVERRIDE_ENV}=1."
    )
