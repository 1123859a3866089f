"""Judge command-line options reach the LLM client; repeated passes give a mean ± std table."""
from __future__ import annotations

import json

import pandas as pd

from ehrlib.cli import build_parser, main
from ehrlib.judge.repeats import mean_std, mean_std_table
from ehrlib.llm.fakes import FakeOpenAIServer, openai_text


def test_judge_options_become_client_settings(tmp_path):
    from ehrlib.judge.cli import llm_settings

    args = build_parser().parse_args(["judge", "--run", "R", "--judge", "gpt-5", "--backend", "azure",
                                      "--max-tokens", "4000", "--structured-output", "json_object",
                                      "--timeout", "90", "--concurrency", "3", "--rpm", "60", "--tpm", "90000"])
    assert llm_settings(args) == {"backend": "azure", "max_tokens": 4000, "structured_output": "json_object",
                                  "timeout_s": 90.0, "max_concurrency": 3, "requests_per_minute": 60.0,
                                  "tokens_per_minute": 90000.0}
    p = tmp_path / "j.yaml"
    p.write_text("llm:\n  backend: vertex\n  model: gemini-2.5-pro\n  max_concurrency: 8\n")
    args = build_parser().parse_args(["judge", "--run", "R", "--params", str(p), "--timeout", "30"])
    assert llm_settings(args) == {"backend": "vertex", "max_concurrency": 8, "timeout_s": 30.0}
    assert args.judge == "gemini-2.5-pro"
    args = build_parser().parse_args(["judge", "--run", "R"])
    llm_settings(args)
    assert args.judge == "matcher"


def test_passes_need_a_model_judge(tiny_run, capsys):
    run, corpus = tiny_run
    assert main(["judge", "--run", str(run), "--passes", "2", "--no-progress"]) == 2
    assert "deterministic" in capsys.readouterr().err


def test_judge_passes_use_distinct_salts_and_print_mean_std(tiny_run, capsys, monkeypatch):
    run, corpus = tiny_run
    monkeypatch.delenv("EHRLIB_OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer() as srv:
        srv.add(*[openai_text("Result: correct")] * 40)  # a parsable verdict: unparsable ones are never cached
        argv = ["judge", "--run", str(run), "--judge", "tiny-judge", "--backend", "llamacpp",
                "--base-url", srv.url + "/v1", "--mode", "lenient", "--passes", "2", "--no-progress",
                "--max-tokens", "64"]
        assert main(argv) == 0
        first = srv.request_count
        assert first > 0 and first % 2 == 0  # the same calls in each pass
        assert all(r.body["max_tokens"] == 64 for r in srv.requests)
        out = capsys.readouterr().out
        assert "mean ± std over 2 passes" in out and "± 0.000" in out
        judges = json.loads((run / "judges.json").read_text())
        assert {"tiny-judge#1", "tiny-judge#2"} <= set(judges)
        assert judges["tiny-judge#2"]["llm_calls"]["succeeded"] == first // 2
        # a second identical command is answered by the per-pass caches
        assert main(argv) == 0 and srv.request_count == first


def test_mean_std_table():
    rows = pd.DataFrame({"mode": ["lenient"] * 3 + ["harsh"], "f1": [0.5, 0.7, 0.6, 0.4]})
    t = mean_std_table(rows, ["mode"], ["f1"])
    lenient = t[t["mode"] == "lenient"].iloc[0]
    assert lenient["f1"] == "0.600 ± 0.100" and lenient["n_repeats"] == 3
    assert t[t["mode"] == "harsh"].iloc[0]["f1"] == "0.400 ± 0.000"
    assert mean_std(pd.Series([None, "x"]))[2] == 0


def test_run_repeats_refused_offline(capsys):
    assert main(["run", "--repeats", "2", "--backend", "offline"]) == 2
    assert "deterministic" in capsys.readouterr().err
