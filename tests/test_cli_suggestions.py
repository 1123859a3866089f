"""A mistyped name gets one line with the likely intended one: commands, choices, options,
run parameters from a params file; the test backend is accepted but never offered."""
from __future__ import annotations

import pytest

from ehrlib import cli
from ehrlib.errors import ConfigError, closest, suggestion, unknown_name
from ehrlib.pipeline.params import load_params


def test_closest_and_unknown_name_on_known_answers():
    assert closest("ofline", ["offline", "gemini"]) == "offline"
    assert closest("zzz", ["offline", "gemini"]) is None
    assert suggestion("ofline", ["offline"]) == "; did you mean 'offline'?" and suggestion("zzz", ["offline"]) == ""
    assert unknown_name("backend", "ofline", ["gemini", "offline"]) == (
        "unknown backend 'ofline'; did you mean 'offline'? backends: gemini, offline")
    assert unknown_name("layout", "x", ["mimic3"], listing="layouts") == "unknown layout 'x'; layouts: mimic3"


def _usage_error(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("argv", "wanted"), [
    (["rnu"], "invalid choice: 'rnu'; did you mean 'run'?"),
    (["run", "--method", "inspectr"], "did you mean 'inspector'?"),
    (["run", "--executor", "rya"], "did you mean 'ray'?"),
    (["run", "--extraction", "patient-only"], "did you mean 'patient_only'?"),
    (["notes", "improt"], "did you mean 'import'?"),
    (["synth", "tables", "x.duckdb", "--layout", "mimc4"], "did you mean 'mimic4'?"),
    (["run", "--backnd", "offline"], "unrecognized arguments: --backnd offline; did you mean '--backend'?"),
])
def test_a_mistyped_command_choice_or_option_is_one_line_with_a_suggestion(argv, wanted, capsys):
    err = _usage_error(argv, capsys)
    assert wanted in err and "--help`)" in err


def test_no_suggestion_when_nothing_is_close(capsys):
    err = _usage_error(["run", "--method", "zzzz"], capsys)
    assert "did you mean" not in err and "choose from inspector, checkehr, surface" in err


@pytest.mark.parametrize(("given", "wanted"), [
    ({"method": "inspectr"}, "did you mean 'inspector'?"),
    ({"executor": "rya"}, "did you mean 'ray'?"),
    ({"cache_scope": "segmnt"}, "did you mean 'segment'?"),
    ({"tools": "alignment,profilng"}, "did you mean 'profiling'?"),
])
def test_run_parameters_suggest_the_intended_value(given, wanted):
    with pytest.raises(ConfigError, match=wanted):
        load_params(None, **given)


def test_the_test_backend_is_accepted_but_never_offered(capsys):
    from ehrlib.pipeline.stages import unknown_backend_message

    assert "scripted" not in unknown_backend_message("scriptd")   # not even as the suggestion
    assert load_params(None, backend="scripted").backend == "scripted"
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    assert "scripted" not in capsys.readouterr().out


def test_build_db_flavor_and_download_dataset_suggest(tmp_path, capsys):
    assert cli.main(["build-db", str(tmp_path), str(tmp_path / "x.duckdb"), "--flavor", "mimc3"]) == 2
    assert "not 'mimc3'; did you mean 'mimic3'?" in capsys.readouterr().err
    assert cli.main(["download", "mimic-iii-dmo", str(tmp_path / "d")]) == 2
    assert "unknown dataset 'mimic-iii-dmo'; did you mean 'mimic-iii-demo'?" in capsys.readouterr().err
