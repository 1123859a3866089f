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
import socket
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
    "effective_source_kind",
    "manifest_source_kinds",
    "UNDECLARED_CORPUS",
    "IN_PROCESS_ENDPOINT",
    "undeclared_corpus_hint",
]

log = logging.getLogger(__name__)

OVERRIDE_ENV = "EHRLIB_I_ACCEPT_SENDING_CREDENTIALED_DATA_TO_PUBLIC_APIS"
SAFE_HOSTS_ENV = "EHRLIB_PHI_SAFE_HOSTS"
OPEN_SOURCE_KINDS = frozenset({"open-demo", "synthetic"})
#: the source kind of a corpus folder that states none (no manifest.json source_kind, no
#: import.json): its notes may be MIMIC text (the EHRCon reader writes no manifest), so it
#: counts as credentialed whatever database it runs against
UNDECLARED_CORPUS = "credentialed (corpus provenance not declared)"
#: the endpoint of the scripted test backend: its replies come from this process, nothing is sent
IN_PROCESS_ENDPOINT = "scripted://local"

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


#: addresses that do not leave this machine or its private network. Listed, not taken
#: from ``ipaddress.is_private``: that also covers Teredo (2001::/32, tunnelled over the
#: public internet) and other special-purpose ranges. IPv4-mapped IPv6 is judged by its
#: IPv4 address; 6to4, Teredo and NAT64 addresses are public.
_LOCAL_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
    "::1/128", "fc00::/7", "fe80::/10"))
_LOOPBACK_NETWORKS = tuple(ipaddress.ip_network(n) for n in ("127.0.0.0/8", "::1/128"))


def _in(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, networks) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == n.version and ip in n for n in networks)


def _resolve(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address ``host`` resolves to; [] when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    out = []
    for info in infos:
        try:
            out.append(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
        except ValueError:
            continue
    return out


def classify_endpoint(url: str, *, safe_hosts: Iterable[str] = ()) -> EndpointVerdict:
    """Classify an endpoint URL (scheme://host[:port]/path) for credentialed data.

    An address literal is judged by its network; ``localhost`` and ``*.localhost`` by
    what they resolve to (all loopback, or refused: a resolver may map any name
    anywhere); other names only by the known services and the user's list.
    """
    try:
        host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower().rstrip(".")
    except ValueError:
        return EndpointVerdict(url, "", False, "the endpoint URL cannot be parsed")
    if url == IN_PROCESS_ENDPOINT:
        return EndpointVerdict(url, "", True, "in-process scripted replies (nothing is sent)")
    listed = {h.strip().lower() for h in safe_hosts if h.strip()}
    listed |= {h.strip().lower() for h in os.environ.get(SAFE_HOSTS_ENV, "").split(",") if h.strip()}
    if not host:
        return EndpointVerdict(url, host, False, "the endpoint URL has no host")
    if host in listed or any(_host_matches(host, h.lstrip("*.")) for h in listed if h.startswith("*.")):
        return EndpointVerdict(url, host, True, "listed as safe in configuration")
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        ip = None
    if ip is not None:
        if _in(ip, _LOCAL_NETWORKS):
            return EndpointVerdict(url, host, True, "a loopback or private network address")
        return EndpointVerdict(url, host, False, "an unknown public endpoint (a public network address)")
    if host == "localhost" or host.endswith(".localhost"):
        addresses = _resolve(host)
        if addresses and all(_in(a, _LOOPBACK_NETWORKS) for a in addresses):
            return EndpointVerdict(url, host, True, "a server on this machine")
        return EndpointVerdict(url, host, False, "a localhost name that does not resolve to loopback only")
    for pattern, service in _SAFE_HOSTS:
        if pattern.fullmatch(host):
            return EndpointVerdict(url, host, True, service)
    if _host_matches(host, _DEVELOPER_API_HOST):
        return EndpointVerdict(url, host, False, "the Gemini Developer API (use Vertex AI for credentialed data)")
    return EndpointVerdict(url, host, False, "an unknown public endpoint")


def manifest_source_kinds(manifest: Mapping[str, object]) -> list[str]:
    """Every ``source_kind`` value in a (corpus) manifest, at any depth."""
    out: list[str] = []

    def walk(obj: object) -> None:
        if isinstance(obj, Mapping):
            for k, v in obj.items():
                if k == "source_kind":
                    out.append(str(v))
                walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    walk(manifest)
    return out


def effective_source_kind(*kinds: str | None) -> str:
    """One kind for data from several sources (database, corpus): credentialed if any
    source says anything but open data, or if none says anything (fail closed).
    """
    given = [k for k in kinds if k is not None]
    if not given or any(k not in OPEN_SOURCE_KINDS for k in given):
        return "credentialed"
    return given[0]


def undeclared_corpus_hint(corpus: object) -> str:
    """How to declare a corpus folder open data (one sentence for the PHI error)."""
    return (f"The corpus {corpus} declares no provenance, so it is treated as credentialed; if its notes "
            'are open data, write {"source_kind": "open-demo"} (or "synthetic") into its manifest.json.')


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
