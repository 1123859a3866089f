"""PHI-guard evasions: endpoint spellings and manifests that must not let credentialed
text reach a public endpoint. Every case is refused before any request; the count of
cases per category is printed."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import duckdb
import pytest

from ehrlib.errors import EhrlibError, PHIError
from ehrlib.llm import OVERRIDE_ENV, SAFE_HOSTS_ENV, check_phi
from ehrlib.llm.phi import effective_source_kind
from ehrlib.pipeline.params import load_params
from ehrlib.pipeline.records import Verdict
from ehrlib.pipeline.runner import run_experiment
from ehrlib.pipeline.stages import StageOutput, Stages, Timeline

COUNTS: dict[str, Counter] = {}

PUBLIC_ENDPOINTS = [
    # names that merely look local
    "http://evil.localhost/v1", "http://localhost.evil.com/v1", "http://localhost.localdomain.evil.com/",
    "http://127.0.0.1.nip.io/v1", "http://127.0.0.1.evil.com/", "http://localhost@evil.com/v1",
    "http://evil.com#@localhost/", "http://evil.com?.localhost/", "http://EVIL.LOCALHOST./v1",
    # look-alike safe services
    "https://aiplatform.googleapis.com.evil.com/", "https://evil-aiplatform.googleapis.com.example.com/",
    "https://openai.azure.com.attacker.net/v1", "https://x.openai.azure.com.evil.io/",
    "https://generativelanguage.googleapis.com/", "https://GenerativeLanguage.GoogleAPIs.com/",
    "https://api.openai.com/v1", "https://api.together.xyz/v1", "https://openrouter.ai/api/v1",
    # IPv6 transition and mapped forms of public addresses
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "http://[2001::1]/", "http://[2002:c0a8:101::1]/",
    "http://[2002:7f00:1::1]/", "http://[::ffff:8.8.8.8]/", "http://[64:ff9b::808:808]/",
    "http://[2606:4700:4700::1111]/", "http://[::ffff:100.64.0.1]/",
    # public and shared IPv4 forms
    "http://8.8.8.8:8000/v1", "http://100.64.0.1/", "http://0x08080808/", "http://134744072/",
    "http://8.8.8.8.xip.io/", "http://1.1.1.1/",
    # malformed
    "http://[::1/", "http:///v1", "", "not a url", "http://%6c%6f%63%61%6c%68%6f%73%74/",
]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(OVERRIDE_ENV, raising=False)
    monkeypatch.delenv(SAFE_HOSTS_ENV, raising=False)


def test_public_endpoints_are_refused(capsys):
    for url in PUBLIC_ENDPOINTS:
        for kind in ("credentialed", "Credentialed", "open_demo", "", "unknown"):
            with pytest.raises(PHIError):
                check_phi(kind, url)
            COUNTS.setdefault("endpoint spellings", Counter())["refused"] += 1
    # the same endpoints are fine for open data
    for url in PUBLIC_ENDPOINTS[:5]:
        assert check_phi("open-demo", url) is not None
    _report(capsys, "endpoint spellings")


def test_source_kinds_combine_failing_closed():
    assert effective_source_kind("synthetic", "credentialed") == "credentialed"
    assert effective_source_kind("credentialed", "open-demo") == "credentialed"
    assert effective_source_kind("open-demo", None) == "open-demo"
    assert effective_source_kind() == "credentialed" and effective_source_kind(None) == "credentialed"
    assert effective_source_kind("synthetic", "Synthetic") == "credentialed"      # unknown spelling


class _Probe:
    """A backend that would send note text to a public endpoint; it records any call."""

    calls: list[str] = []

    @staticmethod
    def stages(endpoint: str) -> Stages:
        def anchors(ctx, env, segments):
            _Probe.calls.append(ctx.note_id)
            return StageOutput(Timeline())

        def verify(ctx, env, entity, cache):
            _Probe.calls.append(ctx.note_id)
            return Verdict(entity.entity_id, "consistent")

        def extract(ctx, env, segment, timeline, known):
            _Probe.calls.append(ctx.note_id)
            return StageOutput(())

        return Stages("inspector", "probe", anchors, verify, patient_extractor=extract, endpoint=endpoint,
                      model="probe")


def _manifest_cases(synth_db, tmp_path):
    """(case, db path, corpus manifest or None)."""
    out = []
    for label, rows in (("dup-credentialed-then-synthetic", ["credentialed", "synthetic"]),
                        ("dup-synthetic-then-credentialed", ["synthetic", "credentialed"]),
                        ("dup-open-demo-twice", ["open-demo", "open-demo"]),
                        ("unknown-kind", ["research-only"]), ("missing-kind", []),
                        ("empty-kind", [""]), ("case-kind", ["SYNTHETIC"])):
        db = tmp_path / f"{label}.duckdb"
        shutil.copy(synth_db, db)
        with duckdb.connect(str(db)) as con:
            con.execute("DELETE FROM ehrlib_manifest WHERE key = 'source_kind'")
            for kind in rows:
                con.execute("INSERT INTO ehrlib_manifest VALUES ('source_kind', ?)", [kind])
        out.append((label, db, None))
    for label, manifest in (("corpus-credentialed", {"source_kind": "credentialed"}),
                            ("corpus-nested-credentialed", {"database": {"source_kind": "credentialed"}}),
                            ("corpus-unknown", {"source_kind": "mimic-iv-note"})):
        out.append((label, synth_db, json.dumps(manifest)))
    out.append(("corpus-duplicate-key", synth_db, '{"source_kind": "credentialed", "source_kind": "synthetic"}'))
    return out


def test_manifests_cannot_launder_credentialed_data(synth_db, tmp_path, capsys, monkeypatch):
    con = duckdb.connect(str(synth_db), read_only=True)
    sid, hadm, day = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS "
                                 "ORDER BY HADM_ID LIMIT 1").fetchone()
    con.close()
    for case, db, manifest in _manifest_cases(synth_db, tmp_path):
        corpus = tmp_path / f"corpus-{case}"
        corpus.mkdir()
        (corpus / "notes.jsonl").write_text(json.dumps({"note_id": "n1", "subject_id": sid, "hadm_id": hadm,
                                                        "note_type": "nursing", "chartdate": str(day),
                                                        "text": "HR 80"}) + "\n")
        if manifest is not None:
            (corpus / "manifest.json").write_text(manifest)
        params = load_params(None, corpus=str(corpus), db=str(db), backend="offline", run_id=f"phi-{case}",
                             runs_dir=str(tmp_path / "runs"), progress=False)
        _Probe.calls = []
        with pytest.raises(EhrlibError) as info:
            run_experiment(params, stages=_Probe.stages("https://api.openai.com/v1"))
        assert isinstance(info.value, PHIError) or "appears twice" in str(info.value), (case, info.value)
        assert _Probe.calls == [], case            # refused before any note was read
        COUNTS.setdefault("manifests", Counter())["refused"] += 1
    _report(capsys, "manifests")


def _report(capsys, category: str) -> None:
    with capsys.disabled():
        print(f"\n[hostile PHI] {category}: {sum(COUNTS[category].values())} cases, {dict(COUNTS[category])}")
